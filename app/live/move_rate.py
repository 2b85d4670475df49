"""Moves accepted by this process in about the last minute, counted where they are accepted.

Live play owns one `MoveRate` (`LivePlay.moves`) and calls `accepted` for every move it stores;
that also counts the move on the Prometheus counter `checkers_moves_accepted_total`, which is
only ever written here, never read back. `/api/admin/status` and the heartbeat (which shares the
figure with the other processes) ask `last_minute`.
"""

from __future__ import annotations

import functools
import time
from collections import deque
from collections.abc import Callable

from prometheus_client import Counter

from app.metrics import MOVES_ACCEPTED

MOVE_RATE_WINDOW_SECONDS = 60.0


@functools.cache
def _prometheus(variant: str) -> Counter:
    """The accepted-moves counter of a variant (looking labels up costs more than counting)."""
    return MOVES_ACCEPTED.labels(variant)


class MoveRate:
    """Accepted moves counted per second of a monotonic clock, the last `window` seconds kept.

    `last_minute()` covers the whole seconds that began within the last `window` seconds (less
    just after the counter was made), so it needs no sampling task.
    """

    def __init__(
        self,
        window: float = MOVE_RATE_WINDOW_SECONDS,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.window = window
        self._clock = clock
        self._started = clock()
        self._seconds: deque[list[int]] = deque()  # [second, moves accepted in it], oldest first

    def accepted(self, variant: str) -> None:
        """Count one move of `variant` stored by this process."""
        _prometheus(variant).inc()
        second = int(self._clock())
        if self._seconds and self._seconds[-1][0] == second:
            self._seconds[-1][1] += 1
            return
        self._seconds.append([second, 1])
        self._forget(second)

    def _forget(self, second: int) -> None:
        while self._seconds and self._seconds[0][0] <= second - self.window:
            self._seconds.popleft()

    def last_minute(self) -> tuple[int, float]:
        """(moves, the seconds over which they were counted)."""
        now = self._clock()
        self._forget(int(now))
        return sum(count for _, count in self._seconds), min(self.window, now - self._started)
