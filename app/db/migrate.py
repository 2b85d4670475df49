"""Run the alembic migrations from Python: `checkers migrate`, the test fixtures, operators.

These functions are synchronous (alembic runs its own event loop for the async engines): from
async code call them through `asyncio.to_thread`.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy.engine import Connection, make_url
from sqlalchemy.ext.asyncio import create_async_engine
from sqlalchemy.pool import NullPool

from app.db.engine import is_sqlite

MIGRATIONS_DIR = Path(__file__).resolve().parents[2] / "migrations"


def alembic_config(url: str) -> Config:
    """A configuration without an ini file, so that running it leaves logging alone."""
    if not MIGRATIONS_DIR.is_dir():
        raise RuntimeError(f"migrations not found at {MIGRATIONS_DIR}: install from a checkout")
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS_DIR))
    config.attributes["url"] = url
    return config


def _create_sqlite_directory(url: str) -> None:
    database = make_url(url).database
    if is_sqlite(url) and database and database != ":memory:":
        Path(database).parent.mkdir(parents=True, exist_ok=True)


def head_revision() -> str:
    """The revision this version of the code needs (the newest migration)."""
    head = ScriptDirectory.from_config(alembic_config("")).get_current_head()
    if head is None:
        raise RuntimeError(f"no migrations in {MIGRATIONS_DIR}")
    return head


def current_revision(url: str) -> str | None:
    """The revision the database at `url` is at; None when it has no schema. A SQLite file that
    does not exist is not created. Raises the driver's error when the database is unreachable."""
    database = make_url(url).database
    if is_sqlite(url) and database and database != ":memory:" and not Path(database).exists():
        return None

    def read(connection: Connection) -> str | None:
        return MigrationContext.configure(connection).get_current_revision()

    async def connect_and_read() -> str | None:
        engine = create_async_engine(url, poolclass=NullPool)
        try:
            async with engine.connect() as connection:
                return await connection.run_sync(read)
        finally:
            await engine.dispose()

    return asyncio.run(connect_and_read())


def upgrade(url: str, revision: str = "head") -> None:
    """Bring the database at `url` up to `revision`; a SQLite file is created if missing."""
    _create_sqlite_directory(url)
    command.upgrade(alembic_config(url), revision)


def downgrade(url: str, revision: str = "base") -> None:
    """Undo migrations down to `revision` (`base`: drop every table)."""
    command.downgrade(alembic_config(url), revision)
