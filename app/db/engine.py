"""Async engine and session factory for SQLite (embedded default) and PostgreSQL."""

from __future__ import annotations

import sqlite3
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from functools import partial
from typing import Any

import aiosqlite
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


class SQLiteConnection(aiosqlite.Connection):
    """aiosqlite's connection, with a `close` that cannot wait forever.

    When a task is cancelled while SQLAlchemy invalidates its connection, SQLAlchemy stops the
    connection's thread (`stop`) and also starts a graceful `close` in a task of its own. Plain
    aiosqlite's `close` then queues a second stop behind the first, which the thread, gone after
    the first, never answers: the task waits forever, and so does the event loop's shutdown (the
    server would not exit). Here a connection already stopped is not stopped again.
    """

    async def close(self) -> None:
        if self._connection is None or not self._running:
            return  # closed, or stopped: its thread closes the connection and ends by itself
        try:
            await self._execute(self._conn.close)  # type: ignore[no-untyped-call]
        finally:
            self._connection = None
            if self._running:  # not stopped meanwhile: the thread is there to answer
                stopped = self.stop()
                if stopped is not None:
                    await stopped


def _connect_sqlite(database: str, **kwargs: Any) -> SQLiteConnection:
    connection = SQLiteConnection(partial(sqlite3.connect, database, **kwargs), 64)
    connection._thread.daemon = True  # as SQLAlchemy's own aiosqlite connect does
    return connection


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
    # No JIT compilation: every statement here is short, and PostgreSQL's estimate of a batch of
    # an export's moves (a few thousand rows, estimated at hundreds of thousands) crossed
    # `jit_above_cost`, which spent 6 ms compiling a 16 ms read (docs/benchmarks.md, Archive).
    connect_args = kwargs.pop("connect_args", {})
    server_settings = {"jit": "off", **connect_args.pop("server_settings", {})}
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
