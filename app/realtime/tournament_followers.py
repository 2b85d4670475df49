"""Tournament pages that follow a tournament live (`follow_tournament`): each hears
`{"type": "tournament", "id": N}` whenever the tournament changes (a player joins or withdraws,
it starts, a round or a wave is paired, a game ends, it finishes or is cancelled) and reads it
again (`GET /api/tournaments/{id}`), as lichess's tournament pages reload on its "reload".

Whichever process makes the change publishes on the tournament's broker channel
(`app.tournaments.service.channel`); this process subscribes to a tournament's channel while at
least one of its connections follows it, and forwards what comes to them.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging

from app.broker import SubscriberDropped
from app.errors import Code
from app.live.liveplay import LivePlay, PlayError
from app.realtime.connections import Connection
from app.tournaments.service import channel

logger = logging.getLogger(__name__)

MAX_FOLLOWED = 5
"""Tournaments one connection follows at once (a page follows one; a few tabs share none)."""


class TournamentFollowers:
    def __init__(self, live: LivePlay) -> None:
        self.live = live
        self.followers: dict[int, set[Connection]] = {}
        self.followed: dict[Connection, set[int]] = {}
        self._tasks: dict[int, asyncio.Task[None]] = {}

    async def follow(self, conn: Connection, tournament_id: int) -> None:
        """From now on `conn` hears of every change to the tournament (subscribed before this
        returns, so a read made after it misses nothing)."""
        mine = self.followed.setdefault(conn, set())
        if tournament_id in mine:
            return
        if len(mine) >= MAX_FOLLOWED:
            raise PlayError(
                Code.RATE_LIMITED, f"a connection follows at most {MAX_FOLLOWED} tournaments"
            )
        mine.add(tournament_id)
        self.followers.setdefault(tournament_id, set()).add(conn)
        if tournament_id not in self._tasks:
            ready: asyncio.Future[None] = asyncio.get_running_loop().create_future()
            self._tasks[tournament_id] = asyncio.create_task(
                self._listen(tournament_id, ready), name=f"tournament-{tournament_id}"
            )
            await ready

    def unfollow(self, conn: Connection, tournament_id: int) -> None:
        mine = self.followed.get(conn)
        if mine is not None:
            mine.discard(tournament_id)
            if not mine:
                del self.followed[conn]
        conns = self.followers.get(tournament_id)
        if conns is None:
            return
        conns.discard(conn)
        if not conns:
            del self.followers[tournament_id]
            task = self._tasks.pop(tournament_id, None)
            if task is not None:
                task.cancel()

    def forget(self, conn: Connection) -> None:
        """A connection that closed follows nothing any more."""
        for tournament_id in tuple(self.followed.get(conn, ())):
            self.unfollow(conn, tournament_id)

    def stop(self) -> list[asyncio.Task[None]]:
        tasks = list(self._tasks.values())
        for task in tasks:
            task.cancel()
        self._tasks.clear()
        return tasks

    async def _listen(self, tournament_id: int, ready: asyncio.Future[None]) -> None:
        try:
            while True:
                try:
                    async with self.live.broker.subscribe(channel(tournament_id)) as sub:
                        if not ready.done():
                            ready.set_result(None)
                        async for text in sub:
                            for conn in tuple(self.followers.get(tournament_id, ())):
                                conn.send_text(text)
                        return
                except SubscriberDropped:
                    logger.warning("fell behind on tournament %d; resubscribing", tournament_id)
        finally:
            if not ready.done():  # the broker failed before the subscription was made
                ready.set_result(None)
            with contextlib.suppress(KeyError):
                if self._tasks.get(tournament_id) is asyncio.current_task():
                    del self._tasks[tournament_id]
