"""Storage of games: their rows in `games` and their moves in `moves`.

Every change of a game in progress is conditional on what the server believed of it, stated
here once each:

- a move is stored only if the game is still in progress at the ply before it
  (`_MOVE_FOLLOWS`, with `_MOVE_SETS` the part of both move statements: PostgreSQL's batch and
  SQLite's statement per move), with the game's new clocks, deadline and (if the move ended
  it) its ending;
- an ending is stored only on the game's row, locked, still in progress (at `ply`, if given):
  `in_progress` says so, `end` writes it;
- a player's absence is set or cleared only where it is not so already (`absences`, `set_away`);
- a takeback is stored only on the game's row, locked, still in progress: `take_back` removes
  the plies taken back from `moves` and sets the row back to the ply before them.

What a move or an ending means (the rules, the clocks) is decided by the services; this module
writes and reads rows.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import (
    ColumnElement,
    and_,
    bindparam,
    delete,
    func,
    insert,
    or_,
    select,
    update,
)
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncSession

from app.db.models import Game, Move, Tournament, User
from app.live.log_store import Executor, StoredEvent
from app.ratings.categories import CORRESPONDENCE_FROM_S
from app.status import GameStatus

Stored = list[StoredEvent] | None  # a move's events as numbered, or None: not stored

_PLAYING = GameStatus.PLAYING.value


# --- storing moves -------------------------------------------------------------------------
#
# The two move statements below are made from these two parts, `{m}` naming where the move's
# values come from (`b.` a row of the batch, `:` a bound parameter) and `g` the game's row.


# --- creating and reading games ------------------------------------------------------------


_CREATE = insert(Game).returning(Game.id)  # the columns are those of the values given


async def create(db: Executor, **values: Any) -> int:
    """Store a new game (the columns of `games`) and return its id."""
    game_id = await db.scalar(_CREATE, values)
    assert game_id is not None
    return int(game_id)


@dataclass(frozen=True, slots=True)
class Loaded:
    """A game as stored: its row, its moves in order and its players' names."""

    row: Game
    moves: list[str]
    names: dict[int, str]


async def load(session: AsyncSession, game_id: int) -> Loaded | None:
    """The game's row with its moves and its players' names (None: no such game)."""
    row = await session.get(Game, game_id)
    if row is None:
        return None
    moves = (
        await session.execute(select(Move.move).where(Move.game_id == game_id).order_by(Move.ply))
    ).scalars()
    players = [p for p in (row.black_id, row.white_id) if p is not None]
    named = await session.execute(select(User.id, User.name).where(User.id.in_(players)))
    return Loaded(row, list(moves), {user_id: name for user_id, name in named.all()})


async def get(session: AsyncSession, game_id: int) -> Game | None:
    """The game's row as stored (not locked)."""
    return await session.get(Game, game_id)


# The columns a game's clocks are stored in (`app.play.state.ClockColumns`).
CLOCK_COLUMNS = (
    Game.clock_base_s,
    Game.clock_increment_s,
    Game.black_clock_ms,
    Game.white_clock_ms,
    Game.last_move_at,
    Game.started_at,
    Game.black_berserk,
    Game.white_berserk,
)

_CATCH_UP = (
    select(Game.status, Game.ply_count, Game.deadline_at, *CLOCK_COLUMNS, Move.move)
    .select_from(Game)
    .outerjoin(Move, and_(Move.game_id == Game.id, Move.ply > bindparam("known")))
    .where(Game.id == bindparam("game"))
    .order_by(Move.ply)
)


async def since_ply(conn: AsyncConnection, game_id: int, known: int) -> Sequence[Any]:
    """In one query, the game's status, ply count, deadline and clock columns, with each move stored
    after ply `known` (one row per move; one row with `move` None if there is none)."""
    return (await conn.execute(_CATCH_UP, {"game": game_id, "known": known})).all()


def _playing_live() -> tuple[ColumnElement[bool], ColumnElement[bool]]:
    """Games in progress at a table (imported games have no table)."""
    return Game.status == GameStatus.PLAYING, Game.table_id.is_not(None)


async def in_progress_turns(conn: AsyncConnection) -> Sequence[Any]:
    """Every game in progress: id, started_at, last_move_at, deadline_at."""
    query = select(Game.id, Game.started_at, Game.last_move_at, Game.deadline_at)
    return (await conn.execute(query.where(*_playing_live()))).all()


async def move_turns(conn: AsyncConnection, turns: list[dict[str, Any]]) -> None:
    """Set each game's running turn's start and deadline: dicts of `game`, `turn_started`,
    `deadline`."""
    await conn.execute(
        update(Game)
        .where(Game.id == bindparam("game"))
        .values(last_move_at=bindparam("turn_started"), deadline_at=bindparam("deadline")),
        turns,
    )


async def playing_for(
    db: Executor, user_id: int, live_clocks_only: bool = False
) -> list[tuple[int, int]]:
    """(table, game) for each game in progress the user plays (`live_clocks_only`: but the
    correspondence ones)."""
    query = select(Game.table_id, Game.id).where(
        *_playing_live(), or_(Game.black_id == user_id, Game.white_id == user_id)
    )
    if live_clocks_only:
        query = query.where(
            or_(Game.clock_base_s.is_(None), Game.clock_base_s < CORRESPONDENCE_FROM_S)
        )
    rows = await db.execute(query)
    return [(table_id, game_id) for table_id, game_id in rows.all() if table_id is not None]


async def due(db: Executor, now: datetime) -> list[int]:
    """The games in progress whose side to move ran out by `now`."""
    rows = await db.scalars(
        select(Game.id).where(
            Game.status == GameStatus.PLAYING,
            Game.deadline_at.is_not(None),
            Game.deadline_at <= now,
        )
    )
    return list(rows.all())


