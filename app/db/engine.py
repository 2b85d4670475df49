"""Async engine and session factory for SQLite (embedded default) and PostgreSQL."""

from __future__ import annotations

import asyncio
import sqlite3
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from functools import partial
from typing import Any

import aiosqlite
from aiosqlite.core import _STOP_RUNNING_SENTINEL as _STOP_RUNNING
from sqlalchemy import event, text
from sqlalchemy.exc import DisconnectionError
from sqlalchemy.ext.asyncio import (
    AsyncConnection,
    AsyncEngine,
    AsyncSession,
    async_sessionmaker,
    create_async_engine,
)


def is_sqlite(url: str) -> bool:
    return url.startswith("sqlite")


# A pooled PostgreSQL connection unused for longer than this is pinged before it is handed out.
PING_AFTER_IDLE_SECONDS = 10.0


def _check_on_checkout(engine: AsyncEngine, ping_after_idle: float) -> None:
    """Hand out only live connections, without a round trip for the ones in steady use.

    SQLAlchemy's `pool_pre_ping` pings at every checkout, and on asyncpg a ping is three round
    trips (BEGIN, an empty query, ROLLBACK) before every game start, seat change or chat line
    (about 2 % of the server's CPU under the live-play bench, and three waits on the database
    for each of those). A connection the database has
    closed (a restart, `pg_terminate_backend`, a crashed backend) is known closed without asking:
    the server's goodbye and the socket's end reach asyncpg's protocol as soon as the event loop
    reads them. So a connection is discarded at checkout when asyncpg says it is closed, and
    pinged only when it has lain unused for `ping_after_idle` seconds (long enough for a peer or
    a firewall to have dropped it without a word). A discarded connection is replaced by a new
    one in the same checkout (SQLAlchemy retries on DisconnectionError).
    """

    @event.listens_for(engine.sync_engine, "checkin")
    def _checkin(_dbapi_connection: Any, record: Any) -> None:
        record.info["idle_since"] = time.monotonic()

    @event.listens_for(engine.sync_engine, "checkout")
    def _checkout(dbapi_connection: Any, record: Any, _proxy: Any) -> None:
        driver = dbapi_connection.driver_connection
        if driver is None or driver.is_closed():
            raise DisconnectionError("the database closed this connection")
        idle_since = record.info.get("idle_since")
        if idle_since is not None and time.monotonic() - idle_since >= ping_after_idle:
            try:
                dbapi_connection.ping()
            except Exception as exc:
                raise DisconnectionError("the connection did not answer a ping") from exc


def _roll_back_and_close(connection: sqlite3.Connection) -> None:
    """Close, ending the transaction first. sqlite3 closes a connection that still has a read
    open on one of its cursors as a zombie that keeps its transaction, and the write lock, until
    that cursor is collected: every other session would wait on "database is locked"."""
    try:
        if connection.in_transaction:
            connection.rollback()
    finally:
        connection.close()


class SQLiteConnection(aiosqlite.Connection):
    """aiosqlite's connection, closed so that it neither waits forever nor keeps the database
    locked.

    When a task is cancelled during a query, SQLAlchemy invalidates its connection: it closes it
    gracefully in a shielded task and, if cancelled again, stops the connection's thread
    (`stop`). Plain aiosqlite's `close` then queues a second stop behind the first, which the
    thread, gone after the first, never answers: the task waits forever, and so does the event
    loop's shutdown (the server would not exit). Here a connection already stopped is not
    stopped again. Both ways roll back before closing: the cancelled query's cursor may still
    be open (`_roll_back_and_close`).
    """

    async def close(self) -> None:
        if self._connection is None or not self._running:
            return  # closed, or stopped: its thread closes the connection and ends by itself
        try:
            await self._execute(_roll_back_and_close, self._connection)  # type: ignore[no-untyped-call]
        finally:
            self._connection = None
            if self._running:  # not stopped meanwhile: the thread is there to answer
                stopped = self.stop()
                if stopped is not None:
                    await stopped

    def stop(self) -> asyncio.Future[Any] | None:
        """aiosqlite's stop, its close step rolling back first (in that one step: a step more
        would keep the thread busy longer after SQLAlchemy, which does not wait for it, and
        perhaps the event loop, are done)."""
        self._running = False

        def close_and_stop() -> object:
            if self._connection is not None:
                _roll_back_and_close(self._connection)
                self._connection = None
            return _STOP_RUNNING

        try:
            future: asyncio.Future[Any] | None = asyncio.get_event_loop().create_future()
        except Exception:
            future = None
        self._tx.put_nowait((future, close_and_stop))
        return future


