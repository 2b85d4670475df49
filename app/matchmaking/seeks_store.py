"""Storage of quick-pairing seeks: the players waiting in each pool.

The pairing step (`app.matchmaking.pools`) reads a pool's seeks with `FOR UPDATE SKIP LOCKED`
(PostgreSQL): two processes pairing the same pool at once each take the rows the other has not
locked, so neither waits and no seek is taken twice. A pair's seeks are deleted in the
transaction that stores its game, on the condition that both rows are still there (`take`):
on SQLite, which has no row locks, that condition alone keeps a seek from being paired twice.
"""

from __future__ import annotations

from collections.abc import Collection
from datetime import datetime

from sqlalchemy import delete, func, select
from sqlalchemy.ext.asyncio import AsyncSession

from app.db.models import Seek, User
from app.live.log_store import Executor


async def put(
    session: AsyncSession,
    user_id: int,
    pool: str,
    rated: bool,
    rating: float,
    instance: str,
    at: datetime,
) -> None:
    """Wait in `pool`, instead of wherever the user waited before."""
    await session.execute(delete(Seek).where(Seek.user_id == user_id))
    session.add(
        Seek(
            user_id=user_id,
            pool=pool,
            rated=rated,
            rating=rating,
            instance=instance,
            created_at=at,
        )
    )
    await session.flush()


async def remove(db: Executor, user_id: int, keep: Collection[str] = ()) -> bool:
    """Stop waiting (but in the pools `keep`); False if the user was not waiting (paired
    meanwhile, or never)."""
    query = delete(Seek).where(Seek.user_id == user_id)
    if keep:
        query = query.where(Seek.pool.not_in(keep))
    result = await db.execute(query)
    return bool(result.rowcount)  # type: ignore[attr-defined]


async def pools(db: Executor) -> list[str]:
    """The pools where someone waits."""
    return list((await db.scalars(select(Seek.pool).distinct())).all())


async def lock_pool(db: Executor, pool: str) -> list[tuple[int, str, bool, float, datetime]]:
    """The pool's seeks no other transaction holds, locked until this one ends: (user, name,
    rated, rating, since), oldest first."""
    query = (
        select(Seek.user_id, User.name, Seek.rated, Seek.rating, Seek.created_at)
        .join(User, User.id == Seek.user_id)
        .where(Seek.pool == pool)
        .order_by(Seek.created_at, Seek.user_id)
        .with_for_update(skip_locked=True, of=Seek)
    )
    return [(r[0], r[1], r[2], r[3], r[4]) for r in (await db.execute(query)).all()]


async def take(db: Executor, user_ids: Collection[int]) -> bool:
    """Delete these seeks; False (delete nothing counted as done) unless all were there."""
    result = await db.execute(delete(Seek).where(Seek.user_id.in_(user_ids)))
    return int(result.rowcount) == len(user_ids)  # type: ignore[attr-defined]


async def remove_dead(db: Executor, alive: Collection[str], keep: Collection[str] = ()) -> int:
    """Delete the seeks of users whose server process is no longer alive (but in the pools
    `keep`)."""
    query = delete(Seek).where(Seek.instance.not_in(alive))
    if keep:
        query = query.where(Seek.pool.not_in(keep))
    result = await db.execute(query)
    return int(result.rowcount)  # type: ignore[attr-defined]


async def waiting(db: Executor) -> dict[str, int]:
    """How many wait in each pool."""
    rows = await db.execute(select(Seek.pool, func.count()).group_by(Seek.pool))
    return {pool: count for pool, count in rows.all()}
