"""What live play holds of a player, a game in progress and a table: `PlayerRef`, `LiveGame`,
`TableInfo`, and the reads that build a table with its seats' ratings."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from app.clock import Timer
from app.live import events
from app.live.log_store import Executor
from app.play import clocks
from app.play import tables_store as stored_tables
from app.play.clocks import GameClock
from app.ratings import DEFAULT, Glicko, display, live_rd, provisional
from app.rules import Color, Game, Result, Termination
from app.status import GameStatus, TableState, TableStatus, UserKind
from app.timeutil import as_unix


@dataclass(frozen=True, slots=True)
class PlayerRef:
    """A player; at a table, with their rating in the table's variant and category (None: a
    guest, who has none, or not read)."""

    id: int
    name: str
    rating: int | None = None
    provisional: bool = False
    # Their account's takeback preference, as a table's seat read it (True where not read).
    takebacks: bool = True

    def payload(self) -> events.Player:
        return {"id": self.id, "name": self.name}

    @classmethod
    def of_seat(cls, seat: Mapping[str, Any]) -> PlayerRef:
        """The player a `seat_payload` shows."""
        return cls(
            seat["id"],
            seat["name"],
            seat.get("rating"),
            bool(seat.get("provisional")),
            seat.get("takebacks", True) is not False,
        )

    def seat_payload(self) -> events.SeatedPlayer:
        """The player as a table's seats and a game's sides show them, with the rating, and
        `takebacks: false` when they turned takebacks off (a client offers none against them)."""
        seat: events.SeatedPlayer = {
            "id": self.id,
            "name": self.name,
            "rating": self.rating,
            "provisional": self.provisional,
        }
        if not self.takebacks:
            seat["takebacks"] = False
        return seat


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
    status: GameStatus = GameStatus.PLAYING
    result: Result = Result.UNFINISHED
    termination: Termination | None = None
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
    # It moves ratings (a rated table's game may be casual: `app.ratings.fair_play`).
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
    game_status: GameStatus | None = None  # and its status
    rematch: frozenset[int] = frozenset()  # who asked for a rematch since it ended
    rated: bool = False  # its games move ratings (`app.ratings.service`)
    takebacks: bool = False  # a player may ask to take a move back (casual games only)

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
        return clocks.clock_payload(self.clock_base_s, self.clock_increment_s)

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
            takebacks=bool(state.get("takebacks")),
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
RATED_KIND = UserKind.REGISTERED


def seated_player(
    user_id: int | None,
    name: str | None,
    stored: Sequence[Any],
    now: float,
    takebacks: bool | None = True,
) -> PlayerRef | None:
    """A seat's player with the rating shown beside their name: the stored one with its RD
    grown while idle (as the REST API shows it), lichess's default 1500 (provisional) for a
    registered player without a rated game in the category yet, none for a guest; and their
    takeback preference, where it was read."""
    if user_id is None:
        return None
    kind, rating, rd, volatility, last_game_at = stored
    allows = takebacks is not False
    if kind != RATED_KIND:
        return PlayerRef(user_id, name or "?", takebacks=allows)
    if rating is None:
        return PlayerRef(user_id, name or "?", display(DEFAULT.rating), True, allows)
    last = as_unix(last_game_at) if last_game_at is not None else None
    grown = live_rd(Glicko(rating, rd, volatility), last, now)
    return PlayerRef(user_id, name or "?", display(rating), provisional(grown), allows)


def _table_of(row: Sequence[Any]) -> TableInfo:
    (id_, room, variant, base, increment, colour, private, invite, fen) = row[:9]
    owner_id, owner_name, guest_id, guest_name, status, rematch, game_id, game_status = row[9:17]
    rated, takebacks = row[17:19]
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
        owner=seated_player(owner_id, owner_name, row[19:24], now, row[29]),
        guest=seated_player(guest_id, guest_name, row[24:29], now, row[30]),
        closed=status == TableStatus.CLOSED,
        game_id=game_id,
        game_status=None if game_status is None else GameStatus(game_status),
        rematch=frozenset(rematch or ()),
        rated=bool(rated),
        takebacks=bool(takebacks),
    )
