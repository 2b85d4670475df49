"""The locks that show a server process is alive: on SQLite a process starting while another
one recovers alone waits for it, then sees it; on PostgreSQL a process whose lock's connection
was lost takes the lock again at its next beat."""

from __future__ import annotations

import asyncio

import pytest
from sqlalchemy import text

from app.db.engine import Database
from app.live.heartbeat import LOCK_SPACE, AliveCache, Heartbeat, _lock_key


async def test_a_process_starting_while_one_recovers_alone_waits_and_is_not_alone(
    db: Database,
) -> None:
    if db.engine.dialect.name != "sqlite":
        pytest.skip("the file lock is SQLite's")
    first, second = Heartbeat(db, 30.0), Heartbeat(db, 30.0)
    await first.hold()
    assert first.alone
    starting = asyncio.create_task(second.hold())
    await asyncio.sleep(0.3)
    assert not starting.done()  # the first is still recovering: the second waits
    first.start()  # recovery done
    try:
        await asyncio.wait_for(starting, 5)
        assert not second.alone
    finally:
        await first.stop()
        await second.release()
    third = Heartbeat(db, 30.0)
    await third.hold()  # both gone: the next process is alone again
    assert third.alone
    await third.release()


async def held_by_us(db: Database, instance: str) -> bool:
    async with db.engine.connect() as conn:
        count = await conn.scalar(
            text(
                "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND granted"
                " AND classid = (:space)::bigint::oid"
                " AND objid = ((:key)::bigint & 4294967295)::oid AND objsubid = 2"
            ),
            {"space": LOCK_SPACE, "key": _lock_key(instance)},
        )
    return bool(count == 1)


async def test_a_lost_lock_is_taken_again_at_the_next_beat(db: Database) -> None:
    if db.engine.dialect.name != "postgresql":
        pytest.skip("the advisory lock is PostgreSQL's")
    beats = Heartbeat(db, 0.1)
    await beats.hold()
    try:
        assert await held_by_us(db, beats.instance)
        async with db.engine.connect() as conn:
            await conn.execute(
                text(
                    # This database's only: other tests' servers hold such locks too.
                    "SELECT pg_terminate_backend(pid) FROM pg_locks"
                    " WHERE locktype = 'advisory' AND classid = (:space)::bigint::oid"
                    " AND database = (SELECT oid FROM pg_database"
                    " WHERE datname = current_database())"
                ),
                {"space": LOCK_SPACE},
            )
        for _ in range(50):
            if not await held_by_us(db, beats.instance):
                break
            await asyncio.sleep(0.05)
        assert not await held_by_us(db, beats.instance)
        instance = beats.instance
        beats.start()
        for _ in range(100):
            if await held_by_us(db, instance):
                break
            await asyncio.sleep(0.05)
        assert await held_by_us(db, instance) and beats.instance == instance
    finally:
        await beats.stop()
    assert not await held_by_us(db, beats.instance)


async def test_the_alive_cache_reads_the_beats_at_most_once_a_window(db: Database) -> None:
    """Game starts ask which processes are up through the cache: a process that stops is seen
    gone once the window has passed (or the cache is cleared), not at every start."""
    cache = AliveCache(0.3)

    async def alive() -> frozenset[str]:
        async with db.engine.connect() as conn:
            return await cache.get(conn, 30.0)

    first, second = Heartbeat(db, 30.0), Heartbeat(db, 30.0)
    try:
        await first.hold()
        first.start()
        await first.beat()
        assert first.instance in await alive()
        await first.stop()  # its last beat says it stopped
        assert first.instance in await alive()  # within the window
        await asyncio.sleep(0.35)
        assert first.instance not in await alive()
        await second.hold()
        second.start()
        await second.beat()
        assert second.instance not in await alive()  # within the new window
        cache.clear()
        assert await alive() == {second.instance}
    finally:
        await first.stop()
        await second.stop()
