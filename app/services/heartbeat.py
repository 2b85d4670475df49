"""Heartbeats: every server process notes in the database, every few seconds, that it is alive.

A process starting up reads them to learn whether the cluster kept running (another process beat
recently: a rolling restart, nothing to make up for) or was down, and since when (the newest
beat), so that game clocks do not run while no server was up (see `games.recover`).

Each start of a process is a new `instance` (a random id). A beat older than `FRESH_BEATS`
intervals is that of a process gone; a clean shutdown writes a last beat marked `stopped`.
Rows older than a day are pruned.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from sqlalchemy import delete, insert, select, text, update
from sqlalchemy.ext.asyncio import AsyncConnection

from app.db.engine import Database
from app.db.models import ServerHeartbeat

logger = logging.getLogger(__name__)

FRESH_BEATS = 3  # a process silent for this many intervals is gone
KEEP = timedelta(days=1)  # beats older than this are pruned


def new_instance() -> str:
    return secrets.token_hex(8)


def _aware(moment: datetime) -> datetime:
    """SQLite returns naive datetimes, which are UTC."""
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


@dataclass(frozen=True, slots=True)
class Others:
    """What the beats of the other instances say at start-up."""

    running: bool  # another process beat recently: the cluster never went down
    last_alive: datetime | None  # the newest beat (None: no server ever beat here)


async def lock(conn: AsyncConnection) -> None:
    """Make processes that start together take turns reading and writing beats (SQLite already
    serialises write transactions)."""
    if conn.dialect.name == "postgresql":
        await conn.execute(text("LOCK TABLE server_heartbeats IN SHARE ROW EXCLUSIVE MODE"))


async def write(conn: AsyncConnection, instance: str, at: datetime, stopped: bool = False) -> None:
    """Record the beat of `instance` (and drop those older than a day)."""
    written = await conn.execute(
        update(ServerHeartbeat)
        .where(ServerHeartbeat.instance == instance)
        .values(beat_at=at, stopped=stopped)
    )
    if written.rowcount == 0:
        await conn.execute(
            insert(ServerHeartbeat).values(instance=instance, beat_at=at, stopped=stopped)
        )
    await conn.execute(delete(ServerHeartbeat).where(ServerHeartbeat.beat_at < at - KEEP))


async def others(conn: AsyncConnection, instance: str, now: datetime, interval: float) -> Others:
    rows = (
        await conn.execute(
            select(ServerHeartbeat.beat_at, ServerHeartbeat.stopped).where(
                ServerHeartbeat.instance != instance
            )
        )
    ).all()
    beats = [(_aware(beat_at), stopped) for beat_at, stopped in rows]
    fresh_after = now - timedelta(seconds=FRESH_BEATS * interval)
    return Others(
        running=any(not stopped and beat_at >= fresh_after for beat_at, stopped in beats),
        last_alive=max((beat_at for beat_at, _ in beats), default=None),
    )


class Heartbeat:
    """The beating task of one process (its first beat is written by `games.recover`)."""

    def __init__(self, db: Database, interval: float, instance: str | None = None) -> None:
        self.db = db
        self.interval = interval
        self.instance = instance or new_instance()
        self._task: asyncio.Task[None] | None = None

    async def beat(self, stopped: bool = False) -> None:
        async with self.db.engine.begin() as conn:
            await write(conn, self.instance, datetime.now(UTC), stopped)

    async def _run(self) -> None:
        while True:
            await asyncio.sleep(self.interval)
            try:
                await self.beat()
            except Exception:  # the database may be back at the next beat
                logger.exception("cannot write the heartbeat")

    def start(self) -> None:
        self._task = asyncio.create_task(self._run(), name="heartbeat")

    async def stop(self) -> None:
        """Stop beating and write the last beat: clocks stop running from here."""
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None
        try:
            await self.beat(stopped=True)
        except Exception:
            logger.exception("cannot write the last heartbeat")
