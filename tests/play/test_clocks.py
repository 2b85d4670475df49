"""Fischer clock arithmetic: only the side to move's clock runs; the mover gets the increment."""

from __future__ import annotations

from app.play.clocks import GameClock
from app.rules import Color

BLACK, WHITE = Color.BLACK, Color.WHITE


def test_only_the_side_to_move_loses_time() -> None:
    clock = GameClock(increment_ms=0, black_ms=60_000, white_ms=50_000, turn_started=100.0)
    assert clock.left(BLACK, BLACK, 101.5) == 58_500
    assert clock.left(WHITE, BLACK, 101.5) == 50_000
    assert clock.payload(BLACK, 101.5) == {"black": 58_500, "white": 50_000}


def test_a_move_charges_the_time_spent_and_adds_the_increment() -> None:
    clock = GameClock(increment_ms=3_000, black_ms=60_000, white_ms=60_000, turn_started=100.0)
    after = clock.after_move(BLACK, 110.0)
    assert (after.black_ms, after.white_ms, after.turn_started) == (53_000, 60_000, 110.0)
    assert after.deadline(WHITE) == 170.0


def test_a_clock_past_zero_shows_zero() -> None:
    clock = GameClock(increment_ms=0, black_ms=1_000, white_ms=1_000, turn_started=100.0)
    assert clock.left(BLACK, BLACK, 102.0) == -1_000
    assert clock.payload(BLACK, 102.0)["black"] == 0
    assert clock.payload(None, 102.0) == {"black": 1_000, "white": 1_000}
