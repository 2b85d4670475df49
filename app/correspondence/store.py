"""Storage of what correspondence games need beyond a game's row: the games a time alarm may
be due in, its once-per-move mark, the players' names for notices, and conditional moves."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import delete, or_, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from app.db.models import ConditionalMoves, Game, User
from app.live.log_store import Executor
from app.ratings.categories import CORRESPONDENCE_FROM_S
from app.status import GameStatus


async def names(db: Executor, user_ids: Collection[int]) -> dict[int, str]:
    rows = await db.execute(select(User.id, User.name).where(User.id.in_(list(user_ids))))
    return {user_id: name for user_id, name in rows.all()}


async def alarm_candidates(db: Executor) -> Sequence[Any]:
    """The correspondence games in progress whose alarm for the move awaited was not given:
    id, table_id, black_id, white_id, variant, start_fen, ply_count, deadline_at,
    clock_base_s."""
    rows = await db.execute(
        select(
            Game.id,
            Game.table_id,
            Game.black_id,
            Game.white_id,
            Game.variant,
            Game.start_fen,
            Game.ply_count,
            Game.deadline_at,
            Game.clock_base_s,
        ).where(
            Game.status == GameStatus.PLAYING,
            Game.clock_base_s >= CORRESPONDENCE_FROM_S,
            Game.deadline_at.is_not(None),
            or_(Game.alarm_ply.is_(None), Game.alarm_ply != Game.ply_count),
        )
    )
    return rows.all()


async def mark_alarm(db: Executor, game_id: int, ply: int) -> bool:
    """Note the alarm of the move at `ply` given; False if the game has moved on (or the alarm
    was given meanwhile), in which case none is given."""
    result = await db.execute(
        update(Game)
        .where(
            Game.id == game_id,
            Game.status == GameStatus.PLAYING,
            Game.ply_count == ply,
            or_(Game.alarm_ply.is_(None), Game.alarm_ply != ply),
        )
        .values(alarm_ply=ply)
    )
    return bool(result.rowcount)  # type: ignore[attr-defined]


# --- conditional moves ---------------------------------------------------------------------


async def conditional(
    db: Executor, game_id: int, user_id: int, *, lock: bool = False
) -> ConditionalMoves | None:
    query = select(ConditionalMoves).where(
        ConditionalMoves.game_id == game_id, ConditionalMoves.user_id == user_id
    )
    if lock:
        query = query.with_for_update()
    return (await db.execute(query)).scalar_one_or_none()


async def put_conditional(
    session: AsyncSession,
    game_id: int,
    user_id: int,
    ply: int,
    lines: list[list[str]],
    at: datetime,
) -> None:
    """Store (or replace) a player's conditional moves; none at all: delete them."""
    await session.execute(
        delete(ConditionalMoves).where(
            ConditionalMoves.game_id == game_id, ConditionalMoves.user_id == user_id
        )
    )
    if lines:
        session.add(
            ConditionalMoves(game_id=game_id, user_id=user_id, ply=ply, lines=lines, updated_at=at)
        )
        await session.flush()