async def count_playing(db: Executor) -> int:
    """How many games are in progress at tables."""
    found = await db.scalar(select(func.count()).select_from(Game).where(*_playing_live()))
    return int(found or 0)


# --- endings -------------------------------------------------------------------------------


async def locked(db: Executor, game_id: int) -> Game | None:
    """The game's row, locked until the transaction ends."""
    return (
        await db.execute(select(Game).where(Game.id == game_id).with_for_update())
    ).scalar_one_or_none()


async def playing_at(
    db: Executor, table_ids: Collection[int], user_id: int | None = None
) -> list[Game]:
    """The games in progress at these tables (of `user_id` only, if given), locked, by id."""
    if not table_ids:
        return []
    query = select(Game).where(Game.table_id.in_(table_ids), Game.status == GameStatus.PLAYING)
    if user_id is not None:
        query = query.where(or_(Game.black_id == user_id, Game.white_id == user_id))
    rows = await db.scalars(query.order_by(Game.id).with_for_update())
    return list(rows.all())


def in_progress(row: Game | None, ply: int | None = None) -> bool:
    """The condition of storing an ending: the game (its row locked) is still in progress, and
    at `ply` if given."""
    return (
        row is not None
        and row.status == GameStatus.PLAYING
        and (ply is None or row.ply_count == ply)
    )


async def end(
    session: AsyncSession,
    row: Game,
    status: str,
    result: str,
    termination: str,
    at: datetime,
    clocks_ms: tuple[int, int] | None,
) -> None:
    """Store the ending of a game whose locked row is `in_progress`: its status, result and
    termination, its clocks stopped at `clocks_ms` (black, white; None: untimed), no deadline,
    draw offer or absence left."""
    assert in_progress(row)
    if clocks_ms is not None:
        row.black_clock_ms, row.white_clock_ms = clocks_ms
    row.status, row.result, row.termination = status, result, termination
    row.finished_at, row.deadline_at, row.draw_offer = at, None, None
    row.black_away_since = row.white_away_since = None
    await session.flush()


# --- draw offers and absences --------------------------------------------------------------


def offer_draw(row: Game, by_black: bool) -> None:
    """Note on the locked row a draw offer made at its current ply (written at commit)."""
    row.draw_offer = "black" if by_black else "white"
    if by_black:
        row.black_offer_ply = row.ply_count
    else:
        row.white_offer_ply = row.ply_count


def withdraw_offer(row: Game) -> None:
    """No draw offer stands any more on the locked row (written at commit)."""
    row.draw_offer = None


async def absences(db: Executor, user_id: int) -> Sequence[Any]:
    """The user's games in progress at tables but correspondence ones, locked: id, table_id,
    black_id, black_away_since, white_away_since."""
    rows = await db.execute(
        select(
            Game.id,
            Game.table_id,
            Game.black_id,
            Game.black_away_since,
            Game.white_away_since,
        )
        .where(
            *_playing_live(),
            or_(Game.black_id == user_id, Game.white_id == user_id),
            # Nobody is away from a correspondence game: it is played between visits.
            or_(Game.clock_base_s.is_(None), Game.clock_base_s < CORRESPONDENCE_FROM_S),
        )
        .with_for_update()
    )
    return rows.all()


async def set_away(db: Executor, game_id: int, black: bool, since: datetime | None) -> None:
    """Set (`since`) or clear (None) the absence of one player of a game."""
    column = "black_away_since" if black else "white_away_since"
    await db.execute(update(Game).where(Game.id == game_id).values({column: since}))


# --- takebacks -----------------------------------------------------------------------------


def ask_takeback(row: Game, by: str | None) -> None:
    """Note on the locked row the takeback request of `by` (black|white) made at its current
    ply, or none (None); written at commit."""
    row.takeback_by = by
    row.takeback_ply = None if by is None else row.ply_count


async def move_clocks(db: Executor, game_id: int, upto: int) -> list[tuple[int, int | None]]:
    """(ply, the mover's time left after it) of the game's moves up to ply `upto`, in order."""
    rows = await db.execute(
        select(Move.ply, Move.clock_ms)
        .where(Move.game_id == game_id, Move.ply <= upto)
        .order_by(Move.ply)
    )
    return [(ply, clock_ms) for ply, clock_ms in rows.all()]


async def take_back(
    session: AsyncSession,
    row: Game,
    ply: int,
    at: datetime,
    clocks_ms: tuple[int, int] | None,
    deadline: datetime | None,
) -> None:
    """Set the game of a locked row in progress back to `ply`: the later moves go from
    `moves`, the side to move's turn starts `at` with the clocks `clocks_ms` (black, white;
    None: untimed) and runs out at `deadline`; no draw offer or takeback request is left."""
    assert in_progress(row) and ply < row.ply_count
    await session.execute(delete(Move).where(Move.game_id == row.id, Move.ply > ply))
    row.ply_count, row.last_move_at, row.deadline_at = ply, at, deadline
    if clocks_ms is not None:
        row.black_clock_ms, row.white_clock_ms = clocks_ms
    row.draw_offer = row.black_offer_ply = row.white_offer_ply = None
    row.takeback_by = row.takeback_ply = None
    await session.flush()


async def tournament_of(db: Executor, game_id: int) -> Any | None:
    """A tournament game's tournament: (id, kind, name, draw after move, the game's round and
    ballot opening) or None."""
    query = (
        select(
            Tournament.id,
            Tournament.kind,
            Tournament.name,
            Tournament.draw_after_move,
            Game.tournament_round,
            Game.opening,
        )
        .join(Game, Game.tournament_id == Tournament.id)
        .where(Game.id == game_id)
    )
    return (await db.execute(query)).one_or_none()
