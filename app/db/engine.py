"""Async engine and session factory for SQLite (embedded default) and PostgreSQL."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from sqlalchemy import event, text
from sqlalchemy.ext.asyncio import (
    AsyncConnection,
    AsyncEngine,
    AsyncSession,
    async_sessionmaker,
    create_async_engine,
)


def is_sqlite(url: str) -> bool:
    return url.startswith("sqlite")


def make_engine(url: str, **kwargs: Any) -> AsyncEngine:
    """Create an engine; on SQLite make transactions, savepoints and foreign keys behave."""
    if is_sqlite(url):
        # One writer at a time: the pool's size is SQLAlchemy's default, whatever was asked.
        kwargs.pop("pool_size", None)
        kwargs.pop("max_overflow", None)
        engine = create_async_engine(url, connect_args={"timeout": 30}, **kwargs)

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
    kwargs.setdefault("pool_pre_ping", True)
    return create_async_engine(url, **kwargs)


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
