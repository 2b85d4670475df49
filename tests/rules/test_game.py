"""The game record: playing moves, endings decided by the server, outcomes and results."""

from __future__ import annotations

import pytest

from app.rules import Color, Game, GameOverError, Outcome, Result, Termination, get_variant


def test_a_game_records_moves_and_positions() -> None:
    game = Game("english")
    assert game.ply == 0 and game.outcome() is None
    move = game.play("11-15")
    assert str(move) == "11-15" and game.moves == [move] and game.ply == 1
    assert game.position.turn is Color.WHITE
    assert game.fen() == "W:W21,22,23,24,25,26,27,28,29,30,31,32:B1,2,3,4,5,6,7,8,9,10,12,15"
    assert len(game.legal_moves()) == 7
    assert game.start_fen == get_variant("english").starting_fen


def test_replay_rebuilds_a_game_from_move_texts() -> None:
    game = Game.replay("english", ["11-15", "23-19", "8-11", "22-17"])
    assert game.ply == 4 and game.position.turn is Color.BLACK


def test_server_endings_and_results() -> None:
    game = Game(get_variant("pool"))
    game.play("11-15")
    game.end(Outcome(Termination.RESIGNATION, winner=Color.WHITE))
    assert game.outcome() == Outcome(Termination.RESIGNATION, Color.WHITE)
    assert game.legal_moves() == []
    with pytest.raises(GameOverError) as refused:
        game.play("23-19")
    assert refused.value.code == "game_over" and "23-19" in str(refused.value)
    assert game.fen() in str(refused.value)
    with pytest.raises(GameOverError):
        game.end(Outcome(Termination.AGREEMENT))


def test_outcome_results_follow_pdn() -> None:
    assert Outcome(Termination.TIMEOUT, Color.BLACK).result() == "1-0"
    assert Outcome(Termination.NO_MOVES, Color.WHITE).result() == "0-1"
    assert Outcome(Termination.AGREEMENT).result() == "1/2-1/2"
    assert Outcome(Termination.ABORTED).result() == "*"


def test_results_are_the_pdn_texts() -> None:
    assert [r.value for r in Result] == ["1-0", "0-1", "1/2-1/2", "*"]
    assert Result.win_for(Color.WHITE) is Result.WHITE_WINS and Result.DRAW.winner is None
    assert Result("1-0").winner is Color.BLACK and Result.UNFINISHED.winner is None
    assert Result.parse("0-1") is Result.WHITE_WINS and Result.parse("2-0") is None


def test_termination_and_color_values_are_stable_strings() -> None:
    assert [t.value for t in Termination] == [
        "no_moves", "repetition", "move_limit", "kings_endgame", "resignation",
        "timeout", "agreement", "abandoned", "aborted", "admin",
    ]  # fmt: skip
    assert Color.BLACK.value == "black" and Color.BLACK.other is Color.WHITE


def test_irreversible_moves_clear_the_repetition_history() -> None:
    # Positions before a man move can never come back, so they are not kept.
    game = Game("english", "B:W32,K28:B1,K5")
    for text in ["5-9", "28-24", "9-5", "24-28"] * 2:
        game.play(text)
    game.play("1-6")
    for text in ["28-24", "5-9", "24-28", "9-5"] * 3:
        game.play(text)
    assert game.outcome() is None
    game.play("28-24")
    game.play("5-9")
    game.play("24-28")
    game.play("9-5")
    assert game.outcome() == Outcome(Termination.REPETITION)


@pytest.mark.parametrize(
    ("variant", "fen", "cycle", "termination"),
    [
        ("english", "B:W18:B14", ["14x23"], Termination.NO_MOVES),
        ("pool", "B:W18:B14", ["14x23"], Termination.NO_MOVES),
        ("english", "B:WK32:BK1", ["1-5", "32-28", "5-1", "28-32"] * 4, Termination.REPETITION),
        ("pool", "B:WK32:BK1", ["1-5", "32-28", "5-1", "28-32"] * 2, Termination.REPETITION),
    ],
)
def test_a_game_ended_by_the_rules_refuses_further_moves(
    variant: str, fen: str, cycle: list[str], termination: Termination
) -> None:
    game = Game(variant, fen)
    for text in cycle:
        game.play(text)
    outcome = game.outcome()
    assert outcome is not None and outcome.termination is termination
    assert game.legal_moves() == []
    with pytest.raises(GameOverError) as refused:
        game.play("5-9")
    assert "'5-9'" in str(refused.value) and game.fen() in str(refused.value)
    assert game.ply == len(cycle)


def test_a_game_set_up_from_fen_counts_from_zero_and_counts_its_start_position() -> None:
    game = Game("english", "B:WK32:BK1")
    assert game.quiet_plies == 0 and game.ply == 0
    for text in ["1-5", "32-28", "5-1", "28-32"] * 3 + ["1-5", "32-28", "5-1"]:
        game.play(text)
    assert game.outcome() is None
    game.play("28-32")  # the start position's fifth occurrence
    assert game.outcome() == Outcome(Termination.REPETITION)


def test_record_mode_plays_on_past_an_automatic_draw_and_notes_its_ply() -> None:
    """Games played under claim rules go on past fivefold repetition; only imports and replays
    ask for that (``automatic_draws=False``); live play keeps drawing at once."""
    shuttle = ["1-6", "32-28", "6-1", "28-32"] * 4
    live = Game("english", "B:WK32:BK1,K3,K10")
    for text in shuttle:
        live.play(text)
    assert live.outcome() == Outcome(Termination.REPETITION)
    assert live.passed_draw is None

    record = Game("english", "B:WK32:BK1,K3,K10", automatic_draws=False)
    for text in [*shuttle, "10-15", "32-28"]:
        record.play(text)
    assert record.outcome() is None and record.ply == 18
    assert record.passed_draw == (16, Termination.REPETITION)
