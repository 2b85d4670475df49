"""Fischer clocks kept as "time left when the turn began" plus the turn's start time.

Only the side to move has a running clock: its time left is computed from the moment its turn
began, so nothing ticks in memory and the same figures can be stored and reloaded. Clocks do
not run while no server is up: after downtime, `games.recover` moves the stored start of each
running turn later by the downtime (the time spent before it stays charged); a process joining a
cluster that kept running (a rolling restart) leaves the running turns alone.

Correspondence clocks (days per move, lichess's and lidraughts' choices) are stored as the same
two columns: a base of whole days and no increment. A live clock's base is at most three
hours, so a base of a day or more is a correspondence clock: each move resets the mover's
allowance to the full amount (it does not accumulate), and its first moves have a day.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, model_validator

from app.live.events import Clocks
from app.ratings.categories import CORRESPONDENCE_FROM_S
from app.rules import Color

MAX_CLOCK_BASE_S = 3 * 3600
MAX_CLOCK_INCREMENT_S = 180
DAY_S = CORRESPONDENCE_FROM_S  # a base of a day or more: a correspondence clock
Days = Literal[1, 2, 3, 5, 7, 10, 14]
CORRESPONDENCE_DAYS: tuple[int, ...] = get_args(Days)


def is_correspondence(base_s: int | None) -> bool:
    """Whether a stored clock's base is a correspondence clock's (days per move)."""
    return base_s is not None and base_s >= DAY_S


def days_of(base_s: int | None) -> int | None:
    """The days per move of a correspondence clock (None for any other)."""
    return base_s // DAY_S if is_correspondence(base_s) else None  # type: ignore[operator]


def first_move_allowance(default_s: float, base_s: int | None) -> float:
    """Seconds for a first move (each side's): a day under a correspondence clock, else the
    server's `first_move_seconds` (`default_s`)."""
    return float(DAY_S) if is_correspondence(base_s) else default_s


def per_move_ms(base_s: int | None) -> int:
    """A `GameClock`'s `per_move_ms` for a stored base: a correspondence clock's allowance."""
    return base_s * 1000 if base_s is not None and is_correspondence(base_s) else 0


def clock_payload(base_s: int | None, increment_s: int) -> dict[str, int] | None:
    """A stored clock as the API and the protocol show it (`days` for a correspondence one)."""
    if base_s is None:
        return None
    days = days_of(base_s)
    shown = {"base": base_s, "increment": increment_s}
    return shown if days is None else shown | {"days": days}


class Clock(BaseModel):
    """A time control, as the admin API and the `open` message take it and the lobby shows it
    (both faces use this one): a Fischer clock in seconds (`base`, `increment`), or a
    correspondence one (`days` per move; shown with its `base` in seconds and no increment)."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)

    base: int | None = Field(
        default=None,
        ge=1,
        description=f"Time each player starts with, 1-{MAX_CLOCK_BASE_S} s (omitted with `days`).",
    )
    increment: int = Field(
        default=0, ge=0, le=MAX_CLOCK_INCREMENT_S, description="Added after each move."
    )
    days: Days | None = Field(
        default=None,
        exclude_if=lambda days: days is None,  # a live clock shows base and increment only
        description="Correspondence: days per move (1, 2, 3, 5, 7, 10 or 14), the allowance "
        "reset to the full amount after each move.",
    )

    @model_validator(mode="after")
    def _one_kind(self) -> Clock:
        if self.days is None:
            if self.base is None:
                raise ValueError("a clock needs a base (seconds) or days per move")
            if self.base > MAX_CLOCK_BASE_S:
                raise ValueError(f"a clock's base is at most {MAX_CLOCK_BASE_S} s")
        elif self.increment or self.base not in (None, self.days * DAY_S):
            raise ValueError("a correspondence clock has days per move, no base or increment")
        return self

    def seconds(self) -> tuple[int, int]:
        """Base and increment as stored."""
        if self.days is not None:
            return self.days * DAY_S, 0
        assert self.base is not None
        return self.base, self.increment


@dataclass(slots=True)
class GameClock:
    increment_ms: int
    black_ms: int
    white_ms: int
    turn_started: float  # Unix seconds at which the side to move's clock started
    # An arena player who went berserk gets no increment (`app.services.berserk`).
    black_berserk: bool = False
    white_berserk: bool = False
    # A correspondence clock: each move resets the mover's time to this (0: Fischer).
    per_move_ms: int = 0

    def increment(self, colour: Color) -> int:
        berserk = self.black_berserk if colour is Color.BLACK else self.white_berserk
        return 0 if berserk else self.increment_ms

    def restarted(self, black_ms: int, white_ms: int, now: float) -> GameClock:
        """These times left, the side to move's turn starting `now`."""
        return GameClock(
            self.increment_ms,
            black_ms,
            white_ms,
            now,
            self.black_berserk,
            self.white_berserk,
            self.per_move_ms,
        )

    def stored(self, colour: Color) -> int:
        """Time left at the start of `colour`'s current or next turn."""
        return self.black_ms if colour is Color.BLACK else self.white_ms

    def left(self, colour: Color, turn: Color, now: float) -> int:
        """Time left for `colour` at `now`, given whose turn it is."""
        stored = self.stored(colour)
        if colour is not turn:
            return stored
        return stored - int((now - self.turn_started) * 1000)

    def deadline(self, turn: Color) -> float:
        """The Unix time at which the side to move runs out."""
        return self.turn_started + self.stored(turn) / 1000

    def after_move(self, mover: Color, now: float) -> GameClock:
        """The clocks once `mover` has moved at `now`: time spent charged, increment added (a
        correspondence clock: the mover's full allowance back)."""
        spent = self.per_move_ms or self.left(mover, mover, now) + self.increment(mover)
        black, white = (spent, self.white_ms) if mover is Color.BLACK else (self.black_ms, spent)
        return self.restarted(black, white, now)

    def payload(self, turn: Color | None, now: float) -> Clocks:
        """Both times left at `now` (the side to move's clock running unless `turn` is None)."""
        if turn is None:
            return {"black": max(0, self.black_ms), "white": max(0, self.white_ms)}
        return {
            "black": max(0, self.left(Color.BLACK, turn, now)),
            "white": max(0, self.left(Color.WHITE, turn, now)),
        }
