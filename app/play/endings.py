"""Storing and announcing a game's end, whoever decides it (the rules, a clock, a player, an
administrator): its `game_ended` and the table's new state in the ending's transaction."""

from __future__ import annotations

from sqlalchemy.ext.asyncio import AsyncSession

from app.correspondence import service as correspondence
from app.db.models import Game as GameRow
from app.live import events
from app.live.liveplay import LivePlay
from app.live.log_store import Executor, StoredEvent
from app.metrics import GAMES_FINISHED
from app.play import store as stored_games
from app.play import tables_store as stored_tables
from app.play.players import read_table
from app.play.state import (
    clocks_run,
    stored_clock,
    turn_of,
)
from app.ratings import service as ratings
from app.rules import Outcome, Result, Termination
from app.status import GameStatus
from app.timeutil import as_datetime


async def locked_row(db: Executor, game_id: int) -> GameRow | None:
    return await stored_games.locked(db, game_id)


async def store_ending(
    live: LivePlay,
    db: AsyncSession,
    game_id: int,
    result: Result,
    termination: Termination,
    *,
    reason: str | None = None,
    ply: int | None = None,
    row: GameRow | None = None,
) -> list[StoredEvent] | None:
    """End a game in progress in the caller's transaction, with its events (`game_ended` and
    the table's `table_update`); None if it is not in progress (or, given `ply`, has moved on).
    Without a result (`*`) the game is aborted. `reason` is an administrator's explanation,
    shown to the players, or who aborted a game and why; a game aborted by the server is
    said to be so because the side to move did not make its first move in time."""
    if row is None:
        row = await locked_row(db, game_id)
    if row is None or not stored_games.in_progress(row, ply):
        return None
    if termination is Termination.ABORTED and reason is None:
        reason = f"{turn_of(row).value.capitalize()} did not make a first move in time"
    now = live.clock.time()
    clock = stored_clock(row)
    # The clocks stop now: the side to move is charged the time it spent (no clock runs before
    # both first moves).
    clocks = (
        clock.payload(turn_of(row) if clocks_run(row.ply_count) else None, now)
        if clock is not None
        else None
    )
    frozen = (clocks["black"], clocks["white"]) if clocks is not None else None
    await stored_games.end(
        db, row, GameStatus.ended_with(result), result, termination, as_datetime(now), frozen
    )
    rating_change = await ratings.apply(db, row, as_datetime(now), live.settings)
    GAMES_FINISHED.labels(row.variant, termination).inc()
    assert row.table_id is not None
    if row.tournament_id is not None:  # its players go on to their next pairing
        await stored_tables.close(db, row.table_id, as_datetime(now))
    table = await read_table(db, row.table_id)
    assert table is not None
    await correspondence.ended(live, db, row, result, termination.value, row.table_id)
    return await live.record(
        db,
        row.table_id,
        [
            events.game_ended(
                row.table_id, game_id, result, termination, clocks, reason, rating_change
            ),
            live.table_update(table),
        ],
        as_datetime(now),
    )


async def after(live: LivePlay, game_id: int, stored: list[StoredEvent]) -> None:
    """Send what a committed change stored; the game's cached copy goes (it changed)."""
    live.forget(game_id)
    await live.announce(stored)
    if stored:
        async with live.db.session() as session:
            table = await read_table(session, stored[0].table_id)
        if table is not None:
            await live.publish_lobby(table)


async def end(
    live: LivePlay,
    game_id: int,
    outcome: Outcome,
    *,
    ply: int | None = None,
) -> bool:
    """Store and announce an ending the server decided; False if the game was not in progress
    (or had moved on from `ply`)."""
    async with live.db.session() as session:
        stored = await store_ending(
            live, session, game_id, outcome.result(), outcome.termination, ply=ply
        )
        if stored is None:
            return False
        await session.commit()
    await after(live, game_id, stored)
    return True


async def table_changed(live: LivePlay, table_id: int) -> None:
    """Store and send a table's `table_update` (its seats or status changed with its game)."""
    async with live.change() as change:
        table = await read_table(change.session, table_id)
        if table is None:
            return
        await change.record(table_id, [live.table_update(table)])
    await live.publish_lobby(table)
