"""The computer's search queue: at most `slots` searches at once, the others taken in turn per
player (the one served least recently first), cancellation leaving nothing behind."""

from __future__ import annotations

import asyncio

import pytest

from app.computer.queue import FairQueue


class Searches:
    """Searches holding the queue's slots until the test ends them; the order they started."""

    def __init__(self, queue: FairQueue) -> None:
        self.queue = queue
        self.started: list[str] = []
        self._done: dict[str, asyncio.Event] = {}
        self.tasks: dict[str, asyncio.Task[None]] = {}

    async def _search(self, player: int, name: str) -> None:
        async with self.queue.slot(player):
            self.started.append(name)
            await self._done[name].wait()

    async def ask(self, player: int, name: str) -> None:
        self._done[name] = asyncio.Event()
        self.tasks[name] = asyncio.create_task(self._search(player, name))
        await asyncio.sleep(0)  # it has asked (and perhaps started)

    async def end(self, name: str) -> None:
        self._done[name].set()
        await self.tasks[name]
        await asyncio.sleep(0)  # the next one has started


async def test_one_players_many_searches_do_not_starve_the_others() -> None:
    searches = Searches(FairQueue(1))
    for name in ("a1", "a2", "a3"):
        await searches.ask(1, name)
    await searches.ask(2, "b1")
    await searches.ask(3, "c1")
    assert searches.started == ["a1"] and searches.queue.waiting == 4
    for name in ("a1", "b1", "c1", "a2"):
        await searches.end(name)
    # After a1: the players who have had no turn, in the order they asked, then player 1 again.
    assert searches.started == ["a1", "b1", "c1", "a2", "a3"]
    await searches.end("a3")
    assert searches.queue.running == 0 and searches.queue.waiting == 0


async def test_as_many_searches_as_slots_run_at_once() -> None:
    searches = Searches(FairQueue(2))
    for name in ("a1", "a2", "a3"):
        await searches.ask(1, name)
    assert searches.started == ["a1", "a2"] and searches.queue.running == 2
    await searches.end("a1")
    assert searches.started == ["a1", "a2", "a3"]
    await searches.end("a2")
    await searches.end("a3")
    assert searches.queue.running == 0


async def test_a_cancelled_search_gives_up_its_place_or_its_slot() -> None:
    searches = Searches(FairQueue(1))
    await searches.ask(1, "a1")
    await searches.ask(2, "b1")
    await searches.ask(3, "c1")
    searches.tasks["b1"].cancel()  # while it waits
    with pytest.raises(asyncio.CancelledError):
        await searches.tasks["b1"]
    await searches.end("a1")
    assert searches.started == ["a1", "c1"]
    searches.tasks["c1"].cancel()  # while it runs
    with pytest.raises(asyncio.CancelledError):
        await searches.tasks["c1"]
    assert searches.queue.running == 0 and searches.queue.waiting == 0
    await searches.ask(4, "d1")
    assert searches.started[-1] == "d1"
    await searches.end("d1")
