"""Websocket connections of this process and the fan-out of broker channels to them.

Each connection has a bounded send queue drained by its own writer task: a client that stops
reading is closed (1008) instead of being buffered without end. The hub subscribes to a table's
broker channel while someone here watches it, numbers the table's events (its version), keeps
the last ones for clients that reconnect, and forwards them; it also serves the lobby channel
(adding how many people watch each table here), acts on the `control` channel, and keeps a
player who went offline seated for the grace period.
"""

from __future__ import annotations

import asyncio
import contextlib
import enum
import json
import logging
import secrets
import time
import types
from collections import deque
from collections.abc import Coroutine, Generator
from dataclasses import dataclass, field
from typing import Any

from fastapi import WebSocket
from starlette.websockets import WebSocketState

from app.broker import SubscriberDropped
from app.metrics import WS_CONNECTIONS
from app.services import games, tables
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

SEND_QUEUE_FRAMES = 256
EVENTS_KEPT = 200
CHAT_PER_SECOND = 0.5
CHAT_BURST = 5.0
FLOOD_LIMIT = 200
MAX_WATCHED_TABLES = 50
CLOSE_WAIT_SECONDS = 2.0
FEED_LINGER_SECONDS = 120.0  # keep numbering a table's events for clients that come back
SPECTATORS_EVERY_SECONDS = 1.0  # at most one spectator-count update per table to the lobby

CLOSE_NORMAL = 1000
CLOSE_UNSUPPORTED = 1003
CLOSE_POLICY = 1008
CLOSE_TOO_BIG = 1009
CLOSE_SERVER_ERROR = 1011


class ConnectionState(enum.Enum):
    OPEN = "open"
    CLOSING = "closing"


@dataclass(slots=True)
class TokenBucket:
    """Allows `rate` actions per second with bursts of `burst`."""

    rate: float
    burst: float
    tokens: float = 0.0
    at: float = field(default_factory=time.monotonic)

    def __post_init__(self) -> None:
        self.tokens = self.burst

    def take(self) -> bool:
        now = time.monotonic()
        self.tokens = min(self.burst, self.tokens + (now - self.at) * self.rate)
        self.at = now
        if self.tokens < 1.0:
            return False
        self.tokens -= 1.0
        return True


@dataclass(frozen=True, slots=True)
class _Close:
    code: int
    reason: str


@dataclass(frozen=True, slots=True)
class _Suspended:
    """A send begun outside the writer task that had to wait for the socket: the coroutine and
    what it yielded (the future it waits on)."""

    send: Coroutine[Any, Any, None]
    waiting_on: Any


@types.coroutine
def _resume(suspended: _Suspended) -> Generator[Any, Any, None]:
    """Go on with a suspended send inside the awaiting task: what the send yields goes to the
    task, and what the task answers (a result, an exception, a cancellation) goes back to it,
    exactly as if the task had run it from the start."""
    send, waiting_on = suspended.send, suspended.waiting_on
    while True:
        try:
            answer = yield waiting_on
        except BaseException as exc:
            try:
                waiting_on = send.throw(exc)
            except StopIteration:
                return
        else:
            try:
                waiting_on = send.send(answer)
            except StopIteration:
                return


