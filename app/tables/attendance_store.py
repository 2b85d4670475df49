"""Storage of attendance: one row per server process, table and seated user, open (`until`
None) while that user watches the table from that process, else noting when the watch ended."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import delete, select, tuple_, update
from sqlalchemy.ext.asyncio import AsyncSession

from app.db.models import Attendance, ServerHeartbeat
from app.live.log_store import Executor

Seat = tuple[int, int]  # (table, user)


def _key(table_id: int, user_id: int, instance: str) -> tuple[Any, ...]:
    return (
        Attendance.table_id == table_id,
        Attendance.user_id == user_id,
        Attendance.instance == instance,
    )


async def close(
    session: AsyncSession, table_id: int, user_id: int, instance: str, at: datetime
) -> bool:
    """End this process's watch of the seat at `at` (a watch already ended is moved to `at`).
    Returns whether the process had a row of it."""
    ended = await session.execute(
        update(Attendance).where(*_key(table_id, user_id, instance)).values(until=at)
    )
    return bool(ended.rowcount)  # type: ignore[attr-defined]


def add_closed(
    session: AsyncSession, table_id: int, user_id: int, instance: str, at: datetime
) -> None:
    """A watch of the seat from this process that ended at `at` and was never noted open."""
    session.add(Attendance(table_id=table_id, user_id=user_id, instance=instance, until=at))


async def open_(session: AsyncSession, table_id: int, user_id: int, instance: str) -> None:
    """Open (or reopen) this process's watch of the seat."""
    key = _key(table_id, user_id, instance)
    reopened = await session.execute(update(Attendance).where(*key).values(until=None))
    if reopened.rowcount == 0:  # type: ignore[attr-defined]
        session.add(Attendance(table_id=table_id, user_id=user_id, instance=instance, until=None))


async def of_seats(db: Executor, seats: list[Seat]) -> Sequence[Any]:
    """Every row of these seats: table, user, instance, until and its process's last beat."""
    rows = await db.execute(
        select(
            Attendance.table_id,
            Attendance.user_id,
            Attendance.instance,
            Attendance.until,
            ServerHeartbeat.beat_at,
        )
        .outerjoin(ServerHeartbeat, ServerHeartbeat.instance == Attendance.instance)
        .where(tuple_(Attendance.table_id, Attendance.user_id).in_(seats))
    )
    return rows.all()


async def forget(db: Executor, table_id: int, user_id: int | None = None) -> None:
    """Drop the rows of a seat given up (or of a whole table)."""
    query = delete(Attendance).where(Attendance.table_id == table_id)
    if user_id is not None:
        query = query.where(Attendance.user_id == user_id)
    await db.execute(query)
