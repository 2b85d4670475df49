"""Storage of games: their rows in `games` and their moves in `moves`.

Every change of a game in progress is conditional on what the server believed of it, stated
here once each:

- a move is stored only if the game is still in progress at the ply before it
  (`_MOVE_FOLLOWS`, with `_MOVE_SETS` the part of both move statements: PostgreSQL's batch and
  SQLite's statement per move), with the game's new clocks, deadline and (if the move ended
  it) its ending;
- an ending is stored only on the game's row, locked, still in progress (at `ply`, if given):
  `in_progress` says so, `end` writes it;
- a player's absence is set or cleared only where it is not so already (`absences`, `set_away`).

What a move or an ending means (the rules, the clocks) is decided by the services; this module
writes and reads rows.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, cast

import asyncpg
from sqlalchemy import (
    BigInteger,
    ColumnElement,
    DateTime,
    Integer,
    String,
    and_,
    bindparam,
    func,
    insert,
    or_,
    select,
    text,
    update,
)
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncSession

from app.db import table_log
from app.db.models import Game, Move, User
from app.db.table_log import Executor, StoredEvent
from app.status import GameStatus

Stored = list[StoredEvent] | None  # a move's events as numbered, or None: not stored

_PLAYING = GameStatus.PLAYING.value


@dataclass(frozen=True, slots=True)
class MoveCommit:
    """One move to store with the game's new state (and its ending, if the move ended it)."""

    game_id: int
    table_id: int
    ply: int  # plies played once this move is stored (the move's own ply number)
    move: str
    at: datetime
    events: tuple[str, ...] = ()  # the table events it makes (JSON), numbered when stored
    clock_ms: int | None = None  # the mover's time left
    black_ms: int | None = None
    white_ms: int | None = None
    deadline: datetime | None = None  # when the side to move then runs out
    status: str = GameStatus.PLAYING
    result: str = "*"  # Result.UNFINISHED
    termination: str | None = None


# --- storing moves -------------------------------------------------------------------------
#
# The two move statements below are made from these two parts, `{m}` naming where the move's
# values come from (`b.` a row of the batch, `:` a bound parameter) and `g` the game's row.

# The game's row after the move: its ply, clocks and deadline, and its ending if it ended.
_MOVE_SETS = f"""
    ply_count = {{m}}ply, last_move_at = {{m}}at,
    black_clock_ms = {{m}}black_ms, white_clock_ms = {{m}}white_ms,
    status = {{m}}status, result = {{m}}result, termination = {{m}}termination,
    deadline_at = {{m}}deadline,
    finished_at = CASE WHEN {{m}}status = '{_PLAYING}' THEN g.finished_at ELSE {{m}}at END,
    draw_offer = CASE WHEN {{m}}status = '{_PLAYING}' THEN g.draw_offer END
"""
# The condition of storing a move: the game is still in progress at the ply before it.
_MOVE_FOLLOWS = f"g.status = '{_PLAYING}' AND g.ply_count = {{m}}ply - 1"

# One move, as a statement of its own (SQLite, which writes in-process).
_MOVE_SQL = text(
    f"""
    UPDATE games AS g SET {_MOVE_SETS.format(m=":")}
    WHERE g.id = :game_id AND {_MOVE_FOLLOWS.format(m=":")}
    """
).bindparams(
    # Typed, so that PostgreSQL's driver is told each parameter's type (`$5::VARCHAR`): one used
    # twice (`status`) would otherwise be deduced two ways.
    bindparam("game_id", type_=BigInteger()),
    bindparam("ply", type_=Integer()),
    bindparam("at", type_=DateTime(timezone=True)),
    bindparam("black_ms", type_=Integer()),
    bindparam("white_ms", type_=Integer()),
    bindparam("status", type_=String()),
    bindparam("result", type_=String()),
    bindparam("termination", type_=String()),
    bindparam("deadline", type_=DateTime(timezone=True)),
)

