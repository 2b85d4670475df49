"""A player's absences from their games in progress: noted when they have no connection to any
server process, ended when they connect again; each with its table event, in the caller's
transaction (see `app.services.presence`, which decides when)."""

from __future__ import annotations

import time

from sqlalchemy import or_, select
from sqlalchemy.ext.asyncio import AsyncSession

from app.db.models import Game as GameRow
from app.db.table_log import StoredEvent
from app.rules import Color
from app.services import events
from app.services.live import LivePlay
from app.timeutil import as_datetime


async def mark_away(
    live: LivePlay, db: AsyncSession, user_id: int, since: float
) -> list[StoredEvent]:
    """In the caller's transaction: the user has no connection since `since`; their games in
    progress note it (the opponent may claim after the grace period)."""
    stored: list[StoredEvent] = []
    grace = live.settings.disconnect_grace_seconds
    rows = (
        (
            await db.execute(
                select(GameRow)
                .where(
                    GameRow.status == "playing",
                    or_(GameRow.black_id == user_id, GameRow.white_id == user_id),
                    GameRow.table_id.is_not(None),
                )
                .with_for_update()
            )
        )
        .scalars()
        .all()
    )
    for row in rows:
        colour = Color.BLACK if row.black_id == user_id else Color.WHITE
        field = "black_away_since" if colour is Color.BLACK else "white_away_since"
        if getattr(row, field) is not None:
            continue
        setattr(row, field, as_datetime(since))
        assert row.table_id is not None
        stored += await live.record(
            db,
            row.table_id,
            [events.player_away(row.table_id, row.id, colour.value, since, grace)],
            as_datetime(time.time()),
        )
    return stored


async def mark_back(live: LivePlay, db: AsyncSession, user_id: int) -> list[StoredEvent]:
    """In the caller's transaction: the user is connected again; their absences end."""
    stored: list[StoredEvent] = []
    rows = (
        (
            await db.execute(
                select(GameRow)
                .where(
                    GameRow.status == "playing",
                    or_(GameRow.black_id == user_id, GameRow.white_id == user_id),
                    GameRow.table_id.is_not(None),
                )
                .with_for_update()
            )
        )
        .scalars()
        .all()
    )
    for row in rows:
        colour = Color.BLACK if row.black_id == user_id else Color.WHITE
        field = "black_away_since" if colour is Color.BLACK else "white_away_since"
        if getattr(row, field) is None:
            continue
        setattr(row, field, None)
        assert row.table_id is not None
        stored += await live.record(
            db,
            row.table_id,
            [
                {
                    "type": "player_back",
                    "table": row.table_id,
                    "game": row.id,
                    "colour": colour.value,
                }
            ],
            as_datetime(time.time()),
        )
    return stored
