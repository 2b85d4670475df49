"""A move another server checked is applied without generating the legal moves
(`Game.play_known`, what a server following a game played elsewhere uses): the same position,
record and draw counters as `Game.play`, and a path that does not fit is refused, not applied."""

from __future__ import annotations

import random

import pytest

from app.rules import Game, get_variant


def _same(known: Game, checked: Game) -> None:
    assert known.position == checked.position
    assert [str(m) for m in known.moves] == [str(m) for m in checked.moves]
    assert [m.captured for m in known.moves] == [m.captured for m in checked.moves]
    assert known.quiet_plies == checked.quiet_plies
    assert known._seen == checked._seen  # the repetition counts


@pytest.mark.parametrize("variant", ["english", "pool"])
@pytest.mark.parametrize("seed", range(12))
def test_known_moves_leave_the_game_as_checked_moves_do(variant: str, seed: int) -> None:
    rng = random.Random(seed)
    checked, known = Game(variant), Game(variant)
    while checked.outcome() is None and checked.ply < 300:
        text = rng.choice(checked.legal_move_texts())
        checked.play(text)
        assert known.play_known(text), (text, known.fen())
        _same(known, checked)
    # The end is left to the event that ends the game; draws are still counted.
    assert known.outcome() is None or known.outcome() == checked.outcome()


def test_a_flying_kings_capture_named_by_its_stops_is_read_off_the_board() -> None:
    """Pool: a king captures at a distance; the path lists its stops, the pieces taken lie
    between them."""
    fen = "W:WK28:B19,10"
    checked, known = Game("pool", start_fen=fen), Game("pool", start_fen=fen)
    text = checked.legal_move_texts()[0]
    assert "x" in text
    checked.play(text)
    assert known.play_known(text)
    _same(known, checked)
    assert known.position.count(get_variant("pool").position(fen).turn.other) == 0


@pytest.mark.parametrize(
    "text",
    [
        "13-17",  # no piece on its first square
        "22-18",  # the opponent's piece
        "8-12",  # onto a taken square
        "11x18",  # a capture with nothing to take
        "9x13",  # a plain step written as a capture
    ],
)
def test_a_path_that_does_not_fit_the_position_is_refused_and_changes_nothing(text: str) -> None:
    game = Game("english")
    before = game.fen()
    assert not game.play_known(text)
    assert game.fen() == before and game.ply == 0