# One round trip for a whole batch on PostgreSQL: the conditional updates, the inserts of the
# moves whose update matched, and their events numbered on their tables (a game, and so its
# table, appears at most once per batch). Data-modifying CTEs all run, read or not.
_BATCH_SQL = f"""
    WITH batch AS (
        SELECT * FROM unnest(
            $1::BIGINT[], $2::BIGINT[], $3::INTEGER[], $4::VARCHAR[], $5::INTEGER[],
            $6::TIMESTAMPTZ[], $7::INTEGER[], $8::INTEGER[], $9::VARCHAR[], $10::VARCHAR[],
            $11::VARCHAR[], $12::TIMESTAMPTZ[], $13::INTEGER[]
        ) AS b(game_id, table_id, ply, move, clock_ms, at, black_ms, white_ms, status, result,
               termination, deadline, nev)
    ),
    moved AS (
        UPDATE games AS g SET {_MOVE_SETS.format(m="b.")}
        FROM batch AS b
        WHERE g.id = b.game_id AND {_MOVE_FOLLOWS.format(m="b.")}
        RETURNING g.id
    ),
    numbered AS (
        UPDATE tables AS t
        SET event_seq = t.event_seq + b.nev
        FROM batch AS b JOIN moved ON moved.id = b.game_id
        WHERE t.id = b.table_id
        RETURNING b.game_id, t.event_seq - b.nev AS base
    ),
    stored_moves AS (
        INSERT INTO moves (game_id, ply, move, clock_ms, played_at)
        SELECT b.game_id, b.ply, b.move, b.clock_ms, b.at
        FROM batch AS b JOIN moved ON moved.id = b.game_id
    ),
    stored_events AS (
        INSERT INTO table_events (table_id, seq, payload, at)
        SELECT b.table_id, n.base + e.off, e.payload, b.at
        FROM unnest($14::BIGINT[], $15::INTEGER[], $16::TEXT[]) AS e(game_id, off, payload)
        JOIN numbered AS n ON n.game_id = e.game_id
        JOIN batch AS b ON b.game_id = e.game_id
    )
    SELECT game_id, base FROM numbered
    """


async def prepare_batch(
    conn: AsyncConnection,
) -> tuple[asyncpg.Connection, asyncpg.prepared_stmt.PreparedStatement]:
    """The batch statement, prepared on the driver's connection: through the ORM layer each
    batch cost more client CPU than the statement itself (167 µs against 62 µs for 17 moves).

    The batch is one statement, atomic by itself, so there are no BEGIN/COMMIT trips. Its
    arrays hide the batch's size from the planner, so planning it afresh for each batch, as the
    server does by default, gains nothing and costs more than running it (about 100 µs against
    19 µs of PostgreSQL's CPU per move at 16 moves a batch): it keeps one generic plan. The
    connection must be the caller's alone and discarded with it, so the setting goes too.
    """
    raw = (await conn.get_raw_connection()).driver_connection
    driver = cast(asyncpg.Connection, raw)
    await driver.execute("SET plan_cache_mode = force_generic_plan")
    return driver, await driver.prepare(_BATCH_SQL)


async def ping_driver(driver: asyncpg.Connection) -> None:
    """Ask the driver's connection for nothing: raises if it is dead."""
    await driver.fetchval("SELECT 1")


async def write_batch(
    statement: asyncpg.prepared_stmt.PreparedStatement, moves: list[MoveCommit]
) -> list[Stored]:
    """The whole batch in one statement (from `prepare_batch`): update the games, insert the
    moves of those updated and number and append their events; report what was stored."""
    events = [(m.game_id, n, text) for m in moves for n, text in enumerate(m.events, 1)]
    rows = await statement.fetch(
        [m.game_id for m in moves],
        [m.table_id for m in moves],
        [m.ply for m in moves],
        [m.move for m in moves],
        [m.clock_ms for m in moves],
        [m.at for m in moves],
        [m.black_ms for m in moves],
        [m.white_ms for m in moves],
        [m.status for m in moves],
        [m.result for m in moves],
        [m.termination for m in moves],
        [m.deadline for m in moves],
        [len(m.events) for m in moves],
        [game_id for game_id, _, _ in events],
        [n for _, n, _ in events],
        [text for _, _, text in events],
    )
    base = {row[0]: row[1] for row in rows}
    return [
        [StoredEvent(m.table_id, base[m.game_id] + n, text) for n, text in enumerate(m.events, 1)]
        if m.game_id in base
        else None
        for m in moves
    ]


