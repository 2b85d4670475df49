"""What live play keeps in one process: a cache of the games in progress, their locks and clock
timers, and the way stored table events go out.

The database is the authority. A change is stored together with its numbered table events
(`app.db.table_log`) in one transaction; then `announce` hands the events to this process's
websocket layer and rings the broker so that other processes deliver them too. A process that
misses a ring finds the gap by the numbers and reads the events back. A process caches the
`app.rules.Game` of each game it serves so that a move is validated without reading storage;
every write is conditional on the state the cache believed in, and a cache found stale is
dropped and rebuilt from the database.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
import weakref
from collections.abc import Callable, Coroutine, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from app.broker import Broker, BrokerUnavailable
from app.clock import Clock, Timer
from app.config import Settings
from app.db import table_log
from app.db import tables as stored_tables
from app.db.engine import Database
from app.db.table_log import Executor, StoredEvent
from app.ratings import DEFAULT, Glicko, display, live_rd, provisional
from app.rules import Color, Game, Result
from app.services import events, heartbeat
from app.services.clocks import GameClock
from app.services.commits import MoveWriter
from app.services.errors import ServiceError
from app.services.move_rate import MoveRate
from app.status import GameStatus, TableState, TableStatus
from app.timeutil import as_unix

logger = logging.getLogger(__name__)

LOBBY_CHANNEL = "lobby"
CONTROL_CHANNEL = "control"


def table_channel(table_id: int) -> str:
    return f"table:{table_id}"


def user_channel(user_id: int) -> str:
    """Where a user's notices go for the bot API's event stream (`app.services.streams`)."""
    return f"user:{user_id}"


class PlayError(ServiceError):
    """A refused play request; `code` is one of the documented protocol error codes. Over
    REST it is 409, but 404 for `not_found` and 400 for `bad_message`."""

    http_status = 409

    def __init__(
        self,
        code: str,
        message: str,
        *,
        http_status: int | None = None,
        retry_after: int | None = None,
    ) -> None:
        if http_status is None:
            http_status = {"not_found": 404, "bad_message": 400}.get(code)
        super().__init__(code, message, http_status=http_status, retry_after=retry_after)


def no_game(game_id: int) -> PlayError:
    """The refusal for a game that does not exist, and word for word the one for a private
    game the asker does not play: its id is confirmed to nobody (as the archive's 404)."""
    return PlayError("not_found", f"no game {game_id}")


def no_table(table_id: int) -> PlayError:
    """The refusal for a table that does not exist, and for a private one the asker may not
    see (no seat, no invite)."""
    return PlayError("not_found", f"no table {table_id}")


@dataclass(frozen=True, slots=True)
class PlayerRef:
    """A player; at a table, with their rating in the table's variant and category (None: a
    guest, who has none, or not read)."""

    id: int
    name: str
    rating: int | None = None
    provisional: bool = False

    def payload(self) -> events.Player:
        return {"id": self.id, "name": self.name}

    @classmethod
    def of_seat(cls, seat: Mapping[str, Any]) -> PlayerRef:
        """The player a `seat_payload` shows."""
        return cls(seat["id"], seat["name"], seat.get("rating"), bool(seat.get("provisional")))

    def seat_payload(self) -> events.SeatedPlayer:
        """The player as a table's seats and a game's sides show them, with the rating."""
        return {
            "id": self.id,
            "name": self.name,
            "rating": self.rating,
            "provisional": self.provisional,
        }


@dataclass(slots=True)
class LiveGame:
    """A game in progress as this process knows it."""

    id: int
    table_id: int
    room_id: int | None
    variant: str
    start_fen: str | None
    black: PlayerRef
    white: PlayerRef
    game: Game
    clock: GameClock | None
    status: str = GameStatus.PLAYING
    result: str = Result.UNFINISHED
    termination: str | None = None
    draw_offer: Color | None = None  # the standing offer, as last read or written here
    # Unix seconds since which a player has had no connection, as last read or written here.
    away: dict[Color, float] = field(default_factory=dict)
    # Unix seconds by which the side to move must make its first move (None from ply 2 on).
    first_move_deadline: float | None = None
    timer: Timer | None = None
    # The game's lock (`LivePlay.game_lock`), held here while the game is cached so that it is
    # not made anew for every move.
    lock: asyncio.Lock | None = None
    # Its table as the game began (settings, seats): what a game-ending move's `table_update`
    # shows, without reading it again.
    table: TableInfo | None = None
    # It moves ratings (a rated table's game may be casual: `app.services.fair_play`).
    rated: bool = False
    # Played at a private table: a stranger's action on it is answered as for no game.
    private: bool = False

    def colour_of(self, user_id: int) -> Color | None:
        if user_id == self.black.id:
            return Color.BLACK
        if user_id == self.white.id:
            return Color.WHITE
        return None

    @property
    def first_turn(self) -> Color:
        """The colour that moved first (a start position may give the move to White)."""
        turn: Color = self.game.position.turn
        return turn if self.game.ply % 2 == 0 else turn.other

    def has_moved(self, colour: Color) -> bool:
        return self.game.ply >= (1 if colour is self.first_turn else 2)


@dataclass(slots=True)
class TableInfo:
    """A table as stored: its settings (fixed once opened), its seats and its latest game."""

    id: int
    room_id: int
    variant: str
    clock_base_s: int | None
    clock_increment_s: int
    colour: str
    private: bool
    invite: str | None
    start_fen: str | None
    owner: PlayerRef | None
    guest: PlayerRef | None = None  # the second seat (after a game: White, the owner Black)
    closed: bool = False
    game_id: int | None = None  # the latest game played here
    game_status: str | None = None  # and its status
    rematch: frozenset[int] = frozenset()  # who asked for a rematch since it ended
    rated: bool = False  # its games move ratings (`app.services.ratings`)

    @property
    def players(self) -> list[PlayerRef]:
        """Who sits here: the host, then the second player (Black then White after a game)."""
        if self.closed:
            return []
        return [p for p in (self.owner, self.guest) if p is not None]

    @property
    def status(self) -> TableState:
        if self.closed:
            return TableState.CLOSED
        if self.game_status == GameStatus.PLAYING:
            return TableState.PLAYING
        return TableState.FINISHED if self.guest is not None else TableState.OPEN

    def seated(self, user_id: int | None) -> bool:
        return user_id is not None and any(p.id == user_id for p in self.players)

    def clock_payload(self) -> dict[str, int] | None:
        if self.clock_base_s is None:
            return None
        return {"base": self.clock_base_s, "increment": self.clock_increment_s}

    @classmethod
    def of_state(cls, state: Mapping[str, Any]) -> TableInfo:
        """The table a `table_update`'s state shows (`LivePlay.table_payload`), its invite code
        aside (shown to its players only, and not needed to serve its games)."""
        clock = state.get("clock")
        players = [PlayerRef.of_seat(p) for p in state["players"]]
        status = state["status"]
        return cls(
            id=state["id"],
            room_id=state["room"],
            variant=state["variant"],
            clock_base_s=clock["base"] if clock else None,
            clock_increment_s=clock["increment"] if clock else 0,
            colour=state["colour"],
            private=bool(state["private"]),
            invite=None,
            start_fen=state.get("start_fen"),
            owner=players[0] if players else None,
            guest=players[1] if len(players) > 1 else None,
            closed=status == TableState.CLOSED,
            game_id=state.get("game"),
            game_status=GameStatus.PLAYING if status == TableState.PLAYING else None,
            rematch=frozenset(state.get("rematch") or ()),
            rated=bool(state.get("rated")),
        )


async def read_table(db: Executor, table_id: int, *, lock: bool = False) -> TableInfo | None:
    """The table as stored (seats, latest game), in one query; with `lock`, its row stays
    locked until the transaction ends, which serialises seat changes across processes."""
    row = await stored_tables.read(db, table_id, lock=lock)
    return None if row is None else _table_of(row)


async def read_listed(db: Executor, room_ids: list[int]) -> list[TableInfo]:
    """The open public tables of these rooms, by id, in one query (as `read_table` reads
    one)."""
    return [_table_of(row) for row in await stored_tables.read_listed(db, room_ids)]


# Who has a rating: registered accounts (guests and the computer play casual games only; an
# imported name never sits at a table).
RATED_KIND = "registered"


def seated_player(
    user_id: int | None, name: str | None, stored: Sequence[Any], now: float
) -> PlayerRef | None:
    """A seat's player with the rating shown beside their name: the stored one with its RD
    grown while idle (as the REST API shows it), lichess's default 1500 (provisional) for a
    registered player without a rated game in the category yet, none for a guest."""
    if user_id is None:
        return None
    kind, rating, rd, volatility, last_game_at = stored
    if kind != RATED_KIND:
        return PlayerRef(user_id, name or "?")
    if rating is None:
        return PlayerRef(user_id, name or "?", display(DEFAULT.rating), True)
    last = as_unix(last_game_at) if last_game_at is not None else None
    grown = live_rd(Glicko(rating, rd, volatility), last, now)
    return PlayerRef(user_id, name or "?", display(rating), provisional(grown))


def _table_of(row: Sequence[Any]) -> TableInfo:
    (id_, room, variant, base, increment, colour, private, invite, fen) = row[:9]
    owner_id, owner_name, guest_id, guest_name, status, rematch, game_id, game_status = row[9:17]
    rated = row[17]
    now = time.time()
    return TableInfo(
        id=id_,
        room_id=room,
        variant=variant,
        clock_base_s=base,
        clock_increment_s=increment,
        colour=colour,
        private=private,
        invite=invite,
        start_fen=fen,
        owner=seated_player(owner_id, owner_name, row[18:23], now),
        guest=seated_player(guest_id, guest_name, row[23:28], now),
        closed=status == TableStatus.CLOSED,
        game_id=game_id,
        game_status=game_status,
        rematch=frozenset(rematch or ()),
        rated=bool(rated),
    )


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
        # Where stored events go in this process: the websocket layer puts its delivery here.
        self.deliver: Callable[[Sequence[StoredEvent]], None] = lambda events: None
        # Whether a user has a connection to this process (the websocket layer knows).
        self.connected_here: Callable[[int], bool] = lambda user_id: False
        # How many people watch a table without a seat: the websocket layer, which holds the
        # connections, puts its count here (this process's connections only).
        self.count_spectators: Callable[[TableInfo], int] = lambda table: 0
        # Also told of every event this process announces (the computer opponent listens).
        self.listeners: list[Callable[[Sequence[StoredEvent]], None]] = []
        # The computer opponent's users: user id → level (`app.services.ai` fills it).
        self.ai_levels: dict[int, int] = {}
        # Followers of a table's log outside the hub (the bot API's streams): woken when this
        # process stores an event of the table (`app.services.streams`).
        self.table_waiters: dict[int, set[asyncio.Event]] = {}
        self._tasks: set[asyncio.Task[Any]] = set()
        self.stood_up_at = float("-inf")  # when the sweep last looked for absent players
        self._ringing_failed = False
        # The live processes as game starts see them, read at most once a second.
        self.alive = heartbeat.AliveCache(ALIVE_CACHE_SECONDS, self.clock)

    async def start(self) -> None:
        self.writer.start()

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
        return await table_log.append(db, table_id, [dumps(e) for e in made], at)

    async def announce(self, events: Sequence[StoredEvent]) -> None:
        """Send stored events: to this process's clients at once, and a ring on the broker for
        the other processes. If the broker is down only the ring is lost: the other processes
        find the gap when they next compare numbers with the database."""
        if not events:
            return
        self.deliver(events)
        for listener in self.listeners:
            listener(events)
        if self.table_waiters:
            for table_id in {event.table_id for event in events}:
                for waiter in self.table_waiters.get(table_id, ()):
                    waiter.set()
        if not self.broker.shared:
            return  # no other process to ring
        for event in events:
            try:
                await self.broker.publish(table_channel(event.table_id), event.frame)
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
        await self.publish(
            CONTROL_CHANNEL, {"type": "notify", "user_id": user_id, "notice": notice}
        )
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
            "invite": table.invite if with_invite else None,
            "start_fen": table.start_fen,
            "status": table.status,
            "players": [p.seat_payload() for p in table.players],
            "game": table.game_id,
            "rematch": sorted(table.rematch),
            "spectators": self.count_spectators(table),
        }

    def table_update(self, table: TableInfo) -> events.TableUpdate:
        """The `table_update` event of a table's new state."""
        return events.table_update(table.id, self.table_payload(table))

    async def publish_lobby(self, table: TableInfo) -> None:
        """Tell the lobby (if the table is public) that the table changed: it lists tables that
        wait for a player or play; one closed or whose game ended leaves it."""
        if table.private:
            return
        if table.status in (TableState.CLOSED, TableState.FINISHED):
            event = {"type": "lobby_table_removed", "room": table.room_id, "table": table.id}
        else:
            event = {
                "type": "lobby_table",
                "room": table.room_id,
                "table": self.table_payload(table),
            }
        await self.publish(LOBBY_CHANNEL, event)


def dumps(payload: Mapping[str, Any]) -> str:
    return json.dumps(payload, separators=(",", ":"), ensure_ascii=False)
