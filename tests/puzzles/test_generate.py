"""Puzzles found in games (app.puzzles, docs/puzzles.md): a shot is found with its one line and
its themes; a position with two winning moves is no puzzle; the endgame database settles the
endings; and the shipped puzzles are many enough, replay, and (a sample, searched again) each
have one clearly best move at every move of the solver."""

from __future__ import annotations

import random

import pytest

from app.analysis import chances
from app.engine import egdb_outcome
from app.puzzles import THEMES, VARIANTS, Puzzle, shipped
from app.puzzles import generate as found
from app.rules import Game, get_variant

ENGLISH = get_variant("english")
SHOT = "W:W19,23,30:B10,12,26"  # Gould's problem 51: 19-15 gives one man, takes two
TWO_WAYS = "W:W19,18,17:B15,22,23"  # 18x11 and 19x10 win a man alike


def test_a_shot_is_found_with_its_line_and_themes() -> None:
    scan = found.scan_game("english", [], SHOT, "Gould 51")
    assert len(scan.puzzles) == 1
    puzzle = scan.puzzles[0]
    assert puzzle.moves == ("19-15", "10x19", "23x16")
    assert puzzle.fen == ENGLISH.position(SHOT).fen()
    assert {"shot", "quiet_move", "win", "short", "endgame"} <= set(puzzle.themes)
    assert puzzle.source == "Gould 51, ply 0" and puzzle.last_move is None
    assert found.check(puzzle) is None


def test_a_position_with_two_winning_moves_is_no_puzzle() -> None:
    position = ENGLISH.position(TWO_WAYS)
    values = found.move_values(position, [], found.VERIFY_NODES)
    assert values[0][1] > 100 and values[1][1] > 100  # both win a man
    assert found.solve(position, [], found.balance(position, position.turn)) is None
    assert found.scan_game("english", [], TWO_WAYS, "two ways").puzzles == []


def test_a_puzzle_whose_move_is_not_the_only_good_one_fails_the_check() -> None:
    position = ENGLISH.position(TWO_WAYS)
    puzzle = Puzzle("english", position.fen(), ("18x11",), ("material",), 1500, "made up")
    assert "about as good" in (found.check(puzzle) or "")
    wrong = Puzzle("english", position.fen(), ("18-14",), ("material",), 1500, "made up")
    assert "not legal" in (found.check(wrong) or "")


def test_the_taking_back_of_a_piece_in_an_exchange_is_no_puzzle() -> None:
    # 17-14 offers a man, 10x17 takes it: White takes one back (21x14 or 19x10), level again.
    moves = ["11-15", "23-19", "8-11", "22-17", "9-13", "17-14", "10x17"]
    game = Game("english")
    for move in moves:
        game.play(move)
    position = game.position
    assert found.balance(position, position.turn) == -1
    assert not found.gains(position, ["21x14"], 0)  # back to the material before the exchange
    scan = found.scan_game("english", moves, None, "an exchange")
    assert all(p.source != "an exchange, ply 7" for p in scan.puzzles)


def test_the_endgame_database_settles_the_endings() -> None:
    assert egdb_outcome(ENGLISH.position("B:WK10,K19:BK6")) == 1  # 6x15x24
    assert egdb_outcome(ENGLISH.position("B:WK11:BK3,K4")) == 0
    assert egdb_outcome(get_variant("pool").position("B:WK10,K19:BK6")) is None
    assert egdb_outcome(ENGLISH.position(SHOT)) is None  # six pieces: more than it holds


def test_a_puzzle_record_reads_back_as_written() -> None:
    puzzle = found.scan_game("english", [], SHOT, "Gould 51").puzzles[0]
    again = Puzzle.from_record(puzzle.record())
    assert again == puzzle and again.key == puzzle.key and len(puzzle.key) == 16


# --- the shipped puzzles --------------------------------------------------------------------


@pytest.fixture(scope="module")
def puzzles() -> list[Puzzle]:
    return list(shipped())


def test_enough_puzzles_are_shipped_for_each_variant(puzzles: list[Puzzle]) -> None:
    counts = {variant: sum(p.variant == variant for p in puzzles) for variant in VARIANTS}
    assert counts["english"] >= 500 and counts["pool"] >= 100, counts
    assert len({p.key for p in puzzles}) == len(puzzles)
    for puzzle in puzzles:
        assert Puzzle.from_record(puzzle.record()).key == puzzle.key


def test_every_shipped_puzzle_replays_with_its_themes(puzzles: list[Puzzle]) -> None:
    for puzzle in puzzles:
        game = Game(puzzle.variant, puzzle.fen, automatic_draws=False)
        start = game.position
        assert len(start.legal_moves()) >= 2, puzzle.key  # a choice to make
        assert len(puzzle.moves) % 2 == 1, puzzle.key  # ends on the solver's move
        for move in puzzle.moves:
            game.play(move)
        assert set(puzzle.themes) <= set(THEMES), puzzle.key
        assert ("win" in puzzle.themes) != ("material" in puzzle.themes), puzzle.key
        if "win" in puzzle.themes:
            over = not game.position.has_legal_moves()
            assert over or egdb_outcome(game.position) == -1, puzzle.key
        else:
            gained = found.balance(game.position, start.turn) - found.balance(start, start.turn)
            assert gained >= 1 or puzzle.last_move is not None, puzzle.key
        if puzzle.before_fen is not None:
            before = Game(puzzle.variant, puzzle.before_fen, automatic_draws=False)
            assert puzzle.last_move is not None
            before.play(puzzle.last_move)
            assert before.position.fen() == puzzle.fen, puzzle.key


@pytest.mark.parametrize("variant", VARIANTS)
def test_a_sample_of_shipped_puzzles_each_have_one_clearly_best_line(
    puzzles: list[Puzzle], variant: str
) -> None:
    sample = random.Random(34).sample([p for p in puzzles if p.variant == variant], 4)
    for puzzle in sample:
        assert found.check(puzzle) is None, (puzzle.key, puzzle.fen, puzzle.moves)


def test_the_margin_is_the_analysis_blunder() -> None:
    # Any other move than the solution's would be labelled a blunder by the game analysis.
    assert found.MARGIN == chances.BLUNDER
