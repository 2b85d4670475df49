"""The hub: this process's connections, and the delivery of table events to them.

Table events are numbered where they are stored (`app.db.table_log`); the hub delivers them in
order to the connections that watch the table here, whichever way they arrive (from a use case
of this process, or rung on the broker by another). A number beyond the next one is a gap: the
hub reads the missed events from the log. It also compares its tables with the log's heads every
`SWEEP_SECONDS`, so a lost ring (a broker outage) costs a delay, never an event. The hub serves
the lobby channel (adding how many people watch each table here) and the `control` channel, and
closes the sockets of users banned meanwhile and of tokens revoked or expired meanwhile
(`app.services.sessions`).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import json
import logging
import weakref
from collections import deque
from collections.abc import Collection, Sequence
from typing import Any

from app.broker import SubscriberDropped
from app.clock import Timer
from app.db import table_log
from app.db.table_log import StoredEvent
from app.metrics import EVENT_LOG_READS, WS_CONNECTIONS
from app.realtime.connections import (
    CLOSE_NORMAL,
    CLOSE_POLICY,
    Connection,
    ConnectionState,
)
from app.realtime.lobby import LobbySnapshots
from app.services import attendance, games, pairing, presence, sessions, tables
from app.services.live import (
    CONTROL_CHANNEL,
    LOBBY_CHANNEL,
    LivePlay,
    PlayerRef,
    PlayError,
    TableInfo,
    dumps,
    table_channel,
)

logger = logging.getLogger(__name__)

EVENTS_KEPT = 200  # the last events of each table, for clients that resume
MAX_WATCHED_TABLES = 50
FEED_LINGER_SECONDS = 30.0  # keep a table's feed a while after its last watcher left
CATCH_UP_BATCH = 500  # events read from the log at a time
# An event that arrives ahead of one still missing is held this long for the missing one's ring
# before the log is read: the rings of two processes writing one table in turn (both players
# asking for a rematch at once, say) often cross, and the ring is cheaper than a query.
GAP_WAIT_SECONDS = 0.1
EPOCH = "log"  # names the numbering: every table's events are numbered by its log
SPECTATORS_EVERY_SECONDS = 1.0  # at most one spectator-count update per table to the lobby


class TableFeed:
    """One table as this process serves it: the number of its latest event delivered here, the
    last events (for clients that resume), and its watchers with the number each has had."""

    def __init__(self, table_id: int) -> None:
        self.table_id = table_id
        self.version = 0
        self.events: deque[StoredEvent] = deque(maxlen=EVENTS_KEPT)
        self.watchers: dict[Connection, int] = {}
        self.ready: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self.task: asyncio.Task[None] | None = None
        self.catching_up: asyncio.Task[None] | None = None
        # Events that arrived ahead of a missing one (by number, with whether they are foreign),
        # and the timer that reads the log if the missing one's ring does not come.
        self.early: dict[int, tuple[StoredEvent, bool]] = {}
        self.gap_timer: Timer | None = None
        self.linger: Timer | None = None
        # The table as the lobby last heard of it from here (None: not since the feed began),
        # whether it left the lobby, the spectator count the lobby was given, when, and a
        # pending update of that count.
        self.summary: dict[str, Any] | None = None
        self.unlisted = False
        self.spectators_shown = 0
        self.spectators_at = -SPECTATORS_EVERY_SECONDS
        self.spectators_timer: Timer | None = None


class Hub:
    """This process's connections and feeds; one per app, created by the lifespan."""

    def __init__(self, live: LivePlay, sweep_seconds: float) -> None:
        self.live = live
        self.sweep_seconds = sweep_seconds
        self.feeds: dict[int, TableFeed] = {}
        self.users: dict[int, set[Connection]] = {}
        self.lobby: set[Connection] = set()
        self.lobby_snapshots = LobbySnapshots(self._read_lobby)
        self.connections: set[Connection] = set()
        self.tokens: dict[str, set[Connection]] = {}  # by the token's hash
        self._tasks: list[asyncio.Task[None]] = []
        self._stopping = False
        # (user, table) whose attendance row this process holds open, and the locks that
        # serialise the notes of one user's watch of one table (see `attend`).
        self.attending: set[tuple[int, int]] = set()
        self._attendance_locks: weakref.WeakValueDictionary[tuple[int, int], asyncio.Lock] = (
            weakref.WeakValueDictionary()
        )
        live.count_spectators = self.count_spectators
        live.deliver = self.deliver
        live.connected_here = self.users.__contains__

    async def start(self) -> None:
        for channel, handler in (
            (LOBBY_CHANNEL, self._lobby_event),
            (CONTROL_CHANNEL, self._control_event),
        ):
            ready: asyncio.Future[None] = asyncio.get_running_loop().create_future()
            self._tasks.append(asyncio.create_task(self._follow(channel, handler, ready)))
            await ready
        self._tasks.append(asyncio.create_task(self._keep_up(), name="hub-keep-up"))

    async def stop(self) -> None:
        self._stopping = True
        for conn in tuple(self.connections):
            conn.close(CLOSE_NORMAL, "the server is shutting down")
        for feed in self.feeds.values():
            if feed.linger is not None:
                feed.linger.cancel()
            if feed.spectators_timer is not None:
                feed.spectators_timer.cancel()
        tasks = self._tasks + [
            t for f in self.feeds.values() for t in (f.task, f.catching_up) if t is not None
        ]
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task

    async def _follow(self, channel: str, handler: Any, ready: asyncio.Future[None]) -> None:
        while True:
            try:
                async with self.live.broker.subscribe(channel) as sub:
                    if not ready.done():
                        ready.set_result(None)
                    async for text in sub:
                        await handler(text)
                    return
            except SubscriberDropped:
                logger.warning("fell behind on %r; resubscribing", channel)

    async def _keep_up(self) -> None:
        """Every SWEEP_SECONDS: catch up the tables whose log went further than delivered here
        (a ring lost with the broker), and close the sockets of users banned meanwhile and
        those whose token was revoked or expired."""
        while True:
            await self.live.clock.sleep(self.sweep_seconds)
            try:
                await self._compare_heads()
                # Tokens first, bans second: a ban deletes its user's tokens in the transaction
                # that bans, so a token found gone here is either a logout or a ban that the
                # second query sees too; bans are told first, so a banned user reads why.
                lapsed = await sessions.lapsed(self.live.db, self.tokens) if self.tokens else {}
                banned = await presence.banned_here(self.live)
                for user_id, reason in banned:
                    self._banned(user_id, f"banned: {reason}" if reason else "banned")
                told = {user_id for user_id, _ in banned}
                for token_hash, why in lapsed.items():
                    self._lapsed(token_hash, why, told)
            except asyncio.CancelledError:
                raise
            except Exception:
                logger.warning("cannot compare with the database yet", exc_info=True)

    async def _compare_heads(self) -> None:
        if not self.feeds:
            return
        async with self.live.db.session() as session:
            heads = await table_log.heads(session, list(self.feeds))
        for table_id, head in heads.items():
            feed = self.feeds.get(table_id)
            if feed is not None and head > feed.version:
                # Behind the log: most often its last rings are on their way (a busy table's
                # always are, for a moment); read the log if they do not come in time.
                self.live.clock.call_later(
                    GAP_WAIT_SECONDS, functools.partial(self._still_behind, feed, head)
                )

    def _still_behind(self, feed: TableFeed, head: int) -> None:
        if feed.version < head and self.feeds.get(feed.table_id) is feed:
            self._catch_up(feed)

    # --- connections ---------------------------------------------------------------------

    async def connect(self, conn: Connection) -> list[dict[str, int]]:
        """Serve a new connection; returns the user's games in progress (it is back in them).
        (The connection caps, per user too, are the endpoint's: `app.realtime.limits`.)"""
        self.connections.add(conn)
        WS_CONNECTIONS.inc()
        if conn.token_hash is not None:
            self.tokens.setdefault(conn.token_hash, set()).add(conn)
        if conn.user is None:
            return []
        first = conn.user.id not in self.users
        self.users.setdefault(conn.user.id, set()).add(conn)
        if first:
            await presence.connected(self.live, conn.user)
        return await games.playing_for(self.live, conn.user.id)

    def present_users(self) -> list[PlayerRef]:
        """The users with a connection here."""
        users = []
        for conns in self.users.values():
            user = next(iter(conns)).user if conns else None
            if user is not None:
                users.append(user)
        return users

    async def disconnect(self, conn: Connection) -> None:
        await conn.finish()
        if conn not in self.connections:
            return
        self.connections.discard(conn)
        WS_CONNECTIONS.dec()
        self.lobby.discard(conn)
        # A stopping process's watches end with it: the sweep finds it gone.
        note = not (self._stopping or conn.moving)
        for table_id in tuple(conn.tables):
            self.unwatch(conn, table_id, note=note)
        if conn.token_hash is not None:
            same = self.tokens.get(conn.token_hash)
            if same is not None:
                same.discard(conn)
                if not same:
                    del self.tokens[conn.token_hash]
        user = conn.user
        if user is None:
            return
        mine = self.users.get(user.id)
        if mine is not None:
            mine.discard(conn)
            if mine:
                return
            del self.users[user.id]
        if self._stopping or conn.moving:
            return  # this process stops: the sweep sees it gone, and its users with it
        await presence.disconnected(self.live, user.id)
        await pairing.cancel(self.live, user.id)  # nobody is paired with an absent player

    # --- lobby ---------------------------------------------------------------------------

    async def subscribe_lobby(self, conn: Connection) -> None:
        self.lobby.add(conn)
        conn.lobby = True
        conn.send_text(await self.lobby_snapshots.get())

    async def _read_lobby(self) -> str:
        return dumps({"type": "lobby", "rooms": await tables.lobby(self.live)})

    def unsubscribe_lobby(self, conn: Connection) -> None:
        self.lobby.discard(conn)
        conn.lobby = False

    async def _lobby_event(self, text: str) -> None:
        if text.startswith('{"type":"lobby_table",'):
            text = self._with_spectators(text)
        elif text.startswith('{"type":"lobby_table_removed",'):
            feed = self.feeds.get(json.loads(text)["table"])
            if feed is not None:
                feed.summary, feed.unlisted = None, True
        self._to_lobby(text)

    def _to_lobby(self, text: str) -> None:
        self.lobby_snapshots.changed()
        for conn in tuple(self.lobby):
            conn.send_text(text)

    def _with_spectators(self, text: str) -> str:
        """A table's lobby update with the spectators counted here (it may come from another
        server process, which counts its own)."""
        event = json.loads(text)
        summary = event["table"]
        feed = self.feeds.get(summary["id"])
        count = 0
        if feed is not None:
            count = self._spectators(feed, {p["id"] for p in summary["players"]})
            feed.summary, feed.unlisted = summary, False
            feed.spectators_shown, feed.spectators_at = count, self.live.clock.monotonic()
        if summary.get("spectators") == count:
            return text
        summary["spectators"] = count
        return dumps(event)

    # --- spectators ----------------------------------------------------------------------

    @staticmethod
    def _spectators(feed: TableFeed, seated: set[int]) -> int:
        """People here following the table without a seat: each signed-in user once (however
        many tabs), each anonymous connection."""
        users: set[int] = set()
        anonymous = 0
        for conn in feed.watchers:
            if conn.user is None:
                anonymous += 1
            elif conn.user.id not in seated:
                users.add(conn.user.id)
        return len(users) + anonymous

    def count_spectators(self, table: TableInfo) -> int:
        feed = self.feeds.get(table.id)
        if feed is None:
            return 0
        return self._spectators(feed, {p.id for p in table.players})

    def _spectators_changed(self, feed: TableFeed) -> None:
        """Someone started or stopped watching: tell the lobby, at most once a second per
        table (a burst of watchers makes one update)."""
        if feed.spectators_timer is not None:
            return
        delay = feed.spectators_at + SPECTATORS_EVERY_SECONDS - self.live.clock.monotonic()
        if delay <= 0:
            self._announce_spectators(feed)
        else:
            feed.spectators_timer = self.live.clock.call_later(
                delay, functools.partial(self._announce_spectators, feed)
            )

    def _announce_spectators(self, feed: TableFeed) -> None:
        feed.spectators_timer = None
        if feed.unlisted or feed.summary is None:
            return
        summary = feed.summary
        count = self._spectators(feed, {p["id"] for p in summary["players"]})
        if count == feed.spectators_shown:
            return
        feed.spectators_shown, feed.spectators_at = count, self.live.clock.monotonic()
        summary = summary | {"spectators": count}
        # Counted by this process, so told to its own lobby subscribers only.
        self._to_lobby(dumps({"type": "lobby_table", "room": summary["room"], "table": summary}))

    # --- table events --------------------------------------------------------------------

    def deliver(self, events: Sequence[StoredEvent]) -> None:
        """Stored events, from this process's use cases (`LivePlay.announce`)."""
        for event in events:
            feed = self.feeds.get(event.table_id)
            if feed is not None and feed.ready.done():
                self._offer(feed, event)

    def _offer(self, feed: TableFeed, event: StoredEvent, *, foreign: bool = False) -> None:
        """Deliver the table's next event; ignore one already delivered; hold one that comes
        ahead of some missing, and read the log if they do not come within
        `GAP_WAIT_SECONDS`. `foreign`: stored by another process (rung on the broker or read
        from the log), so this process's copy of the game may need it too."""
        if event.seq <= feed.version:
            return
        if event.seq > feed.version + 1:
            feed.early[event.seq] = (event, foreign)
            if feed.gap_timer is None:
                feed.gap_timer = self.live.clock.call_later(
                    GAP_WAIT_SECONDS, functools.partial(self._gap_unfilled, feed)
                )
            return
        self._apply(feed, event, foreign)
        while feed.early:
            held = feed.early.pop(feed.version + 1, None)
            if held is None:
                break
            self._apply(feed, *held)
        if not feed.early and feed.gap_timer is not None:
            feed.gap_timer.cancel()
            feed.gap_timer = None

    def _gap_unfilled(self, feed: TableFeed) -> None:
        feed.gap_timer = None
        if feed.early:
            self._catch_up(feed)

    def _apply(self, feed: TableFeed, event: StoredEvent, foreign: bool) -> None:
        """Deliver the table's next event (numbered one after the last delivered)."""
        feed.early.pop(event.seq, None)
        feed.version = event.seq
        if foreign:
            games.follow(self.live, event)
        feed.events.append(event)
        frame = event.frame
        kept = tables.kept_from(event)  # a spectators' line kept from the players
        if kept is not None:
            frame, hidden = kept
        for conn, seen in tuple(feed.watchers.items()):
            if seen == event.seq - 1:
                if kept is None or conn.user is None or conn.user.id not in hidden:
                    conn.send_text(frame)
                else:
                    conn.send_text(tables.withheld_frame(event))
                feed.watchers[conn] = event.seq
            elif seen < event.seq - 1:  # it missed some: bring it up from the log
                del feed.watchers[conn]
                self.live.spawn(self._bring_up(conn, feed, seen))

    def _catch_up(self, feed: TableFeed) -> None:
        if feed.catching_up is None or feed.catching_up.done():
            feed.catching_up = asyncio.create_task(self._read_missed(feed))

    async def _read_missed(self, feed: TableFeed) -> None:
        try:
            while True:
                EVENT_LOG_READS.inc()
                async with self.live.db.session() as session:
                    missed = await table_log.since(
                        session, feed.table_id, feed.version, CATCH_UP_BATCH
                    )
                for event in missed:
                    self._offer(feed, event, foreign=True)
                if len(missed) < CATCH_UP_BATCH:
                    return
        except Exception:  # the next comparison of heads tries again
            logger.warning("cannot read table %d's events yet", feed.table_id, exc_info=True)

    async def _feed(self, table_id: int) -> TableFeed:
        feed = self.feeds.get(table_id)
        if feed is None:
            feed = TableFeed(table_id)
            self.feeds[table_id] = feed
            feed.task = asyncio.create_task(self._run_feed(feed), name=f"feed-{table_id}")
        await asyncio.shield(feed.ready)
        return feed

    async def _run_feed(self, feed: TableFeed) -> None:
        """Follow the table's ring on the broker, subscribed before its log's head is read so
        that nothing falls in between."""
        channel = table_channel(feed.table_id)
        while True:
            try:
                async with self.live.broker.subscribe(channel) as sub:
                    if not feed.ready.done():
                        try:
                            async with self.live.db.session() as session:
                                feed.version = await table_log.head(session, feed.table_id)
                        except Exception as exc:
                            feed.ready.set_exception(exc)
                            self._drop_feed(feed)
                            return
                        feed.ready.set_result(None)
                    else:
                        self._catch_up(feed)
                    async for frame in sub:
                        self._offer(feed, StoredEvent.of_frame(feed.table_id, frame), foreign=True)
                    return
            except SubscriberDropped:
                logger.warning("fell behind on table %d; catching up", feed.table_id)

    async def _bring_up(self, conn: Connection, feed: TableFeed, seen: int) -> None:
        """Send a connection the table's events after `seen` (kept here or read from the log),
        then let it follow the table with everyone."""
        while conn.state is ConnectionState.OPEN and feed.table_id in conn.tables:
            if seen >= feed.version:
                feed.watchers[conn] = seen  # no await since the comparison: nothing missed
                self._spectators_changed(feed)
                return
            kept = [e for e in feed.events if e.seq > seen]
            if not kept or kept[0].seq != seen + 1:
                async with self.live.db.session() as session:
                    kept = await table_log.since(session, feed.table_id, seen, CATCH_UP_BATCH)
            before = seen
            for event in kept:
                if event.seq == seen + 1:
                    conn.send_text(tables.frame_for(event, conn.user_id))
                    seen = event.seq
            if seen == before:  # the log has nothing newer (cannot be): follow from here
                feed.watchers[conn] = seen
                return

    async def watch(
        self,
        conn: Connection,
        table_id: int,
        since: int | None = None,
        epoch: str | None = None,
        invite: str | None = None,
    ) -> None:
        """Start sending a table's events: the ones missed since `since`, or a snapshot."""
        if table_id not in conn.tables and len(conn.tables) >= MAX_WATCHED_TABLES:
            raise PlayError(
                "rate_limited", f"a connection watches at most {MAX_WATCHED_TABLES} tables"
            )
        feed = await self._feed(table_id)
        self._leave_feed(conn, feed)
        try:
            if since is not None and epoch == EPOCH:
                missed = await tables.missed(self.live, table_id, since, conn.user_id, invite)
                if missed is not None:
                    seen = since
                    for event in missed:
                        conn.send_text(tables.frame_for(event, conn.user_id))
                        seen = event.seq
                    conn.tables.add(table_id)
                    self.attend(conn, table_id)
                    await self._bring_up(conn, feed, seen)
                    version = feed.watchers.get(conn, seen)
                    conn.send({"type": "synced", "table": table_id, "v": version, "epoch": EPOCH})
                    return
            snap = await tables.snapshot(self.live, table_id, conn.user_id, invite)
        except PlayError:
            # Refused: whatever was granted before ends too (no events, no chat there).
            if table_id in conn.tables:
                conn.tables.discard(table_id)
                self.attend(conn, table_id)
            if not feed.watchers:
                self._linger(feed)
            raise
        conn.tables.add(table_id)
        self.attend(conn, table_id)
        seated = {p["id"] for p in snap["table"]["players"]}
        snap["table"]["spectators"] = self._spectators(feed, seated) + (
            conn.user is None or conn.user.id not in seated
        )
        conn.send({"type": "table", "epoch": EPOCH} | snap)
        if feed.linger is not None:
            feed.linger.cancel()
            feed.linger = None
        await self._bring_up(conn, feed, snap["v"])

    def _leave_feed(self, conn: Connection, feed: TableFeed) -> None:
        if feed.watchers.pop(conn, None) is not None:
            self._spectators_changed(feed)

    def unwatch(self, conn: Connection, table_id: int, *, note: bool = True) -> None:
        watched = table_id in conn.tables
        conn.tables.discard(table_id)
        if watched and note:
            self.attend(conn, table_id)
        feed = self.feeds.get(table_id)
        if feed is not None:
            self._leave_feed(conn, feed)
            if not feed.watchers:
                self._linger(feed)

    def attend(self, conn: Connection, table_id: int) -> None:
        """Note in storage, in the background, whether the connection's user (if seated there)
        watches the table from this process now: their seat follows it (`attendance`)."""
        if conn.user is not None:
            self.live.spawn(self._note_attendance(conn.user.id, table_id))

    async def _note_attendance(self, user_id: int, table_id: int) -> None:
        key = (user_id, table_id)
        lock = self._attendance_locks.get(key)
        if lock is None:
            lock = self._attendance_locks[key] = asyncio.Lock()
        async with lock:  # the state noted is the one found under the lock: the latest wins
            watching = any(table_id in c.tables for c in self.users.get(user_id, ()))
            if not watching and key not in self.attending:
                return  # a spectator's watch, or one noted ended already: nothing to write
            try:
                if await attendance.note(self.live, table_id, user_id, watching):
                    self.attending.add(key)
                else:
                    self.attending.discard(key)
            except Exception:  # the seat then follows the last note (or the user's presence)
                logger.warning("cannot note who watches table %d", table_id, exc_info=True)

    def _linger(self, feed: TableFeed) -> None:
        if feed.linger is None:
            feed.linger = self.live.clock.call_later(
                FEED_LINGER_SECONDS, functools.partial(self._drop_feed, feed)
            )

    def _drop_feed(self, feed: TableFeed) -> None:
        feed.linger = None
        if feed.watchers:
            return
        if self.feeds.get(feed.table_id) is feed:
            del self.feeds[feed.table_id]
        if feed.spectators_timer is not None:
            feed.spectators_timer.cancel()
        if feed.gap_timer is not None:
            feed.gap_timer.cancel()
        for task in (feed.task, feed.catching_up):
            if task is not None and task is not asyncio.current_task():
                task.cancel()

    # --- administration ------------------------------------------------------------------

    def _banned(self, user_id: int, reason: str) -> None:
        for conn in tuple(self.users.get(user_id, ())):
            conn.error("unauthorized", reason)
            conn.close(CLOSE_POLICY, reason[:120])

    def _lapsed(self, token_hash: str, reason: str, told: Collection[int] = ()) -> None:
        """Close the sockets opened with a token that was revoked or expired (but those of the
        users in `told`, already closed with another reason)."""
        for conn in tuple(self.tokens.get(token_hash, ())):
            if conn.user_id in told:
                continue
            conn.error("unauthorized", reason)
            conn.close(CLOSE_POLICY, reason)

    async def _control_event(self, text: str) -> None:
        try:
            event = json.loads(text)
            kind = event["type"]
        except (ValueError, KeyError, TypeError):
            logger.warning("ignoring a malformed control event: %r", text[:200])
            return
        if kind == "kick":
            await self._kick(event)
        elif kind == "ban":
            self._banned(int(event["user_id"]), str(event.get("reason") or "banned"))
        elif kind == "logout":
            self._lapsed(str(event["token_hash"]), sessions.LOGGED_OUT)
        elif kind == "notify":  # `your_game`, challenges: to every connection of the user
            for conn in tuple(self.users.get(int(event["user_id"]), ())):
                conn.send(event["notice"])
        elif kind == "room_closed":
            room_id = int(event["room_id"])
            await self._lobby_event(dumps({"type": "room_closed", "room": room_id}))
        else:
            logger.warning("ignoring an unknown control event %r", kind)

    async def _kick(self, event: dict[str, Any]) -> None:
        """Send a user away from tables (`table_ids`, or one `table_id`), or (none given) from
        the server; they stand up there if no game is in progress."""
        user_id = int(event["user_id"])
        reason = str(event.get("reason") or "removed by an administrator")
        conns = tuple(self.users.get(user_id, ()))
        table_ids = event.get("table_ids")
        if table_ids is None and event.get("table_id") is not None:
            table_ids = [int(event["table_id"])]
        if table_ids is None:
            for conn in conns:
                conn.send({"type": "kicked", "table": None, "reason": reason})
                conn.close(CLOSE_POLICY, reason[:120])
            return
        for tid in table_ids:
            for conn in conns:
                if tid in conn.tables:
                    self.unwatch(conn, tid)
                    conn.send({"type": "kicked", "table": tid, "reason": reason})
            with contextlib.suppress(PlayError):  # not seated there, or stood up already
                await tables.leave(self.live, PlayerRef(user_id, ""), tid)
