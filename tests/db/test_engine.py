"""The engine's SQLite connections: closing one that was stopped leaves nothing waiting that
could keep the server's event loop from ending."""

from __future__ import annotations

import asyncio
from pathlib import Path

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
