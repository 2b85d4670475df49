"""The clock of live play: real time in production, real time that a test moves on in tests."""

from __future__ import annotations

import asyncio
import threading
import time

import pytest

from app.clock import Clock, FakeClock

# Long enough that nothing here could pass by waiting for it: only an advance makes it come.
HOUR = 3600.0


async def test_the_real_clock_reads_and_waits_in_real_time() -> None:
    clock = Clock()
    assert abs(clock.time() - time.time()) < 1
    assert abs(clock.now().timestamp() - time.time()) < 1
    fired = asyncio.Event()
    clock.call_later(0.01, fired.set)
    async with asyncio.timeout(5):
        await fired.wait()
    with pytest.raises(TimeoutError):
        async with clock.timeout(0.01):
            await asyncio.sleep(5)
    assert await clock.wait_for(asyncio.sleep(0, "done"), 5) == "done"


async def test_a_fake_clock_runs_in_real_time_until_advanced() -> None:
    clock = FakeClock()
    assert abs(clock.time() - time.time()) < 1
    fired = asyncio.Event()
    clock.call_later(0.01, fired.set)  # not advanced: it fires on its own, in real time
    async with asyncio.timeout(5):
        await fired.wait()
    assert clock.pending == 0


async def test_advancing_fires_what_fell_due_in_order_and_brings_the_rest_nearer() -> None:
    clock = FakeClock()
    fired: list[str] = []
    two, three = asyncio.Event(), asyncio.Event()

    def note(what: str) -> None:
        fired.append(what)
        if len(fired) >= 2:
            (two if len(fired) == 2 else three).set()

    clock.call_later(2 * HOUR, lambda: note("two hours"))
    clock.call_later(HOUR, lambda: note("one hour"))
    clock.call_later(3 * HOUR + 0.2, lambda: note("three hours and a moment"))
    before = clock.time()
    clock.advance(2 * HOUR)
    assert clock.time() - before >= 2 * HOUR
    async with asyncio.timeout(5):
        await two.wait()
    assert fired == ["one hour", "two hours"]
    clock.advance(HOUR)  # the last is now 0.2 s away, in real time
    async with asyncio.timeout(5):
        await three.wait()
    assert clock.pending == 0
    with pytest.raises(ValueError):
        clock.advance(-1)


async def test_a_cancelled_timer_never_fires() -> None:
    clock = FakeClock()
    fired: list[int] = []
    timer = clock.call_later(HOUR, lambda: fired.append(1))
    timer.cancel()
    clock.advance(2 * HOUR)
    await asyncio.sleep(0.05)
    assert fired == [] and clock.pending == 0


async def test_sleep_and_timeout_end_when_the_clock_is_advanced() -> None:
    clock = FakeClock()
    sleeper = asyncio.create_task(clock.sleep(HOUR))

    async def waits_an_hour_for_nothing() -> None:
        async with clock.timeout(HOUR):
            await asyncio.Event().wait()

    waiter = asyncio.create_task(waits_an_hour_for_nothing())
    late = asyncio.create_task(clock.wait_for(asyncio.Event().wait(), 3 * HOUR))
    await asyncio.sleep(0.05)
    assert not sleeper.done() and not waiter.done()
    clock.advance(HOUR)
    async with asyncio.timeout(5):
        await sleeper
        with pytest.raises(TimeoutError):
            await waiter
    assert not late.done()
    late.cancel()
    # A block that ends in time is not cancelled later, and leaves no timer behind.
    async with clock.timeout(HOUR):
        await asyncio.sleep(0)
    clock.advance(2 * HOUR)
    await asyncio.sleep(0.05)
    assert clock.pending == 0


def test_timers_fire_on_the_event_loop_that_set_them() -> None:
    """A server in a thread of its own (the browser tests') has its timers fired there."""
    clock = FakeClock()
    fired_in: list[str] = []
    armed = threading.Event()
    done = threading.Event()

    async def server() -> None:
        clock.call_later(
            HOUR, lambda: (fired_in.append(threading.current_thread().name), done.set())
        )
        armed.set()
        await asyncio.to_thread(done.wait, 5)

    thread = threading.Thread(target=asyncio.run, args=(server(),), name="server-loop")
    thread.start()
    assert armed.wait(5)
    clock.advance(HOUR)
    thread.join(5)
    assert fired_in == ["server-loop"]
