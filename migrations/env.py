"""Alembic environment: the models' metadata, async engines for SQLite and PostgreSQL.

The URL is, in order: `config.attributes["url"]` (set by `app.db.migrate`), `-x url=...` on the
alembic command line, `sqlalchemy.url` in the ini file, the settings' `database_url`.
"""

from __future__ import annotations

import asyncio
from logging.config import fileConfig

from alembic import context
from sqlalchemy import Connection
from sqlalchemy.ext.asyncio import create_async_engine
from sqlalchemy.pool import NullPool

from app.config import get_settings
from app.db.engine import is_sqlite, make_engine
from app.db.models import Base

config = context.config
if config.config_file_name is not None and config.attributes.get("configure_logging", True):
    fileConfig(config.config_file_name, disable_existing_loggers=False)

target_metadata = Base.metadata


def database_url() -> str:
    url: str | None = (
        config.attributes.get("url")
        or context.get_x_argument(as_dictionary=True).get("url")
        or config.get_main_option("sqlalchemy.url")
    )
    return url or get_settings().database_url


def run_migrations_offline() -> None:
    context.configure(
        url=database_url(),
        target_metadata=target_metadata,
        literal_binds=True,
        render_as_batch=True,
        dialect_opts={"paramstyle": "named"},
    )
    with context.begin_transaction():
        context.run_migrations()


def do_run_migrations(connection: Connection) -> None:
    sqlite = connection.dialect.name == "sqlite"
    if sqlite:
        # Batch operations rebuild SQLite tables, which foreign keys would block; the pragma
        # only takes effect outside a transaction, so set it before alembic begins one.
        cursor = connection.connection.cursor()
        cursor.execute("PRAGMA foreign_keys=OFF")
        cursor.close()
    context.configure(
        connection=connection,
        target_metadata=target_metadata,
        render_as_batch=True,
        compare_type=True,
        # app.db.engine makes SQLite DDL transactional too: an upgrade applies whole or not at all.
        transactional_ddl=True,
    )
    with context.begin_transaction():
        context.run_migrations()
        if sqlite:
            broken = connection.exec_driver_sql("PRAGMA foreign_key_check").fetchall()
            if broken:
                raise RuntimeError(f"the migration broke foreign keys: {broken}")


async def run_async_migrations(url: str) -> None:
    engine = make_engine(url) if is_sqlite(url) else create_async_engine(url, poolclass=NullPool)
    try:
        async with engine.connect() as connection:
            await connection.run_sync(do_run_migrations)
    finally:
        await engine.dispose()


def run_migrations_online() -> None:
    connection = config.attributes.get("connection")
    if connection is not None:
        do_run_migrations(connection)
    else:
        asyncio.run(run_async_migrations(database_url()))


if context.is_offline_mode():
    run_migrations_offline()
else:
    run_migrations_online()
