"""Fischer clocks kept as "time left when the turn began" plus the turn's start time.

Only the side to move has a running clock: its time left is computed from the moment its turn
began, so nothing ticks in memory and the same figures can be stored and reloaded. Clocks do
not run while no server is up: after downtime, `games.recover` moves the stored start of each
running turn later by the downtime (the time spent before it stays charged); a process joining a
cluster that kept running (a rolling restart) leaves the running turns alone.
"""

from __future__ import annotations

from dataclasses import dataclass

from pydantic import BaseModel, ConfigDict, Field

from app.rules import Color
from app.services.events import Clocks

MAX_CLOCK_BASE_S = 3 * 3600
MAX_CLOCK_INCREMENT_S = 180


class Clock(BaseModel):
    """A Fischer time control in seconds: what a room or a table plays with, as the admin API
    and the `open` message take it and the lobby shows it (both faces use this one)."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)

    base: int = Field(ge=1, le=MAX_CLOCK_BASE_S, description="Time each player starts with.")
    increment: int = Field(
        default=0, ge=0, le=MAX_CLOCK_INCREMENT_S, description="Added after each move."
    )


@dataclass(slots=True)
class GameClock:
    increment_ms: int
    black_ms: int
    white_ms: int
    turn_started: float  # Unix seconds at which the side to move's clock started
    # An arena player who went berserk gets no increment (`app.services.berserk`).
    black_berserk: bool = False
    white_berserk: bool = False

    def increment(self, colour: Color) -> int:
        berserk = self.black_berserk if colour is Color.BLACK else self.white_berserk
        return 0 if berserk else self.increment_ms

    def restarted(self, black_ms: int, white_ms: int, now: float) -> GameClock:
        """These times left, the side to move's turn starting `now`."""
        return GameClock(
            self.increment_ms, black_ms, white_ms, now, self.black_berserk, self.white_berserk
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
        """The clocks once `mover` has moved at `now`: time spent charged, increment added."""
        spent = self.left(mover, mover, now) + self.increment(mover)
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
