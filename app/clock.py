"""The one source of time for live play: `Clock`, given to what keeps time.

Live play (move clocks, first-move deadlines, absences and claims), the sweep, seats, pairing,
challenges, heartbeats and the computer's thinking time read the time and wait through the
`Clock` of their `LivePlay` (`app.state.clock`), never through `time` or `asyncio` directly, so
that a test can move time on instead of waiting for it.

- `Clock`: real time (`time.time`, `time.monotonic`, the event loop's timers). Production uses it.
- `FakeClock`: real time plus an offset that `advance(seconds)` increases. Until a test advances
  it, it runs exactly like `Clock` (the sweep, heartbeats and pairing keep their real rhythm);
  an advance makes every timer, sleep and timeout that is now due fire at once, and moves the
  rest nearer. A test waits for a 30-second deadline by advancing 30 seconds, not by sleeping.
  Its timers may live on several event loops (a server in a thread of its own): each is fired
  on its own loop.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AbstractAsyncContextManager
from datetime import UTC, datetime
from typing import Any, Protocol, TypeVar

T = TypeVar("T")


class Timer(Protocol):
    """A callback scheduled by `Clock.call_later`."""

    def cancel(self) -> None: ...


class Clock:
    """Real time."""

    def time(self) -> float:
        """Unix seconds (wall time: what is stored and shown)."""
        return time.time()

    def monotonic(self) -> float:
        """Seconds that never go back (for intervals kept in memory)."""
        return time.monotonic()

    def now(self) -> datetime:
        """`time()` as an aware UTC datetime."""
        return datetime.fromtimestamp(self.time(), UTC)

    def call_later(self, delay: float, callback: Callable[[], object]) -> Timer:
        """Call `callback` in the running event loop `delay` seconds from now."""
        return asyncio.get_running_loop().call_later(delay, callback)

    async def sleep(self, seconds: float) -> None:
        await asyncio.sleep(seconds)

    def timeout(self, seconds: float | None) -> AbstractAsyncContextManager[Any]:
        """`asyncio.timeout`: the block is cancelled and TimeoutError raised after `seconds`."""
        return asyncio.timeout(seconds)

    async def wait_for(self, awaitable: Awaitable[T], seconds: float | None) -> T:
        """`asyncio.wait_for`: the awaitable's result, or TimeoutError after `seconds`."""
        async with self.timeout(seconds):
            return await awaitable


class _FakeTimer:
    """A timer of a `FakeClock`: due at a point of the clock's monotonic time, armed on its
    event loop for the real delay that remains until then."""

    def __init__(
        self, clock: FakeClock, due: float, callback: Callable[[], object], loop: Any
    ) -> None:
        self.clock = clock
        self.due = due
        self.callback = callback
        self.loop: asyncio.AbstractEventLoop = loop
        self._handle: asyncio.TimerHandle | None = None
        self.cancelled = False

    def arm(self) -> None:
        """(Re)schedule on its loop for what remains of the delay; runs in the loop's thread."""
        if self.cancelled:
            return
        if self._handle is not None:
            self._handle.cancel()
        delay = max(0.0, self.due - self.clock.monotonic())
        self._handle = self.loop.call_later(delay, self._fire)

    def _fire(self) -> None:
        if self.cancelled:
            return
        if self.due > self.clock.monotonic():  # the loop's clock ran ahead of ours: not yet
            self.arm()
            return
        self.cancelled = True
        self.clock._forget(self)
        self.callback()

    def cancel(self) -> None:
        self.cancelled = True
        self.clock._forget(self)
        if self._handle is not None:
            self._handle.cancel()


class FakeClock(Clock):
    """Real time that a test can move forward with `advance` (see the module's text)."""

    def __init__(self) -> None:
        self.offset = 0.0
        self._timers: set[_FakeTimer] = set()
        self._lock = threading.Lock()

    def time(self) -> float:
        return time.time() + self.offset

    def monotonic(self) -> float:
        return time.monotonic() + self.offset

    def call_later(self, delay: float, callback: Callable[[], object]) -> Timer:
        timer = _FakeTimer(self, self.monotonic() + delay, callback, asyncio.get_running_loop())
        with self._lock:
            self._timers.add(timer)
        timer.arm()
        return timer

    def _forget(self, timer: _FakeTimer) -> None:
        with self._lock:
            self._timers.discard(timer)

    def advance(self, seconds: float) -> None:
        """Move time on by `seconds`: what falls due meanwhile fires now (in the order it was
        due, each on its own event loop), the rest comes that much sooner."""
        if seconds < 0:
            raise ValueError("time does not go back")
        with self._lock:
            self.offset += seconds
            timers = sorted(self._timers, key=lambda timer: timer.due)
        for timer in timers:
            with contextlib.suppress(RuntimeError):  # its loop is closed: nothing to fire
                timer.loop.call_soon_threadsafe(timer.arm)

    def advance_past(self, moment: float) -> None:
        """Move time on to just after `moment`, Unix seconds (a deadline a server gave)."""
        self.advance(max(0.0, moment - self.time()) + 0.001)

    @property
    def pending(self) -> int:
        """How many timers wait (for tests of the clock itself)."""
        with self._lock:
            return len(self._timers)

    async def sleep(self, seconds: float) -> None:
        done = asyncio.get_running_loop().create_future()

        def wake() -> None:
            if not done.done():
                done.set_result(None)

        timer = self.call_later(seconds, wake)
        try:
            await done
        finally:
            timer.cancel()

    def timeout(self, seconds: float | None) -> AbstractAsyncContextManager[Any]:
        return self._timeout(seconds)

    @contextlib.asynccontextmanager
    async def _timeout(self, seconds: float | None) -> AsyncIterator[asyncio.Timeout]:
        # asyncio's own Timeout does the cancelling (and its careful bookkeeping); this clock
        # only says when, by moving its deadline to "now" once the fake time has come.
        async with asyncio.timeout(None) as scope:
            timer: Timer | None = None
            if seconds is not None:
                loop = asyncio.get_running_loop()

                def expire() -> None:
                    if not scope.expired():
                        scope.reschedule(loop.time())

                timer = self.call_later(seconds, expire)
            try:
                yield scope
            finally:
                if timer is not None:
                    timer.cancel()
