"""The lobby snapshot a new subscriber gets, read from the database once for many.

A snapshot is one query, but a page load makes one, and a crowd arriving at once (a server
restart's reconnections, a link shared widely) would otherwise make one each and hold the
database pool's connections for them, crowding out moves. Subscribers share a read: one that
arrives while a read is on its way, or within ``MAX_AGE_SECONDS`` of one, gets that read's
text, **provided no lobby update was sent to this process's subscribers since the read
began**. A subscriber is added to the lobby before it asks for the snapshot, so it receives
every update sent after it; an update sent before it subscribed is in any read that began
after that update, and the condition keeps a read that began earlier from being used. So
sharing reads never makes a subscriber miss an update it would have seen with a read of its
own.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable

MAX_AGE_SECONDS = 1.0
"""How long a snapshot is served again while no lobby update comes: updates missed while the
broker is down (another process's tables) are old by at most this much more."""


class LobbySnapshots:
    def __init__(
        self, read: Callable[[], Awaitable[str]], max_age: float = MAX_AGE_SECONDS
    ) -> None:
        self._read = read
        self._max_age = max_age
        self.generation = 0
        """Counts the lobby updates sent to this process's subscribers."""
        self.reads = 0
        self._last: tuple[int, float, str] | None = None  # generation, when begun, text
        self._pending: tuple[int, asyncio.Task[str]] | None = None

    def changed(self) -> None:
        """A lobby update went out: reads begun before it no longer serve new subscribers."""
        self.generation += 1
        self._last = None

    async def get(self) -> str:
        """The snapshot for a subscriber added just now."""
        generation = self.generation
        last = self._last
        fresh = last is not None and time.monotonic() - last[1] < self._max_age
        if last is not None and fresh and last[0] == generation:
            return last[2]
        pending = self._pending
        if pending is None or pending[0] != generation or pending[1].done():
            task = asyncio.get_running_loop().create_task(self._read_once(generation))
            task.add_done_callback(_retrieve)  # a failed read nobody awaits any more: no warning
            pending = self._pending = (generation, task)
        # Shielded: one subscriber leaving does not cancel the read the others wait for.
        return await asyncio.shield(pending[1])

    async def _read_once(self, generation: int) -> str:
        begun = time.monotonic()
        self.reads += 1
        try:
            text = await self._read()
        finally:
            if self._pending is not None and self._pending[0] == generation:
                self._pending = None
        if self.generation == generation:
            self._last = (generation, begun, text)
        return text


def _retrieve(task: asyncio.Task[str]) -> None:
    if not task.cancelled():
        task.exception()
