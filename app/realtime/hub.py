"""The hub: this process's connections, what each watches, and the control channel.

It subscribes to the events live play announces here and hands them to the tables' feeds
(`feeds`), which deliver them in order; it serves the lobby (`lobby`) and the `control`
channel (kicks, bans, log-outs, notices to a user), compares the feeds with the log every
sweep, and closes the sockets of users banned meanwhile and of tokens revoked or expired
meanwhile (`app.accounts.sessions`).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import weakref
from collections.abc import Callable, Collection, Mapping, Sequence
from typing import Any

from app.accounts import sessions
from app.broker import SubscriberDropped
from app.errors import Code
from app.live import events, messages
from app.live.liveplay import (
    CONTROL_CHANNEL,
    LOBBY_CHANNEL,
    LivePlay,
    PlayError,
    StoredEvent,
    dumps,
)
from app.metrics import WS_CONNECTIONS
from app.realtime.connections import (
    CLOSE_NORMAL,
    CLOSE_POLICY,
    Connection,
)
from app.realtime.feeds import Feeds
from app.realtime.lobby import Lobby
from app.realtime.tournament_followers import TournamentFollowers
from app.tables import attendance, presence
from app.tables import chat as table_chat
from app.tables import service as tables

logger = logging.getLogger(__name__)

MAX_WATCHED_TABLES = 50
# Pauses between tries of an attendance note that failed (a busy database): the last try is
# the one followed by None.
NOTE_RETRY_PAUSES = (0.2, 1.0, 3.0, None)
EPOCH = "log"  # names the numbering: every table's events are numbered by its log


class Hub:
    """This process's connections and feeds; one per app, created by the lifespan."""

    def __init__(self, live: LivePlay, sweep_seconds: float) -> None:
        self.live = live
        self.sweep_seconds = sweep_seconds
        self.feeds = Feeds(live, lambda feed: self.lobby.watchers_changed(feed))
        self.lobby = Lobby(live, self.feeds)
        self.tournaments = TournamentFollowers(live)
        self.users: dict[int, set[Connection]] = {}
        self.connections: set[Connection] = set()
        self.tokens: dict[str, set[Connection]] = {}  # by the token's hash
        self._tasks: list[asyncio.Task[None]] = []
        self._stopping = False
        # (user, table) whose attendance row this process holds open, and the locks that
        # serialise the notes of one user's watch of one table (see `attend`).
        self.attending: set[tuple[int, int]] = set()
        # (user, table) watched here since the last note that was stored: a watch whose note
        # failed, or ran only after the watch had ended, still has its end noted.
        self._unnoted: set[tuple[int, int]] = set()
        self._attendance_locks: weakref.WeakValueDictionary[tuple[int, int], asyncio.Lock] = (
            weakref.WeakValueDictionary()
        )
        self._unsubscribe: Callable[[], None] = lambda: None

    async def start(self) -> None:
        self._unsubscribe = self.live.subscribe(self)
        for channel, handler in (
            (LOBBY_CHANNEL, self.lobby.event),
            (CONTROL_CHANNEL, self._control_event),
        ):
            ready: asyncio.Future[None] = asyncio.get_running_loop().create_future()
            self._tasks.append(asyncio.create_task(self._follow(channel, handler, ready)))
            await ready
        self._tasks.append(asyncio.create_task(self._keep_up(), name="hub-keep-up"))

    async def stop(self) -> None:
        self._stopping = True
        self._unsubscribe()
        for conn in tuple(self.connections):
            conn.close(CLOSE_NORMAL, "the server is shutting down")
        tasks = self._tasks + self.feeds.stop() + self.tournaments.stop()
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

    def deliver(self, events: Sequence[StoredEvent]) -> None:
        """Events this process announced (`LivePlay.subscribe`), to the tables' feeds."""
        self.feeds.deliver(events)

    async def subscribe_lobby(self, conn: Connection) -> None:
        await self.lobby.subscribe(conn)

    def unsubscribe_lobby(self, conn: Connection) -> None:
        self.lobby.unsubscribe(conn)

    def spectators(self, table: Mapping[str, Any]) -> int:
        """The people watching a table here without a seat (`table` as clients see it)."""
        return self.lobby.spectators(table)

    async def _keep_up(self) -> None:
        """Every SWEEP_SECONDS: catch up the tables whose log went further than delivered here
        (a ring lost with the broker), and close the sockets of users banned meanwhile and
        those whose token was revoked or expired."""
        while True:
            await self.live.clock.sleep(self.sweep_seconds)
            try:
                await self.feeds.compare_heads()
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

    # --- connections ---------------------------------------------------------------------

    def connect(self, conn: Connection) -> bool:
        """Serve a new connection; whether it is its user's first here (the endpoint then tells
        presence). (The connection caps, per user too, are the endpoint's:
        `app.realtime.limits`.)"""
        self.connections.add(conn)
        WS_CONNECTIONS.inc()
        if conn.token_hash is not None:
            self.tokens.setdefault(conn.token_hash, set()).add(conn)
        if conn.user is not None:
            self.users.setdefault(conn.user.id, set()).add(conn)
        return self.live.enter(conn.user_id)

    async def disconnect(self, conn: Connection) -> bool:
        """Stop serving a connection; whether it was its user's last here and they are gone
        (the endpoint then tells presence): not when this process stops, nor when the
        connection moves to another process (the sweep finds them there)."""
        await conn.finish()
        if conn not in self.connections:
            return False
        self.connections.discard(conn)
        WS_CONNECTIONS.dec()
        self.lobby.unsubscribe(conn)
        self.tournaments.forget(conn)
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
        if user is not None:
            mine = self.users.get(user.id)
            if mine is not None:
                mine.discard(conn)
                if not mine:
                    del self.users[user.id]
        if not self.live.leave(conn.user_id):
            return False
        return not (self._stopping or conn.moving)

    # --- lobby ---------------------------------------------------------------------------

    # --- spectators ----------------------------------------------------------------------

    # --- table events --------------------------------------------------------------------

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
                Code.RATE_LIMITED, f"a connection watches at most {MAX_WATCHED_TABLES} tables"
            )
        feed = await self.feeds.feed(table_id)
        self.feeds.leave(conn, feed)
        try:
            if since is not None and epoch == EPOCH:
                missed = await tables.missed(self.live, table_id, since, conn.user_id, invite)
                if missed is not None:
                    seen = since
                    for event in missed:
                        conn.send_text(table_chat.frame_for(event, conn.user_id))
                        seen = event.seq
                    conn.tables.add(table_id)
                    self.attend(conn, table_id)
                    await self.feeds.bring_up(conn, feed, seen)
                    version = feed.watchers.get(conn, seen)
                    conn.send(messages.synced(table_id, version, EPOCH))
                    return
            snap = await tables.snapshot(self.live, table_id, conn.user_id, invite)
        except PlayError:
            # Refused: whatever was granted before ends too (no events, no chat there).
            if table_id in conn.tables:
                conn.tables.discard(table_id)
                self.attend(conn, table_id)
            if not feed.watchers:
                self.feeds.linger(feed)
            raise
        conn.tables.add(table_id)
        self.attend(conn, table_id)
        seated = {p["id"] for p in snap["table"]["players"]}
        snap["table"]["spectators"] = self.lobby.count(feed, seated) + (
            conn.user is None or conn.user.id not in seated
        )
        conn.send({"type": "table", "epoch": EPOCH} | snap)
        if feed.linger is not None:
            feed.linger.cancel()
            feed.linger = None
        await self.feeds.bring_up(conn, feed, snap["v"])

    def unwatch(self, conn: Connection, table_id: int, *, note: bool = True) -> None:
        watched = table_id in conn.tables
        conn.tables.discard(table_id)
        if watched and note:
            self.attend(conn, table_id)
        feed = self.feeds.get(table_id)
        if feed is not None:
            self.feeds.leave(conn, feed)
            if not feed.watchers:
                self.feeds.linger(feed)

    def attend(self, conn: Connection, table_id: int) -> None:
        """Note in storage, in the background, whether the connection's user (if seated there)
        watches the table from this process now: their seat follows it (`attendance`)."""
        if conn.user is not None:
            if table_id in conn.tables:
                self._unnoted.add((conn.user.id, table_id))
            self.live.spawn(self._note_attendance(conn.user.id, table_id))

    async def _note_attendance(self, user_id: int, table_id: int) -> None:
        key = (user_id, table_id)
        lock = self._attendance_locks.get(key)
        if lock is None:
            lock = self._attendance_locks[key] = asyncio.Lock()
        async with lock:  # the state noted is the one found under the lock: the latest wins
            for pause in NOTE_RETRY_PAUSES:
                watching = any(table_id in c.tables for c in self.users.get(user_id, ()))
                if not watching and key not in self.attending and key not in self._unnoted:
                    return  # a spectator's watch, or one noted ended already: nothing to write
                try:
                    if await attendance.note(self.live, table_id, user_id, watching):
                        self.attending.add(key)
                    else:
                        self.attending.discard(key)
                    self._unnoted.discard(key)
                    return
                except Exception:  # tried again; the seat follows the last note meanwhile
                    logger.warning("cannot note who watches table %d", table_id, exc_info=True)
                if pause is None or self._stopping:
                    return
                await asyncio.sleep(pause)

    # --- administration ------------------------------------------------------------------

    def _banned(self, user_id: int, reason: str) -> None:
        for conn in tuple(self.users.get(user_id, ())):
            conn.error(Code.UNAUTHORIZED, reason)
            conn.close(CLOSE_POLICY, reason[:120])

    def _lapsed(self, token_hash: str, reason: str, told: Collection[int] = ()) -> None:
        """Close the sockets opened with a token that was revoked or expired (but those of the
        users in `told`, already closed with another reason)."""
        for conn in tuple(self.tokens.get(token_hash, ())):
            if conn.user_id in told:
                continue
            conn.error(Code.UNAUTHORIZED, reason)
            conn.close(CLOSE_POLICY, reason)

    async def _control_event(self, text: str) -> None:
        try:
            event = events.decode(text)
            kind = event["type"]
        except (ValueError, KeyError, TypeError):
            logger.warning("ignoring a malformed control event: %r", text[:200])
            return
        if kind == "kick":
            self._kick(event)
        elif kind == "ban":
            self._banned(int(event["user_id"]), str(event.get("reason") or "banned"))
        elif kind == "logout":
            self._lapsed(str(event["token_hash"]), sessions.LOGGED_OUT)
        elif kind == "notify":  # `your_game`, challenges: to every connection of the user
            for conn in tuple(self.users.get(int(event["user_id"]), ())):
                conn.send(event["notice"])
        elif kind == "room_closed":
            room_id = int(event["room_id"])
            self.lobby.send(dumps(messages.room_closed(room_id)))
        else:
            logger.warning("ignoring an unknown control event %r", kind)

    def _kick(self, event: dict[str, Any]) -> None:
        """Send a user's connections here away from tables (`table_ids`, or one `table_id`),
        or (none given) from the server. (The administration, which kicks, gives up their seats
        there itself.)"""
        user_id = int(event["user_id"])
        reason = str(event.get("reason") or "removed by an administrator")
        conns = tuple(self.users.get(user_id, ()))
        table_ids = event.get("table_ids")
        if table_ids is None and event.get("table_id") is not None:
            table_ids = [int(event["table_id"])]
        if table_ids is None:
            for conn in conns:
                conn.send(messages.kicked(None, reason))
                conn.close(CLOSE_POLICY, reason[:120])
            return
        for tid in table_ids:
            for conn in conns:
                if tid in conn.tables:
                    self.unwatch(conn, tid)
                    conn.send(messages.kicked(tid, reason))
