"""Heartbeats: every server process notes in the database, every few seconds, that it is alive.

A process starting up reads them to learn whether the cluster kept running (another process beat
recently: a rolling restart, nothing to make up for) or was down, and since when (the newest
beat), so that game clocks do not run while no server was up (see `games.recover`).

Each start of a process is a new `instance` (a random id). A beat older than `FRESH_BEATS`
intervals is that of a process gone; a clean shutdown writes a last beat marked `stopped`.
Rows older than a day are pruned.

A process that crashed (`kill -9`, out of memory) writes no last beat, and its recent beats alone
would make it look alive for up to `FRESH_BEATS` intervals: a restart quicker than that would
charge the downtime to the players. On PostgreSQL each process therefore also holds, for its
lifetime, a session advisory lock named after its instance, on a connection of its own; the
server releases it when the process's connections drop. A process whose lock is not held is
gone once its last beat is `LOCK_LOSS_BEATS` intervals old (a cut connection drops the lock as a
crash does, but a live process takes it again within a second and goes on beating), and one that
holds it is alive however long it has not beaten (up to `BUSY`): a process whose event loop is
held up is busy, not gone. (A
connection pooler in transaction mode between the server and PostgreSQL would defeat the
locks.) On SQLite, whose processes share one machine, each process
holds a shared `flock` on a file beside the database (`<database>.live`): a process that can
lock it exclusively at start-up is alone, and every other beat is that of a process gone; it
keeps the lock exclusive until its recovery is done, so that a process starting meanwhile waits
and then sees its beat.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import BinaryIO

try:
    import fcntl
except ImportError:  # not on POSIX: the beats alone decide on SQLite
    fcntl = None  # type: ignore[assignment]

from sqlalchemy import make_url
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncSession

from app.clock import Clock
from app.db.engine import Database, ping
from app.live import heartbeat_store as heartbeats
from app.live.heartbeat_store import LOCK_SPACE, Load, lock
from app.live.heartbeat_store import lock_key as _lock_key
from app.timeutil import as_utc

__all__ = [
    "BUSY",
    "FRESH_BEATS",
    "LOCK_CHECK_SECONDS",
    "LOCK_LOSS_BEATS",
    "LOCK_SPACE",
    "Heartbeat",
    "Load",
    "Others",
    "_lock_key",
    "alive",
    "lock",
    "new_instance",
    "others",
    "others_load",
    "write",
]

logger = logging.getLogger(__name__)

FRESH_BEATS = 3  # a process silent for this many intervals is gone
LOCK_LOSS_BEATS = 2  # … and one without its lock, once silent for this many
LOCK_CHECK_SECONDS = 1.0  # how often a process makes sure it still holds its lock
BUSY = timedelta(minutes=10)
"""On PostgreSQL, a process holding its lock is alive though it has not beaten for this long
(busy); beyond, it is taken for hung, its users offline."""


def new_instance() -> str:
    return secrets.token_hex(8)


@dataclass(frozen=True, slots=True)
class Others:
    """What the beats of the other instances say at start-up."""

    running: bool  # another process beat recently: the cluster never went down
    last_alive: datetime | None  # the newest beat (None: no server ever beat here)


def _fresh_after(now: datetime, interval: float) -> datetime:
    return now - timedelta(seconds=FRESH_BEATS * interval)


async def write(
    conn: AsyncConnection, instance: str, at: datetime, stopped: bool = False, load: Load = Load()
) -> None:
    """Record the beat of `instance` with its load (and drop beats older than a day)."""
    await heartbeats.write(conn, instance, at, stopped, load)


async def others(
    conn: AsyncConnection, instance: str, now: datetime, interval: float, *, alone: bool = False
) -> Others:
    """What the other instances' beats say; `alone`: no other process is up (SQLite's file lock
    said so), whatever their beats."""
    beats = await heartbeats.others(conn, instance)
    fresh_after = _fresh_after(now, interval)
    running = False
    for beat in beats:
        if alone or beat.stopped or as_utc(beat.beat_at) < fresh_after:
            continue
        if conn.dialect.name != "postgresql" or await heartbeats.holds_lock(conn, beat.instance):
            running = True
            break
    return Others(
        running=running,
        last_alive=max((as_utc(beat.beat_at) for beat in beats), default=None),
    )


async def alive(db: AsyncConnection | AsyncSession, now: datetime, interval: float) -> set[str]:
    """The instances whose processes are up, their last beat not that of a clean shutdown: on
    PostgreSQL those whose last beat is recent or whose lock is held (however old their beat,
    up to `BUSY`); on SQLite those whose beat is fresh.

    A process whose event loop is held up (a long computation, its machine paused) beats no
    more, but its connection stays open and its lock held: it is busy, not gone, and its users
    must not be taken offline, nor their games marked as abandoned. A lock not held proves
    nothing alone: a cut connection (a failover, a network blip, an administrator's
    `pg_terminate_backend`) drops it as a crash does. A live process takes it again within
    `LOCK_CHECK_SECONDS` and beats every `interval`; a crashed one beats no more. So a process
    without its lock is gone once its last beat is `LOCK_LOSS_BEATS` intervals old: a crash is
    seen within two intervals, and a cut is never taken for one. On SQLite no lock tells one
    process from another, so a process silent for `FRESH_BEATS` intervals counts as gone."""
    conn = db if isinstance(db, AsyncConnection) else await db.connection()
    if conn.dialect.name != "postgresql":
        return set(await heartbeats.fresh(db, _fresh_after(now, interval)))
    beats = await heartbeats.fresh(db, now - BUSY)
    recent = now - timedelta(seconds=LOCK_LOSS_BEATS * interval)
    return {
        instance
        for instance, beat_at in beats.items()
        if as_utc(beat_at) >= recent or await heartbeats.holds_lock(conn, instance)
    }


class AliveCache:
    """`alive`, read at most once per `seconds` (for hot paths such as game starts, which ask
    whether a player is connected to another process): a process that crashed is seen gone by
    them at most that much later than by a fresh read."""

    def __init__(self, seconds: float, clock: Clock | None = None) -> None:
        self.seconds = seconds
        self.clock = clock or Clock()
        self._read_at = float("-inf")
        self._alive: frozenset[str] = frozenset()

    async def get(self, db: AsyncConnection | AsyncSession, interval: float) -> frozenset[str]:
        now = self.clock.monotonic()
        if now - self._read_at >= self.seconds:
            self._alive = frozenset(await alive(db, self.clock.now(), interval))
            self._read_at = now
        return self._alive

    def clear(self) -> None:
        self._read_at = float("-inf")


async def others_load(
    conn: AsyncConnection, instance: str, now: datetime, interval: float
) -> tuple[int, Load]:
    """How many other processes beat recently, and their load summed (as of their beats)."""
    return await heartbeats.others_load(conn, instance, _fresh_after(now, interval))


async def _discard(conn: AsyncConnection) -> None:
    """Close a connection for good: it does not go back to the pool."""
    with contextlib.suppress(Exception):
        await conn.invalidate()
    with contextlib.suppress(Exception):
        await conn.close()


class Heartbeat:
    """The beating task of one process (its first beat is written by `games.recover`), and the
    lock that shows it is alive: on PostgreSQL a connection holding its instance's advisory
    lock, on SQLite the shared lock of the database's `.live` file."""

    def __init__(
        self,
        db: Database,
        interval: float,
        instance: str | None = None,
        load: Callable[[], Load] = Load,
        clock: Clock | None = None,
        on_regained: Callable[[], Awaitable[object]] | None = None,
    ) -> None:
        self.db = db
        self.interval = interval
        self.clock = clock or Clock()
        self.instance = instance or new_instance()
        self.load = load  # what to write with each beat
        self._task: asyncio.Task[None] | None = None
        self._watch: asyncio.Task[None] | None = None
        # Called when the lock was taken again after its connection was lost.
        self.on_regained = on_regained
        self._holder: AsyncConnection | None = None
        self._lock_file: BinaryIO | None = None
        self.alone = False  # SQLite: no other process had the database open at start-up

    async def hold(self) -> None:
        """Take this instance's lock, before recovery and the first beat. On SQLite a process
        that finds itself alone keeps the file's lock exclusive until `start`, so that one
        starting meanwhile waits and then sees this one's beat."""
        if self.db.engine.dialect.name == "sqlite":
            self._lock_file = await asyncio.to_thread(self._hold_file)
        elif self.db.engine.dialect.name == "postgresql":
            while not await self._take_lock():
                # Another instance's id begins the same way (one chance in 2**32): a new id.
                self.instance = new_instance()

    async def _take_lock(self) -> bool:
        """Open the lock's connection and take the instance's advisory lock on it."""
        conn = await self.db.engine.connect()
        try:
            conn = await conn.execution_options(isolation_level="AUTOCOMMIT")
            taken = await heartbeats.take_lock(conn, self.instance)
        except BaseException:
            await _discard(conn)
            raise
        if not taken:
            await _discard(conn)
            return False
        self._holder = conn
        return True

    async def _keep_lock(self) -> bool:
        """Take the lock again if its connection was lost (cut, or PostgreSQL restarted);
        whether it was taken again. If someone holds it meanwhile (a starting process probing
        it), the next check retries."""
        if self.db.engine.dialect.name != "postgresql":
            return False
        if self._holder is not None:
            try:
                await ping(self._holder)
                return False
            except Exception:  # the connection is gone, and the lock with it
                await self.release()
                logger.warning("the liveness lock's connection was lost: taking it again")
        return await self._take_lock()

    def _hold_file(self) -> BinaryIO | None:
        """Lock the SQLite database's `.live` file: exclusively if nobody else has it (this
        process is alone), else shared."""
        database = make_url(self.db.url).database
        if not database or database == ":memory:" or database.startswith("file:"):
            self.alone = database in (None, "", ":memory:")  # no other process can share it
            return None
        if fcntl is None:
            return None
        try:
            file = open(f"{database}.live", "ab")  # noqa: SIM115 (held until `stop`)
        except OSError as exc:
            logger.warning("cannot open the liveness lock of %s: %s", database, exc)
            return None
        try:
            try:
                fcntl.flock(file, fcntl.LOCK_EX | fcntl.LOCK_NB)
                self.alone = True
            except BlockingIOError:
                fcntl.flock(file, fcntl.LOCK_SH)  # waits while a process alone starts up
        except OSError as exc:  # e.g. no locks on this file system: the beats alone decide
            logger.warning("cannot lock %s.live: %s", database, exc)
            file.close()
            return None
        return file

    async def release(self) -> None:
        """Drop the lock's connection (closing it releases the lock), and the file's lock."""
        holder, self._holder = self._holder, None
        if holder is not None:
            await _discard(holder)
        if self._lock_file is not None:
            self._lock_file.close()
            self._lock_file = None

    async def beat(self, stopped: bool = False) -> None:
        load = Load() if stopped else self.load()
        async with self.db.engine.begin() as conn:
            await write(conn, self.instance, self.clock.now(), stopped, load)

    async def _run(self) -> None:
        while True:
            await self.clock.sleep(self.interval)
            try:
                await self.beat()
            except Exception:  # the database may be back at the next beat
                logger.exception("cannot write the heartbeat")

    async def _watch_lock(self) -> None:
        """Every `LOCK_CHECK_SECONDS`, make sure the lock is still held; if its connection was
        cut, take it again at once, beat, and tell `on_regained` (others may have taken this
        process for gone meanwhile and its users with it)."""
        every = min(LOCK_CHECK_SECONDS, self.interval)
        while True:
            await self.clock.sleep(every)
            try:
                async with self.clock.timeout(self.interval):
                    regained = await self._keep_lock()
                if regained:
                    await self.beat()
                    if self.on_regained is not None:
                        await self.on_regained()
            except Exception:  # the database may be back at the next check
                logger.warning("cannot take the liveness lock again; retrying", exc_info=True)

    def start(self) -> None:
        """Beat from now on (recovery is done). On SQLite, let other processes share the file's
        lock."""
        if self.alone and self._lock_file is not None and fcntl is not None:
            fcntl.flock(self._lock_file, fcntl.LOCK_SH)
        self._task = asyncio.create_task(self._run(), name="heartbeat")
        self._watch = asyncio.create_task(self._watch_lock(), name="liveness-lock")

    async def stop(self) -> None:
        """Stop beating and write the last beat: clocks stop running from here."""
        for task in (self._task, self._watch):
            if task is not None:
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task
        self._task = self._watch = None
        try:
            await self.beat(stopped=True)
        except Exception:
            logger.exception("cannot write the last heartbeat")
        await self.release()
