"""The per-process registry of live play: cached games, their locks and clock timers.

The database is the authority. A process caches the `app.rules.Game` of each game it serves so
that a move is validated without reading storage; every write is conditional on the state the
cache believed in, and a cache found stale is dropped and rebuilt from the database. Several
processes can therefore serve the same game behind one broker.
"""

from __future__ import annotations

import asyncio
import json
import logging
import weakref
from collections.abc import Callable, Coroutine
from dataclasses import dataclass, field
from typing import Any

from app.broker import Broker, BrokerUnavailable
from app.config import Settings
from app.db.engine import Database
from app.rules import Color, Game
from app.services.clocks import GameClock
from app.services.commits import MoveWriter

logger = logging.getLogger(__name__)

LOBBY_CHANNEL = "lobby"
CONTROL_CHANNEL = "control"


def table_channel(table_id: int) -> str:
    return f"table:{table_id}"


class PlayError(Exception):
    """A refused request; `code` is one of the documented protocol error codes."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


@dataclass(frozen=True, slots=True)
class PlayerRef:
    id: int
    name: str

    def payload(self) -> dict[str, Any]:
        return {"id": self.id, "name": self.name}


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
    status: str = "playing"
    result: str = "*"
    termination: str | None = None
    draw_offer: Color | None = None
    # Ply count at which each colour last offered a draw (one offer per own move).
    offered_at: dict[Color, int] = field(default_factory=dict)
    # Unix seconds since which a player has had no connection.
    away: dict[Color, float] = field(default_factory=dict)
    timer: asyncio.TimerHandle | None = None
    # The game's lock (`LivePlay.game_lock`), held here while the game is cached so that it is
    # not made anew for every move.
    lock: asyncio.Lock | None = None

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
    """A table's settings (fixed once opened) and its host, as this process last saw them."""

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
    closed: bool = False
    game_id: int | None = None  # the latest game played here

    def clock_payload(self) -> dict[str, int] | None:
        if self.clock_base_s is None:
            return None
        return {"base": self.clock_base_s, "increment": self.clock_increment_s}


class LivePlay:
    """Everything live play keeps in one process; created and closed by the app's lifespan."""

    def __init__(self, db: Database, broker: Broker, settings: Settings) -> None:
        self.db = db
        self.broker = broker
        self.settings = settings
        self.writer = MoveWriter(db)
        self.games: dict[int, LiveGame] = {}
        self.tables: dict[int, TableInfo] = {}
        # A lock lives while someone holds or awaits it, so these do not grow with history.
        self.game_locks: weakref.WeakValueDictionary[int, asyncio.Lock] = (
            weakref.WeakValueDictionary()
        )
        self.table_locks: weakref.WeakValueDictionary[int, asyncio.Lock] = (
            weakref.WeakValueDictionary()
        )
        # After a game ends both players stay at the table until one leaves; who asked a rematch.
        self.seated_after: dict[int, list[PlayerRef]] = {}
        self.rematch: dict[int, set[int]] = {}
        # How many people watch a table without a seat: the websocket layer, which holds the
        # connections, puts its count here (this process's connections only).
        self.count_spectators: Callable[[TableInfo], int] = lambda table: 0
        self._tasks: set[asyncio.Task[Any]] = set()

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

    async def publish(self, channel: str, event: dict[str, Any]) -> None:
        """Announce an event that is already stored (or needs no storing). If the broker is down
        the change stands and is only not announced: clients catch up when they resync."""
        try:
            await self.broker.publish(channel, dumps(event))
        except BrokerUnavailable as exc:
            logger.warning("cannot announce %s on %s: %s", event.get("type"), channel, exc)

    def players_at(self, table: TableInfo) -> list[PlayerRef]:
        live = self.games.get(table.game_id) if table.game_id is not None else None
        if table.closed:
            return []
        if live is not None and live.status == "playing":
            return [live.black, live.white]
        if table.id in self.seated_after:
            return list(self.seated_after[table.id])
        return [table.owner] if table.owner is not None else []

    def table_status(self, table: TableInfo) -> str:
        if table.closed:
            return "closed"
        live = self.games.get(table.game_id) if table.game_id is not None else None
        if live is not None and live.status == "playing":
            return "playing"
        return "finished" if table.id in self.seated_after else "open"

    def table_payload(self, table: TableInfo, *, with_invite: bool = False) -> dict[str, Any]:
        """The table as clients see it; the invite code only for its players."""
        return {
            "id": table.id,
            "room": table.room_id,
            "variant": table.variant,
            "clock": table.clock_payload(),
            "colour": table.colour,
            "private": table.private,
            "invite": table.invite if with_invite else None,
            "start_fen": table.start_fen,
            "status": self.table_status(table),
            "players": [p.payload() for p in self.players_at(table)],
            "game": table.game_id,
            "rematch": sorted(self.rematch.get(table.id, ())),
            "spectators": self.count_spectators(table),
        }

    async def publish_table(self, table: TableInfo) -> None:
        """Tell the table's watchers and (for a public table) the lobby that the table changed."""
        await self.publish(
            table_channel(table.id),
            {"type": "table_update", "table": table.id, "state": self.table_payload(table)},
        )
        if table.private:
            return
        if table.closed:
            event = {"type": "lobby_table_removed", "room": table.room_id, "table": table.id}
        else:
            event = {
                "type": "lobby_table",
                "room": table.room_id,
                "table": self.table_payload(table),
            }
        await self.publish(LOBBY_CHANNEL, event)


def dumps(payload: dict[str, Any]) -> str:
    return json.dumps(payload, separators=(",", ":"), ensure_ascii=False)
