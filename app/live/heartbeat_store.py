"""Storage of the server processes' heartbeats (`server_heartbeats`) and of the PostgreSQL
advisory locks that show a process is still connected.

Each process has one row, keyed by its `instance` id, rewritten with every beat together with
its load; rows older than `KEEP` are pruned by the writes. An instance's lock is the session
advisory lock `(LOCK_SPACE, lock_key(instance))`: held by the process for its lifetime on a
connection of its own, and probed by the others without waiting. What the beats mean (who is
alive, how long the cluster was down) is decided by `app.live.heartbeat`.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import delete, func, insert, select, text, update
from sqlalchemy.ext.asyncio import AsyncConnection

from app.db.models import ServerHeartbeat
from app.live.log_store import Executor

LOCK_SPACE = 0x43484B52  # "CHKR": the first key of the instances' advisory locks
KEEP = timedelta(days=1)  # beats older than this are pruned


@dataclass(frozen=True, slots=True)
class Load:
    """A process's load, written with each of its beats."""

    connections: int = 0
    connected_users: int = 0
    moves_last_minute: int = 0


@dataclass(frozen=True, slots=True)
class Beat:
    """One process's latest beat."""

    instance: str
    beat_at: datetime
    stopped: bool


def lock_key(instance: str) -> int:
    """The second key of an instance's advisory lock: its id's first 32 bits, as an int4."""
    return int(instance[:8], 16) - 2**31


async def take_lock(conn: AsyncConnection, instance: str) -> bool:
    """Take the instance's session advisory lock on `conn` (in autocommit), without waiting;
    False if another connection holds it."""
    taken = await conn.scalar(
        text("SELECT pg_try_advisory_lock(:space, :key)"),
        {"space": LOCK_SPACE, "key": lock_key(instance)},
    )
    return bool(taken)


async def holds_lock(conn: AsyncConnection, instance: str) -> bool:
    """Whether the process of `instance` is still connected to PostgreSQL (holds its lock).
    Taking the lock, shared, for the transaction's length tells without waiting: only the
    process's own exclusive hold keeps it from us, and other processes asking at the same
    time (shared too) do not."""
    taken = await conn.scalar(
        text("SELECT pg_try_advisory_xact_lock_shared(:space, :key)"),
        {"space": LOCK_SPACE, "key": lock_key(instance)},
    )
    return not taken


async def lock(conn: AsyncConnection) -> None:
    """Make processes that start together take turns reading and writing beats (SQLite already
    serialises write transactions)."""
    if conn.dialect.name == "postgresql":
        await conn.execute(text("LOCK TABLE server_heartbeats IN SHARE ROW EXCLUSIVE MODE"))


async def write(
    conn: AsyncConnection, instance: str, at: datetime, stopped: bool = False, load: Load = Load()
) -> None:
    """Record the beat of `instance` with its load (and drop beats older than `KEEP`)."""
    values = {
        "beat_at": at,
        "stopped": stopped,
        "connections": load.connections,
        "connected_users": load.connected_users,
        "moves_last_minute": load.moves_last_minute,
    }
    written = await conn.execute(
        update(ServerHeartbeat).where(ServerHeartbeat.instance == instance).values(values)
    )
    if written.rowcount == 0:
        await conn.execute(insert(ServerHeartbeat).values(instance=instance, **values))
    await conn.execute(delete(ServerHeartbeat).where(ServerHeartbeat.beat_at < at - KEEP))


async def others(conn: AsyncConnection, instance: str) -> list[Beat]:
    """The latest beat of every other instance."""
    rows = await conn.execute(
        select(ServerHeartbeat.instance, ServerHeartbeat.beat_at, ServerHeartbeat.stopped).where(
            ServerHeartbeat.instance != instance
        )
    )
    return [Beat(other, beat_at, stopped) for other, beat_at, stopped in rows.all()]


async def of(db: Executor, instances: set[str]) -> dict[str, Beat]:
    """The latest beat of each of these instances (those that have one)."""
    rows = await db.execute(
        select(ServerHeartbeat.instance, ServerHeartbeat.beat_at, ServerHeartbeat.stopped).where(
            ServerHeartbeat.instance.in_(instances)
        )
    )
    return {other: Beat(other, beat_at, stopped) for other, beat_at, stopped in rows.all()}


async def fresh(db: Executor, fresh_after: datetime) -> dict[str, datetime]:
    """The instances that beat since `fresh_after`, their last beat not a clean shutdown's,
    with that beat's time."""
    rows = await db.execute(
        select(ServerHeartbeat.instance, ServerHeartbeat.beat_at).where(
            ServerHeartbeat.stopped.is_(False), ServerHeartbeat.beat_at >= fresh_after
        )
    )
    return {instance: beat_at for instance, beat_at in rows.all()}


async def others_load(
    conn: AsyncConnection, instance: str, fresh_after: datetime
) -> tuple[int, Load]:
    """How many other processes beat since `fresh_after` (and did not stop), and their load
    summed (as of their beats)."""
    row = (
        await conn.execute(
            select(
                func.count(),
                func.coalesce(func.sum(ServerHeartbeat.connections), 0),
                func.coalesce(func.sum(ServerHeartbeat.connected_users), 0),
                func.coalesce(func.sum(ServerHeartbeat.moves_last_minute), 0),
            ).where(
                ServerHeartbeat.instance != instance,
                ServerHeartbeat.stopped.is_(False),
                ServerHeartbeat.beat_at >= fresh_after,
            )
        )
    ).one()
    return int(row[0]), Load(int(row[1]), int(row[2]), int(row[3]))
