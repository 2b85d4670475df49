"""The lobby as this process serves it (`Lobby`): its subscribers, the lobby channel's updates
with the spectators counted here, and the snapshot a new subscriber gets (`LobbySnapshots`),
read from the database once for many.

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
import functools
import time
import weakref
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from app.live import events, messages
from app.live.liveplay import LivePlay, dumps
from app.realtime.connections import Connection
from app.realtime.feeds import SPECTATORS_EVERY_SECONDS, Feeds, TableFeed
from app.tables import service as tables

MAX_AGE_SECONDS = 1.0
"""How long a snapshot is served again while no lobby update comes: updates missed while the
broker is down (another process's tables) are old by at most this much more."""

SUBSCRIBE_TRIES = 4
"""Reads a new subscriber waits for at most, each undone by an update sent during it."""


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

    async def for_subscriber(self) -> str:
        """The snapshot for a subscriber that hears updates from now on: one sent while its
        snapshot is read reaches it first, and a snapshot read before that update would undo
        it on the page; so it waits for a read begun after the last update it was sent (a few
        tries: on a lobby that changes all the time, the next update puts it right)."""
        for _ in range(SUBSCRIBE_TRIES - 1):
            generation = self.generation
            text = await self.get()
            if self.generation == generation:
                return text
        return await self.get()

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


class Lobby:
    """The lobby as this process serves it: its subscribers, the snapshot they get, and the
    updates of the lobby channel with the spectators counted here (each process counts its
    own watchers; a figure it alone knows, never stored)."""

    def __init__(self, live: LivePlay, feeds: Feeds) -> None:
        self.live = live
        self.feeds = feeds
        self.subscribers: set[Connection] = set()
        self.snapshots = LobbySnapshots(self._read)
        # Per feed: who sat at its table when last counted, and the count its watchers were
        # last told (`spectators` notices); gone with the feed.
        self._seated: weakref.WeakKeyDictionary[TableFeed, set[int]] = weakref.WeakKeyDictionary()
        self._told: weakref.WeakKeyDictionary[TableFeed, int] = weakref.WeakKeyDictionary()

    async def subscribe(self, conn: Connection) -> None:
        self.subscribers.add(conn)
        conn.lobby = True
        conn.send_text(await self.snapshots.for_subscriber())

    async def _read(self) -> str:
        rooms = await tables.lobby(self.live)
        for room in rooms:
            for table in room["tables"]:
                table["spectators"] = self.spectators(table)
        return dumps(messages.lobby_snapshot(rooms))

    def unsubscribe(self, conn: Connection) -> None:
        self.subscribers.discard(conn)
        conn.lobby = False

    async def event(self, text: str) -> None:
        message = events.decode(text)
        kind = message.get("type")
        if kind == "lobby_table":
            text = self._with_spectators(text, message)
        elif kind == "lobby_table_removed":
            feed = self.feeds.get(message["table"])
            if feed is not None:
                feed.summary, feed.unlisted = None, True
        self.send(text)

    def send(self, text: str) -> None:
        self.snapshots.changed()
        for conn in tuple(self.subscribers):
            conn.send_text(text)

    def _with_spectators(self, text: str, event: dict[str, Any]) -> str:
        """A table's lobby update (`text`, read as `event`) with the spectators counted here
        (it may come from another server process, which counts its own)."""
        summary = event["table"]
        feed = self.feeds.get(summary["id"])
        count = 0
        if feed is not None:
            count = self.count(feed, {p["id"] for p in summary["players"]})
            feed.summary, feed.unlisted = summary, False
            feed.spectators_shown, feed.spectators_at = count, self.live.clock.monotonic()
        summary["spectators"] = count
        return dumps(event)

    def count(self, feed: TableFeed, seated: set[int]) -> int:
        """People here following the table without a seat: each signed-in user once (however
        many tabs), each anonymous connection."""
        self._seated[feed] = seated
        users: set[int] = set()
        anonymous = 0
        for conn in feed.watchers:
            if conn.user is None:
                anonymous += 1
            elif conn.user.id not in seated:
                users.add(conn.user.id)
        return len(users) + anonymous

    def spectators(self, table: Mapping[str, Any]) -> int:
        """The people watching a table here without a seat (`table` as clients see it)."""
        feed = self.feeds.get(table["id"])
        if feed is None:
            return 0
        return self.count(feed, {p["id"] for p in table["players"]})

    def watchers_changed(self, feed: TableFeed) -> None:
        """Someone started or stopped watching: tell the lobby and the table's watchers, at
        most once a second per table (a burst of watchers makes one update)."""
        if feed.spectators_timer is not None:
            return
        delay = feed.spectators_at + SPECTATORS_EVERY_SECONDS - self.live.clock.monotonic()
        if delay <= 0:
            self._announce_spectators(feed)
        else:
            feed.spectators_timer = self.live.clock.call_later(
                delay, functools.partial(self._announce_spectators, feed)
            )

    def _seated_now(self, feed: TableFeed) -> set[int] | None:
        """Who sits at the feed's table, as its latest table event delivered here shows it (or
        as last counted)."""
        for stored in reversed(feed.events):
            data = events.of(stored)
            if data["type"] == "table_update":
                return {p["id"] for p in data["state"]["players"]}
            if data["type"] == "game_started":
                return {p["id"] for p in data["table_state"]["players"]}
        return self._seated.get(feed)

    def _tell_watchers(self, feed: TableFeed) -> None:
        """Tell the table's watchers here that asked for it (`watch` with `spectators`) how
        many watch it without a seat, if that changed:
        `spectators`, a notice outside the table's numbered events (never stored: each process
        counts its own watchers)."""
        seated = self._seated_now(feed)
        if seated is None:
            return
        count = self.count(feed, seated)
        if self._told.get(feed) == count:
            return
        self._told[feed] = count
        text = dumps({"type": "spectators", "table": feed.table_id, "count": count})
        for conn in tuple(feed.watchers):
            if conn.counts:
                conn.send_text(text)

    def _announce_spectators(self, feed: TableFeed) -> None:
        feed.spectators_timer = None
        self._tell_watchers(feed)
        if feed.unlisted or feed.summary is None:
            return
        summary = feed.summary
        count = self.count(feed, {p["id"] for p in summary["players"]})
        if count == feed.spectators_shown:
            return
        feed.spectators_shown, feed.spectators_at = count, self.live.clock.monotonic()
        summary = summary | {"spectators": count}
        # Counted by this process, so told to its own lobby subscribers only.
        self.send(dumps(messages.lobby_table(summary["room"], summary)))
