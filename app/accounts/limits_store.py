"""Storage of the abuse counters (`rate_limits` rows), shared by every server process.

The locking upsert is stated here once: `lock` creates or locks each counter with `INSERT …
ON CONFLICT (key) DO UPDATE` (PostgreSQL locks the row it conflicts with until the commit;
SQLite runs one write transaction at a time), in key order, so two transactions never wait for
each other in a cycle. `prune` skips locked rows, so it never waits at all. What the counts mean
is `app.accounts.limits`'s business.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import delete, select, update
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.ext.asyncio import AsyncSession

from app.db.models import RateLimit

PRUNE_BATCH = 500


@dataclass
class Counter:
    """A `rate_limits` row as locked for this transaction."""

    key: str
    hits: float
    at: datetime | None
    trusted_until: datetime | None


async def lock(session: AsyncSession, keys: Iterable[str], now: datetime) -> dict[str, Counter]:
    """Create or lock the counters `keys` for the rest of the transaction, in key order."""
    dialect = session.get_bind().dialect.name
    insert = postgresql.insert if dialect == "postgresql" else sqlite.insert
    counters = {}
    for key in sorted(set(keys)):
        new = insert(RateLimit).values(key=key, hits=0.0, expires_at=now)
        upsert = new.on_conflict_do_update(
            index_elements=[RateLimit.key], set_={"key": new.excluded.key}
        ).returning(RateLimit.hits, RateLimit.at, RateLimit.trusted_until)
        row = (await session.execute(upsert)).one()
        counters[key] = Counter(key, row.hits, row.at, row.trusted_until)
    return counters


async def store(session: AsyncSession, counter: Counter, expires_at: datetime) -> None:
    """Write a locked counter back; the row may go once `expires_at` has passed."""
    await session.execute(
        update(RateLimit)
        .where(RateLimit.key == counter.key)
        .values(
            hits=counter.hits,
            at=counter.at,
            trusted_until=counter.trusted_until,
            expires_at=expires_at,
        )
    )


async def prune(session: AsyncSession, now: datetime) -> None:
    """Delete a batch of counters expired by `now`, skipping those locked by others."""
    expired = (
        select(RateLimit.key)
        .where(RateLimit.expires_at < now)
        .limit(PRUNE_BATCH)
        .with_for_update(skip_locked=True)
    )
    await session.execute(delete(RateLimit).where(RateLimit.key.in_(expired)))
