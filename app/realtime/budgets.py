"""A message budget per client address, shared by all its sockets.

Each socket has a limit of its own (`WS_MESSAGES_PER_SECOND`, excess answered `rate_limited`),
but one address may hold `WS_MAX_PER_IP` sockets and make several guests, so its sockets
together could ask far more of the server than any person does, and slow everybody's moves. So
an address also has a budget, `WS_MESSAGES_PER_SECOND_PER_IP` units a second with bursts of
twice as many, in which a message costs what it costs the server: a ping one unit, a message
answered with a snapshot or written to the database several (`WEIGHTS`).

The budget is applied as back-pressure, not refusal: once the address has spent it, each of its
sockets waits before handling its next message, in the order they asked. Its sockets are then
read no faster than the budget allows, and the rest of their messages wait in the network
buffers, so the flooding address is slowed and nobody else is. No socket is closed or refused
for it: people behind one NAT share the budget and are at worst slowed together.

The budgets are this process's, in memory, like the connection counts (`app.realtime.limits`).
"""

from __future__ import annotations

import asyncio
import time
from collections import Counter
from collections.abc import Mapping

from app.realtime import protocol as p
from app.realtime.connections import TokenBucket

# What a message costs in units, against a ping's 1: about a millisecond of the server's time
# each, measured under load (docs/benchmarks.md, "A flooding address"). A `watch` sends a
# snapshot read from the database and tells every watcher of the table; `subscribe_lobby` reads
# every open table (about 30 ms with 100 of them); chat and table changes are written to the
# database and sent to everyone at the table. Moves cost 1: they are what the players are here
# for, and one can only move on one's turn.
WEIGHTS: Mapping[type[p.Message], float] = {
    p.Watch: 5.0,
    p.SubscribeLobby: 30.0,
    p.Chat: 5.0,
    p.Open: 5.0,
    p.PlayAI: 5.0,
    p.Sit: 5.0,
    p.Leave: 5.0,
    p.Rematch: 5.0,
}
PRUNE_SECONDS = 60.0  # how often buckets of addresses without sockets are looked at


def cost(message: p.Message | None) -> float:
    """The units a message (None: one that could not be read) takes from the budget."""
    return WEIGHTS.get(type(message), 1.0) if message is not None else 1.0


class Budget:
    """One address's budget, as its sockets see it."""

    __slots__ = ("bucket",)

    def __init__(self, bucket: TokenBucket | None) -> None:
        self.bucket = bucket  # None: no budget (WS_MESSAGES_PER_SECOND_PER_IP=0)

    def reserve(self, units: float) -> float:
        """Take `units`; the seconds to wait first, while the address is over its budget."""
        return self.bucket.reserve(units) if self.bucket is not None else 0.0

    async def spend(self, units: float) -> None:
        """Take `units`, first waiting while the address is over its budget."""
        if (wait := self.reserve(units)) > 0:
            await asyncio.sleep(wait)


UNLIMITED = Budget(None)


class AddressBudgets:
    """The budgets of the addresses with sockets open here. An address's bucket outlives its
    last socket until it has filled up again, so that reconnecting does not refill it."""

    def __init__(self, per_second: float) -> None:
        self.per_second = per_second  # 0: no budget
        self._buckets: dict[str, TokenBucket] = {}
        self._sockets: Counter[str] = Counter()
        self._pruned = time.monotonic()

    def enter(self, host: str) -> Budget:
        """The budget of a new socket from `host`; `leave(host)` when it ends."""
        if not self.per_second:
            return UNLIMITED
        self._prune()
        self._sockets[host] += 1
        bucket = self._buckets.get(host)
        if bucket is None:
            bucket = self._buckets[host] = TokenBucket(self.per_second, 2 * self.per_second)
        return Budget(bucket)

    def leave(self, host: str) -> None:
        if not self.per_second:
            return
        self._sockets[host] -= 1
        if self._sockets[host] <= 0:
            del self._sockets[host]

    def _prune(self) -> None:
        """Forget the full buckets of addresses without sockets (once a PRUNE_SECONDS)."""
        now = time.monotonic()
        if now - self._pruned < PRUNE_SECONDS:
            return
        self._pruned = now
        for host in [h for h, b in self._buckets.items() if h not in self._sockets and b.full()]:
            del self._buckets[host]

    def __len__(self) -> int:
        return len(self._buckets)