def _move_values(m: MoveCommit) -> dict[str, object]:
    """`_MOVE_SQL`'s parameters for the move."""
    return {
        "game_id": m.game_id,
        "ply": m.ply,
        "at": m.at,
        "black_ms": m.black_ms,
        "white_ms": m.white_ms,
        "status": m.status,
        "result": m.result,
        "termination": m.termination,
        "deadline": m.deadline,
    }


def _move_row(m: MoveCommit) -> dict[str, object]:
    """The move's row in `moves`."""
    return {
        "game_id": m.game_id,
        "ply": m.ply,
        "move": m.move,
        "clock_ms": m.clock_ms,
        "played_at": m.at,
    }


async def write_each(conn: AsyncConnection, moves: list[MoveCommit]) -> list[Stored]:
    """One conditional update per move, in one transaction (SQLite writes in-process)."""
    stored: list[Stored] = []
    rows: list[dict[str, object]] = []
    async with conn.begin():
        for m in moves:
            result = await conn.execute(_MOVE_SQL, _move_values(m))
            if result.rowcount != 1:
                stored.append(None)
                continue
            rows.append(_move_row(m))
            stored.append(await table_log.append(conn, m.table_id, m.events, m.at))
        if rows:
            await conn.execute(insert(Move), rows)
    return stored


async def write_one(session: AsyncSession, m: MoveCommit) -> Game | None:
    """Store one move in the caller's transaction with the same conditional statement, its
    game's row locked first, but not its events (the caller appends them once it knows all they
    say, e.g. a rating change); the game's row as stored, or None if the game was not in
    progress at the ply before."""
    row = await locked(session, m.game_id)
    if row is None:
        return None
    result = await session.execute(_MOVE_SQL, _move_values(m))
    if result.rowcount != 1:  # type: ignore[attr-defined]
        return None
    await session.execute(insert(Move), [_move_row(m)])
    await session.refresh(row)
    return row


async def confirm(
    conn: AsyncConnection, moves: list[MoveCommit], stored: list[Stored]
) -> list[Stored]:
    """After a retry, a move reported as not stored may have been stored by the first try: if
    its row is there with the same text, its events are the table's latest ones."""
    confirmed = []
    async with conn.begin():
        for move, result in zip(moves, stored, strict=True):
            if result is None and move.events:
                text = await conn.scalar(
                    select(Move.move).where(Move.game_id == move.game_id, Move.ply == move.ply)
                )
                if text == move.move:
                    head = await table_log.head(conn, move.table_id)
                    after = head - len(move.events)
                    found = await table_log.since(conn, move.table_id, after, len(move.events))
                    if [e.payload for e in found] == list(move.events):
                        result = found
            confirmed.append(result)
    return confirmed


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


# The columns a game's clocks are stored in (`app.services.game_state.ClockColumns`).
CLOCK_COLUMNS = (
    Game.clock_base_s,
    Game.clock_increment_s,
    Game.black_clock_ms,
    Game.white_clock_ms,
    Game.last_move_at,
    Game.started_at,
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


async def playing_for(db: Executor, user_id: int) -> list[tuple[int, int]]:
    """(table, game) for each game in progress the user plays."""
    rows = await db.execute(
        select(Game.table_id, Game.id).where(
            *_playing_live(), or_(Game.black_id == user_id, Game.white_id == user_id)
        )
    )
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
    """The user's games in progress at tables, locked: id, table_id, black_id,
    black_away_since, white_away_since."""
    rows = await db.execute(
        select(
            Game.id,
            Game.table_id,
            Game.black_id,
            Game.black_away_since,
            Game.white_away_since,
        )
        .where(*_playing_live(), or_(Game.black_id == user_id, Game.white_id == user_id))
        .with_for_update()
    )
    return rows.all()


async def set_away(db: Executor, game_id: int, black: bool, since: datetime | None) -> None:
    """Set (`since`) or clear (None) the absence of one player of a game."""
    column = "black_away_since" if black else "white_away_since"
    await db.execute(update(Game).where(Game.id == game_id).values({column: since}))
