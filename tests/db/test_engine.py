"""The engine's SQLite connections: closing one that was stopped leaves nothing waiting that
could keep the server's event loop from ending, and closing or stopping one in the middle of a
read (what SQLAlchemy does when a task is cancelled during a query) leaves the database free
for the next writer at once."""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import text

from app.db.engine import Database

# A query that keeps the connection's thread busy while the connection is stopped and closed.
SLOW = (
    "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 3000000) "
    "SELECT count(*) FROM n"
)


async def test_a_stopped_connection_closes_at_once(tmp_path: Path) -> None:
    # When a task is cancelled while SQLAlchemy invalidates its connection, SQLAlchemy stops
    # the connection's thread and also closes it gracefully in a task of its own: that close
    # must end (plain aiosqlite's waits for ever for the thread that the stop ended).
    db = Database(f"sqlite+aiosqlite:///{tmp_path / 'c.db'}")
    try:
        async with db.engine.connect() as conn:
            raw = await conn.get_raw_connection()
            driver = raw.driver_connection
            assert driver is not None
            busy = asyncio.ensure_future(driver.execute(SLOW))
            await asyncio.sleep(0.02)  # the query runs in the connection's thread
            driver.stop()
            closing = asyncio.create_task(driver.close())
            done, _ = await asyncio.wait([closing], timeout=10)
            assert closing in done, "closing a stopped connection waited for ever"
            await asyncio.gather(busy, return_exceptions=True)
            await conn.invalidate()
    finally:
        await db.dispose()


async def _close(driver: Any) -> None:
    await driver.close()


async def _stop(driver: Any) -> None:
    stopped = driver.stop()
    if stopped is not None:
        await stopped


@pytest.mark.parametrize("end", [_close, _stop], ids=["closed", "stopped"])
async def test_a_connection_ended_in_the_middle_of_a_read_frees_the_database(
    tmp_path: Path, end: Callable[[Any], Awaitable[None]]
) -> None:
    # A task cancelled while its session reads: SQLAlchemy invalidates the connection, which
    # closes it (or, cancelled again, stops it) with the read's cursor still open. sqlite3
    # then keeps the connection as a zombie that holds its transaction, and the write lock
    # every session here takes (BEGIN IMMEDIATE), until the cursor is collected: every other
    # session waited on "database is locked".
    path = tmp_path / "c.db"
    db = Database(f"sqlite+aiosqlite:///{path}")
    try:
        async with db.session() as session:
            await session.execute(text("CREATE TABLE t (x INTEGER)"))
            for i in range(100):
                await session.execute(text("INSERT INTO t VALUES (:i)"), {"i": i})
            await session.commit()
        async with db.engine.connect() as conn:
            raw = await conn.get_raw_connection()
            driver = raw.driver_connection
            assert driver is not None
            await driver.execute("BEGIN IMMEDIATE")
            reading = await driver.execute("SELECT x FROM t")
            assert await reading.fetchone() == (0,)
            await end(driver)
            await conn.invalidate()
        other = sqlite3.connect(path, isolation_level=None, timeout=0.2)
        try:
            other.execute("BEGIN IMMEDIATE")  # "database is locked" while the zombie lives
            other.execute("ROLLBACK")
        finally:
            other.close()
        del reading
    finally:
        await db.dispose()
