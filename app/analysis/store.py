"""Storage of the games' analyses (`game_analyses`): one row per game, queued, claimed by a
worker under a lease (`FOR UPDATE SKIP LOCKED` on PostgreSQL, so that two processes never take
the same one; SQLite runs one writer at a time), its progress noted, its result stored."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import func, or_, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from app.db.models import Game, GameAnalysis

QUEUED, RUNNING, DONE, FAILED = "queued", "running", "done", "failed"


async def get(session: AsyncSession, game_id: int) -> GameAnalysis | None:
    return await session.get(GameAnalysis, game_id)


async def add(
    session: AsyncSession, game_id: int, user_id: int | None, nodes: int, total: int, now: datetime
) -> GameAnalysis:
    row = GameAnalysis(
        game_id=game_id,
        status=QUEUED,
        requested_by=user_id,
        requested_at=now,
        nodes=nodes,
        done=0,
        total=total,
    )
    session.add(row)
    await session.flush()
    return row


async def waiting_of(session: AsyncSession, user_id: int) -> int:
    """How many of the user's analyses are queued or running."""
    query = select(func.count()).where(
        GameAnalysis.requested_by == user_id, GameAnalysis.status.in_((QUEUED, RUNNING))
    )
    return int((await session.execute(query)).scalar_one())


async def ahead_of(session: AsyncSession, requested_at: datetime) -> int:
    """How many analyses wait in front of one asked for at `requested_at`."""
    query = select(func.count()).where(
        GameAnalysis.status.in_((QUEUED, RUNNING)), GameAnalysis.requested_at < requested_at
    )
    return int((await session.execute(query)).scalar_one())


async def claim(
    session: AsyncSession, worker: str, now: datetime, lease: timedelta
) -> tuple[GameAnalysis, Game] | None:
    """The oldest analysis waiting (queued, or running under a lease run out: its process
    died), taken by `worker` until `now + lease`, with its game; None if none waits."""
    query = (
        select(GameAnalysis)
        .where(
            or_(
                GameAnalysis.status == QUEUED,
                (GameAnalysis.status == RUNNING) & (GameAnalysis.lease_until < now),
            )
        )
        .order_by(GameAnalysis.requested_at, GameAnalysis.game_id)
        .limit(1)
    )
    if session.get_bind().dialect.name == "postgresql":
        query = query.with_for_update(skip_locked=True)
    row = (await session.execute(query)).scalar_one_or_none()
    if row is None:
        return None
    game = await session.get(Game, row.game_id)
    assert game is not None
    row.status, row.worker, row.lease_until = RUNNING, worker, now + lease
    row.started_at = row.started_at or now
    row.done = 0
    await session.flush()
    return row, game


async def progress(
    session: AsyncSession, game_id: int, worker: str, done: int, lease_until: datetime
) -> bool:
    """Note the positions searched and renew the lease; False if the analysis is no longer
    this worker's (its lease ran out and another took it)."""
    changed = await session.execute(
        update(GameAnalysis)
        .where(
            GameAnalysis.game_id == game_id,
            GameAnalysis.worker == worker,
            GameAnalysis.status == RUNNING,
        )
        .values(done=done, lease_until=lease_until)
    )
    return bool(changed.rowcount)  # type: ignore[attr-defined]


async def finish(
    session: AsyncSession, game_id: int, worker: str, values: dict[str, Any], now: datetime
) -> bool:
    """Store the result (`values`: status, start, plies, accuracies or error); False if the
    analysis is no longer this worker's."""
    changed = await session.execute(
        update(GameAnalysis)
        .where(
            GameAnalysis.game_id == game_id,
            GameAnalysis.worker == worker,
            GameAnalysis.status == RUNNING,
        )
        .values(**values, finished_at=now, worker=None, lease_until=None)
    )
    return bool(changed.rowcount)  # type: ignore[attr-defined]
