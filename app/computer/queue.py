"""The computer's searches wait for a search process here, served in turn per player.

A `ProcessPoolExecutor` queues its work first come, first served: a player with many games
against the computer, each answering its moves at once, keeps that queue full, and every other
player's search waits behind all of theirs (24 level-8 searches of a second each, with one
worker). `FairQueue` hands the pool at most `slots` searches at once (as many as it has
processes) and keeps the rest, one queue per player; a freed slot goes to the waiting player
served least recently, so a player waits for at most one search of each other player waiting.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections import OrderedDict, deque
from collections.abc import AsyncIterator

REMEMBERED = 1024  # players whose last turn is remembered (the least recent are forgotten)


class FairQueue:
    """At most `slots` holders at once; the others wait their turn, taken round the players."""

    def __init__(self, slots: int) -> None:
        self.slots = slots
        self.running = 0
        # Each waiting player's requests, first come first served within a player.
        self._waiting: dict[int, deque[asyncio.Future[None]]] = {}
        # Each player's last turn (a count of turns given), least recent first: the next turn
        # goes to a waiting player who never had one, else to the one whose last is the oldest.
        self._served: OrderedDict[int, int] = OrderedDict()
        self._turns = 0

    @property
    def waiting(self) -> int:
        return sum(len(queue) for queue in self._waiting.values())

    @contextlib.asynccontextmanager
    async def slot(self, player: int) -> AsyncIterator[None]:
        """Hold one of the slots (for one search of `player`'s) while the block runs."""
        await self._acquire(player)
        try:
            yield
        finally:
            self._release()

    async def _acquire(self, player: int) -> None:
        if self.running < self.slots and not self._waiting:
            self.running += 1
            self._note_turn(player)
            return
        turn = asyncio.get_running_loop().create_future()
        self._waiting.setdefault(player, deque()).append(turn)
        try:
            await turn
        except asyncio.CancelledError:
            if turn.done() and not turn.cancelled():  # given the slot as it was cancelled
                self._release()
            else:
                self._forget(player, turn)
            raise

    def _release(self) -> None:
        """Pass the slot on to the next player's first request, or free it."""
        while self._waiting:
            player = min(self._waiting, key=self._rank)
            queue = self._waiting[player]
            turn = queue.popleft()
            if not queue:
                del self._waiting[player]
            if not turn.done():
                self._note_turn(player)
                turn.set_result(None)  # the slot changes hands: `running` stays
                return
        self.running -= 1

    def _rank(self, player: int) -> int:
        """When the player last had a turn (-1: not remembered)."""
        return self._served.get(player, -1)

    def _note_turn(self, player: int) -> None:
        self._served.pop(player, None)
        self._served[player] = self._turns
        self._turns += 1
        if len(self._served) > REMEMBERED:
            self._served.popitem(last=False)

    def _forget(self, player: int, turn: asyncio.Future[None]) -> None:
        queue = self._waiting.get(player)
        if queue is None:
            return
        with contextlib.suppress(ValueError):
            queue.remove(turn)
        if not queue:
            del self._waiting[player]
