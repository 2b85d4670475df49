"""Records replayed as they were played (``app.rules.record``): what is read by choice."""

from __future__ import annotations

from app.rules import AmbiguousMoveError, Outcome, Termination
from app.rules.record import replay_record

TWO_PATHS = "B:W14,15,22,23,32:B1,10"  # 10x26 is 10x17x26 or 10x19x26
SHUTTLE = ["1-6", "32-28", "6-1", "28-32"] * 4  # the fifth repetition falls on ply 16


def test_a_short_capture_the_record_does_not_settle_stays_ambiguous() -> None:
    # 32-28 and 1-6 are legal after either path: the record says nothing more.
    replay = replay_record("english", ["10x26", "32-28", "1-6"], TWO_PATHS)
    assert isinstance(replay.error, AmbiguousMoveError) and replay.game.ply == 0


def test_a_short_capture_settled_by_a_later_move_is_read_with_a_warning() -> None:
    replay = replay_record("english", ["10x26", "32-28", "1-6", "22-18"], TWO_PATHS)
    assert replay.error is None
    assert [str(m) for m in replay.game.moves][0] == "10x19x26"
    (warning,) = replay.warnings
    assert warning.startswith("ply 1 '10x26'") and "(not 10x17x26)" in warning


def test_a_record_ending_on_the_draw_is_that_draw_and_one_going_on_is_noted() -> None:
    ended = replay_record("english", SHUTTLE, "B:WK32:BK1,K3,K10")
    assert ended.outcome() == Outcome(Termination.REPETITION)
    assert ended.past_draw is None and ended.warnings == []

    past = replay_record("english", [*SHUTTLE, "10-15"], "B:WK32:BK1,K3,K10")
    assert past.outcome() is None and past.past_draw == (16, Termination.REPETITION)
    (warning,) = past.warnings
    assert "repetition at ply 16" in warning and "to ply 17" in warning


def test_an_illegal_move_stops_the_replay_and_is_returned() -> None:
    replay = replay_record("english", ["11-15", "15-19"])
    assert replay.game.ply == 1 and replay.error is not None and replay.error.move == "15-19"
