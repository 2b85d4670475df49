"""What live play keeps in one process: a cache of the games in progress, their locks and clock
timers, and the way stored table events go out.

The database is the authority. A change is stored together with its numbered table events
(`app.live.log_store`) in one transaction; then `announce` hands the events to this process's
websocket layer and rings the broker so that other processes deliver them too. A process that
misses a ring finds the gap by the numbers and reads the events back. A process caches the
`app.rules.Game` of each game it serves so that a move is validated without reading storage;
every write is conditional on the state the cache believed in, and a cache found stale is
dropped and rebuilt from the database.
"""

from __future__ import annotations

import asyncio
import logging
import weakref
from collections.abc import AsyncIterator, Callable, Collection, Coroutine, Mapping, Sequence
from contextlib import asynccontextmanager
from datetime import datetime
from typing import Any, Protocol

from sqlalchemy.ext.asyncio import AsyncSession

from app.broker import Broker, BrokerUnavailable
from app.clock import Clock
from app.config import Settings
from app.db.engine import Database
from app.errors import Code, ServiceError
from app.live import events, heartbeat, messages
from app.live import log_store as table_log
from app.live.log_store import Executor
from app.live.log_store import StoredEvent as StoredEvent  # what the faces deliver
from app.live.move_rate import MoveRate
from app.metrics import GAMES_LIVE
from app.play.commits import MoveWriter
from app.play.players import LiveGame, TableInfo
from app.status import TableState

logger = logging.getLogger(__name__)

LOBBY_CHANNEL = "lobby"
CONTROL_CHANNEL = "control"


def table_channel(table_id: int) -> str:
    return f"table:{table_id}"


def user_channel(user_id: int) -> str:
    """Where a user's notices go for the bot API's event stream (`app.bots.streams`)."""
    return f"user:{user_id}"


class PlayError(ServiceError):
    """A refused play request (a documented protocol error code)."""


def no_game(game_id: int) -> PlayError:
    """The refusal for a game that does not exist, and word for word the one for a private
    game the asker does not play: its id is confirmed to nobody (as the archive's 404)."""
    return PlayError(Code.NOT_FOUND, f"no game {game_id}")


def no_table(table_id: int) -> PlayError:
    """The refusal for a table that does not exist, and for a private one the asker may not
    see (no seat, no invite)."""
    return PlayError(Code.NOT_FOUND, f"no table {table_id}")


ALIVE_CACHE_SECONDS = 1.0