class Connection:
    """One client socket: who it is, what it watches, and its outgoing queue."""

    def __init__(
        self, websocket: WebSocket, user: PlayerRef | None, messages_per_second: float
    ) -> None:
        self.websocket = websocket
        self.user = user
        self.state = ConnectionState.OPEN
        self.tables: set[int] = set()
        self.lobby = False
        self.messages = TokenBucket(messages_per_second, 2 * messages_per_second)
        self.chats = TokenBucket(CHAT_PER_SECOND, CHAT_BURST)
        self.dropped = 0
        # The frames (the first may be a suspended send), and a close after them.
        self._queue: asyncio.Queue[str | _Suspended | _Close] = asyncio.Queue(SEND_QUEUE_FRAMES + 1)
        self._busy = False  # the writer task is sending a frame
        self._writer: asyncio.Task[None] | None = None

    @property
    def user_id(self) -> int | None:
        return self.user.id if self.user is not None else None

    def start(self) -> None:
        self._writer = asyncio.create_task(self._write(), name="ws-writer")

    def send_text(self, text: str) -> None:
        """Send a frame, or queue it behind those still waiting for the socket; a client that
        lets SEND_QUEUE_FRAMES pile up is closed."""
        if self.state is not ConnectionState.OPEN:
            return
        if not self._busy and self._queue.empty():
            self._send_now(text)
            return
        if self._queue.qsize() >= SEND_QUEUE_FRAMES:
            while not self._queue.empty():
                self._queue.get_nowait()
            self.close(CLOSE_POLICY, "too many unread messages")
            return
        self._queue.put_nowait(text)

    def send(self, payload: dict[str, Any]) -> None:
        self.send_text(dumps(payload))

    def error(self, code: str, message: str, ref: str | int | None = None) -> None:
        payload: dict[str, Any] = {"type": "error", "code": code, "message": message}
        if ref is not None:
            payload["ref"] = ref
        self.send(payload)

    def close(self, code: int, reason: str) -> None:
        """Close after the frames already queued."""
        if self.state is ConnectionState.OPEN:
            self.state = ConnectionState.CLOSING
            self._queue.put_nowait(_Close(code, reason))

    async def finish(self) -> None:
        """Stop the writer once the reader is done, letting a requested close go out first."""
        closing = self.state is ConnectionState.CLOSING
        self.state = ConnectionState.CLOSING
        if self._writer is not None:
            if closing:
                await asyncio.wait({self._writer}, timeout=CLOSE_WAIT_SECONDS)
            self._writer.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._writer

    def _send_now(self, text: str) -> None:
        """Write the frame in the caller's turn of the event loop, without a hop through the
        writer task: sending completes at once unless the socket's buffer is full (the client
        reads slowly). Only then does the writer task finish it, and later frames queue."""
        send = self.websocket.send_text(text)
        try:
            waiting_on = send.send(None)
        except StopIteration:
            return
        except Exception:  # the peer went away; the reader sees the disconnect
            logger.debug("websocket send failed", exc_info=True)
            return
        self._queue.put_nowait(_Suspended(send, waiting_on))

    async def _write(self) -> None:
        ws = self.websocket
        try:
            while True:
                item = await self._queue.get()
                self._busy = True
                if isinstance(item, _Close):
                    if ws.application_state is WebSocketState.CONNECTED:
                        await ws.close(item.code, item.reason)
                    return
                if isinstance(item, _Suspended):
                    await _resume(item)
                else:
                    await ws.send_text(item)
                self._busy = False
        except Exception:  # the peer went away mid-send; the reader sees the disconnect
            logger.debug("websocket send failed", exc_info=True)


class TableFeed:
    """One table's broker channel as this process serves it: version, recent events, watchers."""

    def __init__(self, table_id: int, epoch: str) -> None:
        self.table_id = table_id
        self.epoch = epoch  # names this numbering: a feed created anew starts another
        self.version = 0
        self.events: deque[tuple[int, str]] = deque(maxlen=EVENTS_KEPT)
        self.watchers: set[Connection] = set()
        self.ready: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self.task: asyncio.Task[None] | None = None
        self.linger: asyncio.TimerHandle | None = None
        # The table as the lobby last heard of it from here (None: not since the feed began),
        # whether it left the lobby, the spectator count the lobby was given, when, and a
        # pending update of that count.
        self.summary: dict[str, Any] | None = None
        self.unlisted = False
        self.spectators_shown = 0
        self.spectators_at = -SPECTATORS_EVERY_SECONDS
        self.spectators_timer: asyncio.TimerHandle | None = None

    def missed(self, since: int) -> list[str] | None:
        """The events after version `since`, or None if they are not all kept."""
        if since > self.version:
            return None
        if since == self.version:
            return []
        if not self.events or self.events[0][0] > since + 1:
            return None
        return [text for v, text in self.events if v > since]


