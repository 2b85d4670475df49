"""The PostgreSQL pool hands out live connections without a round trip for the ones in steady
use: a connection the database closed is replaced at checkout, one unused for a while is
pinged first, and one just returned is handed out as it is."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import asyncpg
import pytest
from sqlalchemy import text
from sqlalchemy.engine import make_url

from app.db.engine import Database
from tests.conftest import postgres_database


@pytest.fixture
async def pg_url() -> AsyncIterator[str]:
    with postgres_database() as url:
        yield url


async def _driver_of(db: Database) -> Any:
    """Use a connection once and return its asyncpg connection (back in the pool)."""
    async with db.engine.connect() as conn:
        await conn.execute(text("SELECT 1"))
        raw = await conn.get_raw_connection()
        return raw.driver_connection


async def _statements_of_next_use(db: Database, driver: Any) -> tuple[list[str], Any]:
    """The simple-protocol statements (not the prepared ones) asyncpg sent on `driver` while
    the pool's next connection ran one query."""
    seen: list[str] = []

    def log(logged: Any) -> None:
        seen.append(logged.query.strip())

    driver.add_query_logger(log)
    try:
        async with db.engine.connect() as conn:
            await conn.execute(text("SELECT 2"))
            used = (await conn.get_raw_connection()).driver_connection
    finally:
        driver.remove_query_logger(log)
    return seen, used


async def test_a_connection_in_steady_use_is_handed_out_without_a_ping(pg_url: str) -> None:
    db = Database(pg_url, pool_size=1, max_overflow=0)
    try:
        driver = await _driver_of(db)
        seen, used = await _statements_of_next_use(db, driver)
        assert used is driver
        assert ";" not in seen, f"the checkout pinged: {seen}"
        assert seen == ["BEGIN;", "ROLLBACK;"]  # the block's own transaction
    finally:
        await db.dispose()


async def test_a_connection_unused_for_a_while_is_pinged_first(pg_url: str) -> None:
    db = Database(pg_url, pool_size=1, max_overflow=0, ping_after_idle=0.2)
    try:
        driver = await _driver_of(db)
        await asyncio.sleep(0.3)
        seen, used = await _statements_of_next_use(db, driver)
        assert used is driver
        assert seen == ["BEGIN;", ";", "ROLLBACK;", "BEGIN;", "ROLLBACK;"]  # a ping, then the block
    finally:
        await db.dispose()


async def test_a_connection_the_database_closed_is_replaced_at_checkout(pg_url: str) -> None:
    db = Database(pg_url, pool_size=1, max_overflow=0)
    url = make_url(pg_url).set(drivername="postgresql")
    admin = await asyncpg.connect(url.render_as_string(hide_password=False))
    try:
        driver = await _driver_of(db)
        pid = driver.get_server_pid()
        assert await admin.fetchval("SELECT pg_terminate_backend($1)", pid)
        for _ in range(100):  # the backend's goodbye reaches asyncpg through the event loop
            if driver.is_closed():
                break
            await asyncio.sleep(0.05)
        assert driver.is_closed()
        async with db.engine.connect() as conn:  # no error: a new connection takes its place
            assert (await conn.execute(text("SELECT 3"))).scalar() == 3
            fresh = (await conn.get_raw_connection()).driver_connection
        assert fresh is not driver and fresh.get_server_pid() != pid
    finally:
        await admin.close()
        await db.dispose()
