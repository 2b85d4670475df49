"""Storing moves: one conditional update of the game's row per move (stored only if the game
is still in progress at the ply before it), its row in `moves`, and its table events, as one
statement per batch on PostgreSQL (`write_batch`) and one per move on SQLite (`write_each`)."""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any, cast

import asyncpg
from sqlalchemy import (
    BigInteger,
    DateTime,
    Integer,
    String,
    bindparam,
    insert,
    select,
    text,
)
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncSession

from app.db.models import Game, Move
from app.live import log_store as table_log
from app.live.log_store import StoredEvent
from app.play.store import locked
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
    events: tuple[Mapping[str, Any], ...] = ()  # the table events it makes, numbered when stored
    clock_ms: int | None = None  # the mover's time left
    black_ms: int | None = None
    white_ms: int | None = None
    deadline: datetime | None = None  # when the side to move then runs out
    status: str = GameStatus.PLAYING
    result: str = "*"  # Result.UNFINISHED
    termination: str | None = None


# The game's row after the move: its ply, clocks and deadline, and its ending if it ended.
_MOVE_SETS = f"""
    ply_count = {{m}}ply, last_move_at = {{m}}at,
    black_clock_ms = {{m}}black_ms, white_clock_ms = {{m}}white_ms,
    status = {{m}}status, result = {{m}}result, termination = {{m}}termination,
    deadline_at = {{m}}deadline,
    finished_at = CASE WHEN {{m}}status = '{_PLAYING}' THEN g.finished_at ELSE {{m}}at END,
    draw_offer = CASE WHEN {{m}}status = '{_PLAYING}' THEN g.draw_offer END
"""


# The condition of storing a move: the game is still in progress at the ply before it. The
# status test is written so that no index serves it (`IS TRUE`): the game is found by its id.
# Written plainly, a plan made while `games` was small or unanalysed (a fresh database, or one
# whose statistics were never refreshed) read every game in progress through `ix_games_status`
# for each batch, dead entries of ended games included, a cost that grew with every game played
# (issue 31: PostgreSQL's CPU per move rising during a run).
_MOVE_FOLLOWS = f"(g.status = '{_PLAYING}') IS TRUE AND g.ply_count = {{m}}ply - 1"


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


# The events of the moves stored, by the log's append rule (`table_log.append_ctes`), keyed by
# game (a game, and so its table, appears at most once per batch).
_APPEND = table_log.append_ctes(
    counts="""(SELECT b.game_id AS key, b.table_id, b.nev AS n
        FROM batch AS b JOIN moved ON moved.id = b.game_id)""",
    events="""(SELECT e.game_id AS key, e.off, e.kind, e.payload, b.at
        FROM unnest($14::BIGINT[], $15::INTEGER[], $16::TEXT[], $17::TEXT[])
            AS e(game_id, off, kind, payload)
        JOIN batch AS b ON b.game_id = e.game_id)""",
)

# One round trip for a whole batch on PostgreSQL: the conditional updates, the inserts of the
# moves whose update matched, and their events numbered on their tables. Data-modifying CTEs
# all run, read or not.
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
        WHERE g.id = ANY($1::BIGINT[]) AND g.id = b.game_id AND {_MOVE_FOLLOWS.format(m="b.")}
        RETURNING g.id
    ),
    {_APPEND},
    stored_moves AS (
        INSERT INTO moves (game_id, ply, move, clock_ms, played_at)
        SELECT b.game_id, b.ply, b.move, b.clock_ms, b.at
        FROM batch AS b JOIN moved ON moved.id = b.game_id
    )
    SELECT key, base FROM numbered
    """


# The writer's connection runs the batch statement alone: one generic plan (below), and no
# sequential scan, which a plan made while `games` looked empty (a fresh database, statistics
# never refreshed: autovacuum off) chose, and kept while the table grew.
WRITER_SETTINGS = "SET plan_cache_mode = force_generic_plan; SET enable_seqscan = off"

# How long a writer keeps one plan of the batch statement before preparing it again.
REPLAN_SECONDS = 60.0


class Batch:
    """The batch statement on a writer's driver connection, prepared again every
    `REPLAN_SECONDS`, so that its generic plan follows the tables' statistics as they change
    (the games are found by their ids whatever the statistics say: `_MOVE_FOLLOWS`)."""

    def __init__(self, driver: asyncpg.Connection) -> None:
        self.driver = driver
        self.statement: asyncpg.prepared_stmt.PreparedStatement | None = None
        self.prepared_at = 0.0
        self.prepared = 0  # times prepared

    async def write(self, moves: list[MoveCommit]) -> list[Stored]:
        """`write_batch` with the statement as prepared within `REPLAN_SECONDS`."""
        if self.statement is None or time.monotonic() - self.prepared_at >= REPLAN_SECONDS:
            self.statement = await self.driver.prepare(_BATCH_SQL)
            self.prepared_at = time.monotonic()
            self.prepared += 1
        return await write_batch(self.statement, moves)


async def prepare_batch(
    conn: AsyncConnection,
) -> tuple[asyncpg.Connection, Batch]:
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
    await driver.execute(WRITER_SETTINGS)
    return driver, Batch(driver)


async def ping_driver(driver: asyncpg.Connection) -> None:
    """Ask the driver's connection for nothing: raises if it is dead."""
    await driver.fetchval("SELECT 1")


async def write_batch(
    statement: asyncpg.prepared_stmt.PreparedStatement, moves: list[MoveCommit]
) -> list[Stored]:
    """The whole batch in one statement (from `prepare_batch`): update the games, insert the
    moves of those updated and number and append their events; report what was stored."""
    drafts = [table_log.numbered(m.table_id, 1, m.events) for m in moves]
    events = [(m.game_id, e) for m, made in zip(moves, drafts, strict=True) for e in made]
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
        [game_id for game_id, _ in events],
        [e.seq for _, e in events],
        [e.kind for _, e in events],
        [e.payload for _, e in events],
    )
    base = {row[0]: row[1] for row in rows}
    return [
        [StoredEvent(e.table_id, base[m.game_id] + e.seq, e.kind, e.payload, e.made) for e in made]
        if m.game_id in base
        else None
        for m, made in zip(moves, drafts, strict=True)
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
                    made = table_log.numbered(move.table_id, 1, move.events)
                    if [e.payload for e in found] == [e.payload for e in made]:
                        result = found
            confirmed.append(result)
    return confirmed
