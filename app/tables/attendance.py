"""Attendance: whether the people seated at a table without a game in progress still watch it.

A seated player's connections that watch their table are noted per server process (one
`attendance` row per process, table and user); when the last of them stops watching there, the
row keeps when (`until`). A seat is attended while some live process has its holder's row
open; otherwise it has been unattended since the newest `until` (or, for a process that is
gone, its last heartbeat), and the sweep (`app.tables.presence`) stands its holder up once
`disconnect_grace_seconds` have passed. Spectators are not noted: only seats need it.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime

from app.live.liveplay import LivePlay
from app.live.log_store import Executor
from app.play import tables_store as stored_tables
from app.tables import attendance_store as stored
from app.timeutil import as_unix

Seat = tuple[int, int]  # (table, user)


async def note(live: LivePlay, table_id: int, user_id: int, watching: bool) -> bool:
    """Record whether `user_id` watches `table_id` from this process now: a seated player's
    watch opens (or reopens) this process's row; the end of a watch closes it. Returns
    whether the row is open now."""
    async with live.db.session() as session:
        if not watching:  # a watch whose opening was never noted still ends with a row
            at = live.clock.now()
            had = await stored.close(session, table_id, user_id, live.instance, at)
            if not had and await stored_tables.is_seated(session, table_id, user_id):
                stored.add_closed(session, table_id, user_id, live.instance, at)
            await session.commit()
            return False
        if not await stored_tables.is_seated(session, table_id, user_id):
            return False  # a spectator: nothing to keep
        await stored.open_(session, table_id, user_id, live.instance)
        await session.commit()
    return True


async def unattended(
    db: Executor, seats: Iterable[Seat], alive: set[str]
) -> dict[Seat, float | None]:
    """For each seat with attendance rows: None if its holder watches the table from a live
    process, else since when (Unix seconds) nobody does. Seats without rows are left out."""
    wanted = sorted(set(seats))
    if not wanted:
        return {}
    rows = await stored.of_seats(db, wanted)
    found: dict[Seat, float | None] = {}
    watched: set[Seat] = set()
    for table_id, user_id, instance, until, beat_at in rows:
        seat = (table_id, user_id)
        if until is None and instance in alive:
            watched.add(seat)
            continue
        ended = _ended(until, beat_at)
        found[seat] = max(found.get(seat) or 0.0, ended)
    for seat in watched:
        found[seat] = None
    return found


def _ended(until: datetime | None, beat_at: datetime | None) -> float:
    """When a row's watch ended: its `until`, or its gone process's last beat."""
    if until is not None:
        return as_unix(until)
    return as_unix(beat_at) if beat_at is not None else 0.0


async def forget(db: Executor, table_id: int, user_id: int | None = None) -> None:
    """In the caller's transaction: drop the rows of a seat given up (or of a whole table)."""
    await stored.forget(db, table_id, user_id)