class LivePlay:
    """Everything live play keeps in one process; created and closed by the app's lifespan."""

    def __init__(
        self, db: Database, broker: Broker, settings: Settings, clock: Clock | None = None
    ) -> None:
        self.db = db
        self.broker = broker
        self.settings = settings
        # The time of live play: clocks, deadlines, absences, sweeps (`app.clock`).
        self.clock = clock or Clock()
        self.writer = MoveWriter(db)
        self.moves = MoveRate()  # moves this process accepted lately (`games.play` counts)
        self.instance = ""  # this process's heartbeat id, set once it beats
        self.games: dict[int, LiveGame] = {}
        # A lock lives while someone holds or awaits it, so these do not grow with history.
        self.game_locks: weakref.WeakValueDictionary[int, asyncio.Lock] = (
            weakref.WeakValueDictionary()
        )
        self.table_locks: weakref.WeakValueDictionary[int, asyncio.Lock] = (
            weakref.WeakValueDictionary()
        )
        # Who sees the events this process announces (the hub, the computer opponent): they
        # subscribe; live play calls none of them otherwise.
        self._sinks: list[EventSink] = []
        # How many connections each user has to this process, and all of them, anonymous ones
        # too (the websocket face counts them in and out: `enter`, `leave`).
        self._here: dict[int, int] = {}
        self.sockets = 0
        # The computer opponent's users: user id → level (`app.computer.service` fills it).
        self.ai_levels: dict[int, int] = {}
        # Followers of a table's log outside the hub (the bot API's streams): woken when this
        # process stores an event of the table (`app.bots.streams`).
        self.table_waiters: dict[int, set[asyncio.Event]] = {}
        self._tasks: set[asyncio.Task[Any]] = set()
        self.stood_up_at = float("-inf")  # when the sweep last looked for absent players
        # Set when this process writes mail to the outbox: its worker sends it at once.
        self.mail_wanted = asyncio.Event()
        self._ringing_failed = False
        # The live processes as game starts see them, read at most once a second.
        self.alive = heartbeat.AliveCache(ALIVE_CACHE_SECONDS, self.clock)

    async def start(self) -> None:
        self.writer.start()

    def drop(self, lg: LiveGame) -> None:
        """Stop keeping this copy of a game (it changed in storage, or ended): its timer stops
        and it is read afresh if it is used again."""
        if lg.timer is not None:
            lg.timer.cancel()
            lg.timer = None
        if self.games.get(lg.id) is lg:
            del self.games[lg.id]
            GAMES_LIVE.dec()

    def forget(self, game_id: int) -> None:
        """Drop this process's copy of a game, if it has one."""
        cached = self.games.get(game_id)
        if cached is not None:
            self.drop(cached)

    def serve_as(self, instance: str) -> None:
        """Serve under this heartbeat id (`app.live.heartbeat`), once its lock is held."""
        self.instance = instance

    def subscribe(self, sink: EventSink) -> Callable[[], None]:
        """Have `sink` told of every event this process announces, in order, as it announces
        them; returns the way to stop."""
        self._sinks.append(sink)
        return lambda: self._sinks.remove(sink) if sink in self._sinks else None

    def enter(self, user_id: int | None) -> bool:
        """A connection (of the user's, or anonymous) opened here; whether it is the user's
        first here."""
        self.sockets += 1
        if user_id is None:
            return False
        count = self._here.get(user_id, 0)
        self._here[user_id] = count + 1
        return count == 0

    def leave(self, user_id: int | None) -> bool:
        """A connection here closed; whether it was its user's last here."""
        self.sockets -= 1
        if user_id is None:
            return False
        count = self._here.get(user_id, 0) - 1
        if count > 0:
            self._here[user_id] = count
            return False
        self._here.pop(user_id, None)
        return True

    def connected_here(self, user_id: int) -> bool:
        """Whether the user has a connection to this process."""
        return user_id in self._here

    def users_here(self) -> list[int]:
        """The users with a connection to this process."""
        return list(self._here)

    def load(self) -> heartbeat.Load:
        """What this process's beats tell the others: its connections, users and moves."""
        return heartbeat.Load(self.sockets, len(self._here), self.moves.last_minute()[0])

    async def stop(self) -> None:
        for live in self.games.values():
            if live.timer is not None:
                live.timer.cancel()
        for task in tuple(self._tasks):
            task.cancel()
        await self.writer.stop()

    def table_lock(self, table_id: int) -> asyncio.Lock:
        lock = self.table_locks.get(table_id)
        if lock is None:
            lock = self.table_locks[table_id] = asyncio.Lock()
        return lock

    def game_lock(self, game_id: int) -> asyncio.Lock:
        """The lock serialising loads and changes of one game in this process."""
        lock = self.game_locks.get(game_id)
        if lock is None:
            lock = self.game_locks[game_id] = asyncio.Lock()
        return lock

    def spawn(self, coro: Coroutine[Any, Any, Any]) -> None:
        """Run a background job (a flag falling, a snapshot resent) and keep a reference to it
        until it ends (the event loop keeps only weak ones)."""
        task = asyncio.ensure_future(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def record(
        self, db: Executor, table_id: int, made: Sequence[events.TableEvent], at: datetime
    ) -> list[StoredEvent]:
        """Store a table's events in the caller's transaction (see `table_log.append`)."""
        return await table_log.append(db, table_id, made, at)

    async def log_since(self, table_id: int, after: int, limit: int) -> list[StoredEvent]:
        """A table's stored events numbered above `after`, oldest first, at most `limit`."""
        async with self.db.session() as session:
            return await table_log.since(session, table_id, after, limit)

    async def log_head(self, table_id: int) -> int:
        """The number of a table's latest stored event (0: none)."""
        async with self.db.session() as session:
            return await table_log.head(session, table_id)

    async def log_heads(self, table_ids: Collection[int]) -> dict[int, int]:
        """The number of each of these tables' latest stored event."""
        async with self.db.session() as session:
            return await table_log.heads(session, table_ids)

    @asynccontextmanager
    async def change(self) -> AsyncIterator[Change]:
        """The one way a use case changes live play: a transaction (`change.session`) whose
        table events (`change.record`, or `change.add` for events stored by a helper) are
        committed with it and then announced. Leaving the block normally commits and
        announces; an exception rolls back and announces nothing."""
        async with self.db.session() as session:
            change = Change(self, session)
            yield change
            await session.commit()
        await self.announce(change.stored)

    async def announce(self, events: Sequence[StoredEvent]) -> None:
        """Send stored events: to this process's clients at once, and a ring on the broker for
        the other processes. If the broker is down only the ring is lost: the other processes
        find the gap when they next compare numbers with the database."""
        if not events:
            return
        for sink in self._sinks:
            sink.deliver(events)
        if self.table_waiters:
            for table_id in {event.table_id for event in events}:
                for waiter in self.table_waiters.get(table_id, ()):
                    waiter.set()
        if not self.broker.shared:
            return  # no other process to ring
        for event in events:
            try:
                await self.broker.publish(table_channel(event.table_id), event.ring)
            except BrokerUnavailable as exc:
                if not self._ringing_failed:  # once per outage, not once per event
                    logger.warning("cannot ring the other processes (they poll): %s", exc)
                    self._ringing_failed = True
                return
        if self._ringing_failed:
            logger.warning("ringing the other processes again")
            self._ringing_failed = False

    async def publish(self, channel: str, event: Mapping[str, Any]) -> None:
        """Announce something that is not a table event (the lobby, control messages). If the
        broker is down it is only not announced."""
        try:
            await self.broker.publish(channel, dumps(event))
        except BrokerUnavailable as exc:
            logger.warning("cannot announce %s on %s: %s", event.get("type"), channel, exc)

    def is_ai(self, user_id: int | None) -> bool:
        """Whether the user is the computer opponent."""
        return user_id is not None and user_id in self.ai_levels

    async def notify(self, user_id: int, notice: Mapping[str, Any]) -> None:
        """Tell a user something on every connection of theirs to any process: websockets
        through the control channel (the hub sends `notice` as it is), the bot API's event
        stream through the user's own channel."""
        await self.publish(CONTROL_CHANNEL, messages.notify(user_id, dict(notice)))
        await self.publish(user_channel(user_id), notice)

    def table_payload(self, table: TableInfo, *, with_invite: bool = False) -> dict[str, Any]:
        """The table as clients see it; the invite code only for its players."""
        return {
            "id": table.id,
            "room": table.room_id,
            "variant": table.variant,
            "clock": table.clock_payload(),
            "colour": table.colour,
            "private": table.private,
            "rated": table.rated,
            "takebacks": table.takebacks,
            "invite": table.invite if with_invite else None,
            "start_fen": table.start_fen,
            "status": table.status,
            "players": [p.seat_payload() for p in table.players],
            "game": table.game_id,
            "rematch": sorted(table.rematch),
        }

    def table_update(self, table: TableInfo) -> events.TableUpdate:
        """The `table_update` event of a table's new state."""
        return events.table_update(table.id, self.table_payload(table))

    async def publish_lobby(self, table: TableInfo) -> None:
        """Tell the lobby (if the table is public) that the table changed: it lists tables that
        wait for a player or play; one closed or whose game ended leaves it."""
        if table.private:
            return
        event: messages.LobbyTable | messages.LobbyTableRemoved
        if table.status in (TableState.CLOSED, TableState.FINISHED):
            event = messages.lobby_table_removed(table.room_id, table.id)
        else:
            event = messages.lobby_table(table.room_id, self.table_payload(table))
        await self.publish(LOBBY_CHANNEL, event)


class Change:
    """A use case's transaction and the table events it stores (`LivePlay.change`)."""

    def __init__(self, live: LivePlay, session: AsyncSession) -> None:
        self.live = live
        self.session = session
        self.stored: list[StoredEvent] = []

    async def record(
        self, table_id: int, made: Sequence[events.TableEvent], at: datetime | None = None
    ) -> list[StoredEvent]:
        """Store a table's events (at `at`, by default now) with the change."""
        when = self.live.clock.now() if at is None else at
        stored = await table_log.append(self.session, table_id, made, when)
        self.stored.extend(stored)
        return stored

    def add(self, stored: Sequence[StoredEvent]) -> None:
        """Announce, with the change, events a helper stored in its transaction."""
        self.stored.extend(stored)


class EventSink(Protocol):
    """What subscribes to the events a process announces (`LivePlay.subscribe`)."""

    def deliver(self, events: Sequence[StoredEvent]) -> None: ...


def dumps(payload: Mapping[str, Any]) -> str:
    """A message's JSON text, encoded as the stored events are (`table_log.encode`)."""
    return table_log.encode(payload)