class Hub:
    """This process's connections and feeds; one per app, created by the lifespan."""

    def __init__(self, live: LivePlay) -> None:
        self.live = live
        self.epoch = secrets.token_hex(4)
        self._feeds_made = 0
        self.feeds: dict[int, TableFeed] = {}
        self.users: dict[int, set[Connection]] = {}
        self.lobby: set[Connection] = set()
        self.connections: set[Connection] = set()
        self._tasks: list[asyncio.Task[None]] = []
        # Users who went offline, seated still, until the grace period ends or they come back.
        self._unseating: dict[int, tuple[PlayerRef, asyncio.TimerHandle]] = {}
        self._stopping = False
        live.count_spectators = self.count_spectators

    async def start(self) -> None:
        for channel, handler in (
            (LOBBY_CHANNEL, self._lobby_event),
            (CONTROL_CHANNEL, self._control_event),
        ):
            ready: asyncio.Future[None] = asyncio.get_running_loop().create_future()
            self._tasks.append(asyncio.create_task(self._follow(channel, handler, ready)))
            await ready

    async def stop(self) -> None:
        self._stopping = True
        for conn in tuple(self.connections):
            conn.close(CLOSE_NORMAL, "the server is shutting down")
        for feed in self.feeds.values():
            if feed.linger is not None:
                feed.linger.cancel()
            if feed.spectators_timer is not None:
                feed.spectators_timer.cancel()
        # Nobody will be here to wait for them: seats kept for absent players go now.
        pending, self._unseating = self._unseating, {}
        for user, timer in pending.values():
            timer.cancel()
            await self._unseat(user)
        tasks = self._tasks + [f.task for f in self.feeds.values() if f.task is not None]
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

    # --- connections ---------------------------------------------------------------------

    async def connect(self, conn: Connection) -> list[dict[str, int]]:
        """Serve a new connection; returns the user's games in progress (it is back in them)."""
        conn.start()
        self.connections.add(conn)
        WS_CONNECTIONS.inc()
        if conn.user is None:
            return []
        first = conn.user.id not in self.users
        self.users.setdefault(conn.user.id, set()).add(conn)
        playing = await games.playing_for(self.live, conn.user.id)
        if first:
            self._keep_seats(conn.user.id)
            # The user may have gone offline from another server process: tell it too.
            await self.live.publish(CONTROL_CHANNEL, {"type": "back", "user_id": conn.user.id})
            for entry in playing:
                await games.player_back(self.live, conn.user.id, entry["game"])
        return playing

    async def disconnect(self, conn: Connection) -> None:
        await conn.finish()
        self.connections.discard(conn)
        WS_CONNECTIONS.dec()
        self.lobby.discard(conn)
        for table_id in tuple(conn.tables):
            self.unwatch(conn, table_id)
        user = conn.user
        if user is None:
            return
        mine = self.users.get(user.id)
        if mine is not None:
            mine.discard(conn)
            if mine:
                return
            del self.users[user.id]
        for entry in await games.playing_for(self.live, user.id):
            await games.player_away(self.live, user.id, entry["game"])
        if self._stopping:
            await tables.leave_waiting(self.live, user)
            return
        self._keep_seats(user.id)
        timer = asyncio.get_running_loop().call_later(
            self.live.settings.disconnect_grace_seconds, self._grace_over, user.id
        )
        self._unseating[user.id] = (user, timer)
        # Another server process where the user is still connected answers `back`.
        await self.live.publish(CONTROL_CHANNEL, {"type": "gone", "user_id": user.id})

    def _keep_seats(self, user_id: int) -> None:
        """The user is back: the seats kept for them stay theirs."""
        pending = self._unseating.pop(user_id, None)
        if pending is not None:
            pending[1].cancel()

    def _grace_over(self, user_id: int) -> None:
        pending = self._unseating.pop(user_id, None)
        if pending is not None:
            self.live.spawn(self._unseat(pending[0]))

    async def _unseat(self, user: PlayerRef) -> None:
        """The grace period of a user who went offline is over: they stand up from the tables
        where they wait for an opponent or where their game has ended, and a game that started
        meanwhile at their table counts them as away."""
        if user.id in self.users:
            return
        for entry in await games.playing_for(self.live, user.id):
            await games.player_away(self.live, user.id, entry["game"])
        await tables.leave_waiting(self.live, user)

    # --- lobby ---------------------------------------------------------------------------

    async def subscribe_lobby(self, conn: Connection) -> None:
        self.lobby.add(conn)
        conn.lobby = True
        conn.send({"type": "lobby", "rooms": await tables.lobby(self.live)})

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
            feed.spectators_shown, feed.spectators_at = count, time.monotonic()
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
        return self._spectators(feed, {p.id for p in self.live.players_at(table)})

    def _spectators_changed(self, feed: TableFeed) -> None:
        """Someone started or stopped watching: tell the lobby, at most once a second per
        table (a burst of watchers makes one update)."""
        if feed.spectators_timer is not None:
            return
        delay = feed.spectators_at + SPECTATORS_EVERY_SECONDS - time.monotonic()
        if delay <= 0:
            self._announce_spectators(feed)
        else:
            feed.spectators_timer = asyncio.get_running_loop().call_later(
                delay, self._announce_spectators, feed
            )

    def _announce_spectators(self, feed: TableFeed) -> None:
        feed.spectators_timer = None
        if feed.unlisted:
            return
        summary = feed.summary
        if summary is None:
            table = self.live.tables.get(feed.table_id)
            if table is None or table.private or table.closed:
                return
            summary = self.live.table_payload(table)
        count = self._spectators(feed, {p["id"] for p in summary["players"]})
        if count == feed.spectators_shown:
            return
        feed.spectators_shown, feed.spectators_at = count, time.monotonic()
        summary = summary | {"spectators": count}
        # Counted by this process, so told to its own lobby subscribers only.
        self._to_lobby(dumps({"type": "lobby_table", "room": summary["room"], "table": summary}))

    # --- tables --------------------------------------------------------------------------

    async def _feed(self, table_id: int) -> TableFeed:
        feed = self.feeds.get(table_id)
        if feed is None:
            self._feeds_made += 1
            feed = TableFeed(table_id, f"{self.epoch}.{self._feeds_made}")
            self.feeds[table_id] = feed
            feed.task = asyncio.create_task(self._run_feed(feed), name=f"feed-{table_id}")
        await asyncio.shield(feed.ready)
        return feed

    async def _run_feed(self, feed: TableFeed) -> None:
        channel = table_channel(feed.table_id)
        while True:
            try:
                async with self.live.broker.subscribe(channel) as sub:
                    if not feed.ready.done():
                        feed.ready.set_result(None)
                    else:  # events were lost while resubscribing: start everyone afresh
                        feed.events.clear()
                        for conn in tuple(feed.watchers):
                            self.live.spawn(self._resend(conn, feed))
                    async for text in sub:
                        await self._table_event(feed, text)
                    return
            except SubscriberDropped:
                logger.warning("fell behind on table %d; resynchronising", feed.table_id)

    async def _table_event(self, feed: TableFeed, text: str) -> None:
        feed.version += 1
        versioned = f'{{"v":{feed.version},{text[1:]}'
        feed.events.append((feed.version, versioned))
        for conn in tuple(feed.watchers):
            conn.send_text(versioned)
        try:
            await games.observe_text(self.live, text)
        except Exception:  # never let one odd event stop the table's feed
            logger.exception("cannot follow an event of table %d", feed.table_id)

    async def _resend(self, conn: Connection, feed: TableFeed) -> None:
        try:
            snap = await tables.snapshot(self.live, feed.table_id, conn.user_id)
        except PlayError:
            return
        conn.send({"type": "table", "v": feed.version, "epoch": feed.epoch} | snap)

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
        if since is not None and epoch == feed.epoch:
            missed = feed.missed(since)
            if missed is not None:
                for text in missed:
                    conn.send_text(text)
                conn.send(
                    {"type": "synced", "table": table_id, "v": feed.version, "epoch": feed.epoch}
                )
                self._add_watcher(conn, feed)
                return
        try:
            snap = await tables.snapshot(self.live, table_id, conn.user_id, invite)
        except PlayError:
            if not feed.watchers:
                self._drop_feed(feed)
            raise
        # No await between reading the snapshot and joining: no event can fall in between.
        self._add_watcher(conn, feed)
        seated = {p["id"] for p in snap["table"]["players"]}
        snap["table"]["spectators"] = self._spectators(feed, seated)
        conn.send({"type": "table", "v": feed.version, "epoch": feed.epoch} | snap)

    def _add_watcher(self, conn: Connection, feed: TableFeed) -> None:
        if feed.linger is not None:
            feed.linger.cancel()
            feed.linger = None
        if conn not in feed.watchers:
            feed.watchers.add(conn)
            self._spectators_changed(feed)
        conn.tables.add(feed.table_id)

    def unwatch(self, conn: Connection, table_id: int) -> None:
        conn.tables.discard(table_id)
        feed = self.feeds.get(table_id)
        if feed is not None:
            if conn in feed.watchers:
                feed.watchers.discard(conn)
                self._spectators_changed(feed)
            if not feed.watchers and feed.linger is None:
                feed.linger = asyncio.get_running_loop().call_later(
                    FEED_LINGER_SECONDS, self._drop_feed, feed
                )

    def _drop_feed(self, feed: TableFeed) -> None:
        if feed.watchers:
            return
        if self.feeds.get(feed.table_id) is feed:
            del self.feeds[feed.table_id]
        if feed.spectators_timer is not None:
            feed.spectators_timer.cancel()
        if feed.task is not None:
            feed.task.cancel()

    # --- administration ------------------------------------------------------------------

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
            reason = str(event.get("reason") or "banned by an administrator")
            for conn in tuple(self.users.get(int(event["user_id"]), ())):
                conn.error("unauthorized", reason)
                conn.close(CLOSE_POLICY, reason[:120])
        elif kind == "room_closed":
            room_id = int(event["room_id"])
            await self._lobby_event(dumps({"type": "room_closed", "room": room_id}))
        elif kind == "back":
            self._keep_seats(int(event["user_id"]))
        elif kind == "gone":
            user_id = int(event["user_id"])
            if user_id in self.users:  # still connected here: their seats stay
                await self.live.publish(CONTROL_CHANNEL, {"type": "back", "user_id": user_id})
        else:
            logger.warning("ignoring an unknown control event %r", kind)

    async def _kick(self, event: dict[str, Any]) -> None:
        """Send a user away from a table, a room's tables, or (neither given) the server."""
        user_id = int(event["user_id"])
        reason = str(event.get("reason") or "removed by an administrator")
        conns = tuple(self.users.get(user_id, ()))
        table_id, room_id = event.get("table_id"), event.get("room_id")
        if table_id is None and room_id is None:
            for conn in conns:
                conn.send({"type": "kicked", "table": None, "reason": reason})
                conn.close(CLOSE_POLICY, reason[:120])
            return
        if table_id is not None:
            affected = {int(table_id)}
        else:
            affected = {
                tid
                for conn in conns
                for tid in conn.tables
                if (info := self.live.tables.get(tid)) is not None and info.room_id == room_id
            }
        for tid in affected:
            for conn in conns:
                if tid in conn.tables:
                    self.unwatch(conn, tid)
                    conn.send({"type": "kicked", "table": tid, "reason": reason})
            with contextlib.suppress(PlayError):
                await tables.leave(self.live, PlayerRef(user_id, ""), tid)
