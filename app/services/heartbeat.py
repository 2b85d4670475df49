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
server releases it when the process's connections drop. A beat counts as alive only while its
instance's lock is held. (A connection pooler in transaction mode between the server and
PostgreSQL would defeat the locks.) On SQLite, whose processes share one machine, each process
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
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import BinaryIO

try:
    import fcntl
except ImportError:  # not on POSIX: the beats alone decide on SQLite
    fcntl = None  # type: ignore[assignment]

from sqlalchemy import delete, func, insert, make_url, select, text, update
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncSession

from app.db.engine import Database
from app.db.models import ServerHeartbeat
from app.timeutil import as_utc, utcnow

logger = logging.getLogger(__name__)

FRESH_BEATS = 3  # a process silent for this many intervals is gone
LOCK_SPACE = 0x43484B52  # "CHKR": the first key of the instances' advisory locks
KEEP = timedelta(days=1)  # beats older than this are pruned


def new_instance() -> str:
    return secrets.token_hex(8)


@dataclass(frozen=True, slots=True)
class Load:
    """A process's load, written with each of its beats."""

    connections: int = 0
    connected_users: int = 0
    moves_last_minute: int = 0


@dataclass(frozen=True, slots=True)
class Others:
    """What the beats of the other instances say at start-up."""

    running: bool  # another process beat recently: the cluster never went down
    last_alive: datetime | None  # the newest beat (None: no server ever beat here)


def _lock_key(instance: str) -> int:
    """The second key of an instance's advisory lock: its id's first 32 bits, as an int4."""
    return int(instance[:8], 16) - 2**31


async def _holds_lock(conn: AsyncConnection, instance: str) -> bool:
    """Whether the process of `instance` is still connected to PostgreSQL (holds its lock).
    Taking the lock for the transaction's length tells without waiting: only a live process
    keeps it from us."""
    taken = await conn.scalar(
        text("SELECT pg_try_advisory_xact_lock(:space, :key)"),
        {"space": LOCK_SPACE, "key": _lock_key(instance)},
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
    """Record the beat of `instance` with its load (and drop beats older than a day)."""
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


async def others(
    conn: AsyncConnection, instance: str, now: datetime, interval: float, *, alone: bool = False
) -> Others:
    """What the other instances' beats say; `alone`: no other process is up (SQLite's file lock
    said so), whatever their beats."""
    rows = (
        await conn.execute(
            select(
                ServerHeartbeat.instance, ServerHeartbeat.beat_at, ServerHeartbeat.stopped
            ).where(ServerHeartbeat.instance != instance)
        )
    ).all()
    fresh_after = now - timedelta(seconds=FRESH_BEATS * interval)
    running = False
    for other, beat_at, stopped in rows:
        if alone or stopped or as_utc(beat_at) < fresh_after:
            continue
        if conn.dialect.name != "postgresql" or await _holds_lock(conn, other):
            running = True
            break
    return Others(
        running=running,
        last_alive=max((as_utc(beat_at) for _, beat_at, _ in rows), default=None),
    )


async def alive(db: AsyncConnection | AsyncSession, now: datetime, interval: float) -> set[str]:
    """The instances whose processes are up: a fresh beat, not the last one of a clean
    shutdown, and on PostgreSQL their lock still held (a crashed process's goes at once)."""
    fresh_after = now - timedelta(seconds=FRESH_BEATS * interval)
    rows = (
        (
            await db.execute(
                select(ServerHeartbeat.instance).where(
                    ServerHeartbeat.stopped.is_(False), ServerHeartbeat.beat_at >= fresh_after
                )
            )
        )
        .scalars()
        .all()
    )
    conn = db if isinstance(db, AsyncConnection) else await db.connection()
    if conn.dialect.name != "postgresql":
        return set(rows)
    return {instance for instance in rows if await _holds_lock(conn, instance)}


async def others_load(
    conn: AsyncConnection, instance: str, now: datetime, interval: float
) -> tuple[int, Load]:
    """How many other processes beat recently, and their load summed (as of their beats)."""
    fresh_after = now - timedelta(seconds=FRESH_BEATS * interval)
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
    ) -> None:
        self.db = db
        self.interval = interval
        self.instance = instance or new_instance()
        self.load = load  # what to write with each beat
        self._task: asyncio.Task[None] | None = None
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
            taken = await conn.scalar(
                text("SELECT pg_try_advisory_lock(:space, :key)"),
                {"space": LOCK_SPACE, "key": _lock_key(self.instance)},
            )
        except BaseException:
            await _discard(conn)
            raise
        if not taken:
            await _discard(conn)
            return False
        self._holder = conn
        return True

    async def _keep_lock(self) -> None:
        """After a beat: take the lock again if its connection was lost (PostgreSQL restarted).
        If someone holds it meanwhile (a starting process probing it), the next beat retries."""
        if self.db.engine.dialect.name != "postgresql":
            return
        if self._holder is not None:
            try:
                await self._holder.execute(text("SELECT 1"))
                return
            except Exception:  # the connection is gone, and the lock with it
                await self.release()
        await self._take_lock()

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
            await write(conn, self.instance, utcnow(), stopped, load)

    async def _run(self) -> None:
        while True:
            await asyncio.sleep(self.interval)
            try:
                await self.beat()
                async with asyncio.timeout(self.interval):
                    await self._keep_lock()
            except Exception:  # the database may be back at the next beat
                logger.exception("cannot write the heartbeat")

    def start(self) -> None:
        """Beat from now on (recovery is done). On SQLite, let other processes share the file's
        lock."""
        if self.alone and self._lock_file is not None and fcntl is not None:
            fcntl.flock(self._lock_file, fcntl.LOCK_SH)
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
        await self.release()
