"""The engine's SQLite connections: a task cancelled in the middle of a query leaves nothing
behind that could keep the server's event loop from ending."""

from __future__ import annotations

import asyncio
from pathlib import Path

from sqlalchemy import text

from app.db.engine import Database

# A query that keeps SQLite busy long enough to be cancelled in the middle.
SLOW = text(
    "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 3000000) "
    "SELECT count(*) FROM n"
)


async def _query(db: Database) -> None:
    async with db.engine.connect() as conn:
        await conn.execute(SLOW)


async def test_a_query_cancelled_twice_leaves_no_task_waiting_forever(tmp_path: Path) -> None:
    # Cancelled once, SQLAlchemy invalidates the connection and starts closing it gracefully;
    # cancelled again, it stops the connection's thread. The graceful close must still end.
    db = Database(f"sqlite+aiosqlite:///{tmp_path / 'c.db'}")
    before = asyncio.all_tasks()
    try:
        for _ in range(5):
            task = asyncio.create_task(_query(db))
            await asyncio.sleep(0.05)
            task.cancel()
            await asyncio.sleep(0)
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)
        left = asyncio.all_tasks() - before - {asyncio.current_task()}
        if left:
            await asyncio.wait(left, timeout=10)
        stuck = [t for t in left if not t.done()]
        assert not stuck, f"tasks still waiting after the cancelled queries: {stuck}"
    finally:
        await db.dispose()