def _connect_sqlite(database: str, **kwargs: Any) -> SQLiteConnection:
    connection = SQLiteConnection(partial(sqlite3.connect, database, **kwargs), 64)
    connection._thread.daemon = True  # as SQLAlchemy's own aiosqlite connect does
    return connection


# What every PostgreSQL connection of the server plans with.
SERVER_SETTINGS = {
    # No JIT compilation: every statement here is short, and PostgreSQL's estimate of a batch
    # of an export's moves (a few thousand rows, estimated at hundreds of thousands) crossed
    # `jit_above_cost`, which spent 6 ms compiling a 16 ms read (docs/benchmarks.md, Archive).
    "jit": "off",
    # The pages live play reads are in memory (or on SSDs): a page read at random costs about
    # what one read in order does, not the default's four times. At four, reading the lobby's
    # 10,000 open tables hash-joined a full scan of a million accounts rather than looking
    # their 20,000 seats up (tests/db/test_live_plans.py).
    "random_page_cost": "1.1",
}


def make_engine(url: str, **kwargs: Any) -> AsyncEngine:
    """Create an engine; on SQLite make transactions, savepoints and foreign keys behave."""
    if is_sqlite(url):
        # One writer at a time: the pool's size is SQLAlchemy's default, whatever was asked.
        kwargs.pop("pool_size", None)
        kwargs.pop("max_overflow", None)
        engine = create_async_engine(url, connect_args={"timeout": 30}, **kwargs)

        @event.listens_for(engine.sync_engine, "do_connect")
        def _do_connect(dialect: Any, _record: Any, cargs: Any, cparams: Any) -> Any:
            return dialect.loaded_dbapi.connect(*cargs, async_creator_fn=_connect_sqlite, **cparams)

        # pysqlite's own transaction handling breaks SAVEPOINT and transactional DDL:
        # take it over as SQLAlchemy's SQLite docs describe.
        @event.listens_for(engine.sync_engine, "connect")
        def _on_connect(dbapi_connection: Any, _record: Any) -> None:
            dbapi_connection.isolation_level = None
            cursor = dbapi_connection.cursor()
            cursor.execute("PRAGMA foreign_keys=ON")
            cursor.execute("PRAGMA journal_mode=WAL")
            cursor.execute("PRAGMA synchronous=NORMAL")
            cursor.close()

        @event.listens_for(engine.sync_engine, "begin")
        def _on_begin(conn: Any) -> None:
            conn.exec_driver_sql("BEGIN IMMEDIATE")

        return engine
    kwargs.setdefault("pool_size", 10)
    kwargs.setdefault("max_overflow", 20)
    connect_args = kwargs.pop("connect_args", {})
    server_settings = {**SERVER_SETTINGS, **connect_args.pop("server_settings", {})}
    kwargs["connect_args"] = {**connect_args, "server_settings": server_settings}
    ping_after_idle = kwargs.pop("ping_after_idle", PING_AFTER_IDLE_SECONDS)
    engine = create_async_engine(url, **kwargs)
    if not kwargs.get("pool_pre_ping"):
        _check_on_checkout(engine, ping_after_idle)
    return engine


async def ping(conn: AsyncConnection) -> None:
    """Ask the database for nothing: raises if the connection is dead."""
    await conn.execute(text("SELECT 1"))


class Database:
    """The engine plus its session factory; one per process, opened and closed by the lifespan."""

    def __init__(self, url: str, **engine_kwargs: Any) -> None:
        self.url = url
        self.engine = make_engine(url, **engine_kwargs)
        self.sessionmaker = async_sessionmaker(self.engine, expire_on_commit=False)

    @asynccontextmanager
    async def session(self) -> AsyncIterator[AsyncSession]:
        async with self.sessionmaker() as session:
            yield session

    async def ping(self) -> None:
        """Check out a connection and ping the database on it; raises if it is down."""
        async with self.engine.connect() as conn:
            await ping(conn)

    async def dispose(self) -> None:
        await self.engine.dispose()
