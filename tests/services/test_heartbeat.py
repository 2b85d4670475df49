"""The locks that show a server process is alive: on SQLite a process starting while another
one recovers alone waits for it, then sees it; on PostgreSQL a process whose lock's connection
was lost takes the lock again at its next beat."""

from __future__ import annotations

import asyncio
import time
from datetime import timedelta

import pytest
from sqlalchemy import text

from app.db import heartbeats
from app.db import presence as presence_db
from app.db.engine import Database
from app.db.models import Presence, User
from app.services import heartbeat
from app.services.heartbeat import LOCK_SPACE, Heartbeat, _lock_key, new_instance
from app.timeutil import as_datetime


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
                    "SELECT pg_terminate_backend(pid) FROM pg_locks"
                    " WHERE locktype = 'advisory' AND classid = (:space)::bigint::oid"
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


async def test_who_is_online_in_one_query_agrees_with_the_live_processes(db: Database) -> None:
    """`presence.online_live` (a game start's check of the players not connected here) answers
    in one query what the beats and the locks say step by step: users of this process, and of a
    process that beats and (on PostgreSQL) holds its lock, are online; users of a process that
    stopped, whose beats are stale, or (on PostgreSQL) whose lock is gone, are not."""
    postgres = db.engine.dialect.name == "postgresql"
    now = as_datetime(time.time())
    me, live, stopped, stale, crashed = (new_instance() for _ in range(5))
    async with db.session() as session:
        users = {
            name: User(name=f"online-{name}", kind="guest")
            for name in ("here", "live", "stopped", "stale", "crashed", "nowhere", "two")
        }
        session.add_all(users.values())
        await session.flush()
        conn = await session.connection()
        for instance, at, stop in (
            (me, now, False),
            (live, now, False),
            (stopped, now, True),
            (stale, now - timedelta(minutes=5), False),
            (crashed, now, False),
        ):
            await heartbeats.write(conn, instance, at, stop)
        for name, instance in (
            ("here", me),
            ("live", live),
            ("stopped", stopped),
            ("stale", stale),
            ("crashed", crashed),
            ("two", crashed),
            ("two", live),
        ):
            session.add(Presence(instance=instance, user_id=users[name].id, since=now))
        await session.commit()
    # A live process holds its lock on a connection of its own; a crashed one's went with it.
    holder = await db.engine.connect() if postgres else None
    try:
        if holder is not None:
            await holder.execution_options(isolation_level="AUTOCOMMIT")
            assert await heartbeats.take_lock(holder, live)
        ids = [user.id for user in users.values()]
        cutoff = heartbeat.fresh_after(now, 5.0)
        async with db.session() as session:
            one_query = await presence_db.online_live(session, ids, me, cutoff)
        async with db.session() as session:
            alive = await heartbeat.alive(session, now, 5.0)
            step_by_step = await presence_db.online(session, ids, alive | {me})
        expected = {"here", "live", "two"} | (set() if postgres else {"crashed"})
        assert one_query == step_by_step == {users[name].id for name in expected}
    finally:
        if holder is not None:
            await holder.close()
