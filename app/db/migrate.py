"""Run the alembic migrations from Python: `checkers migrate`, the test fixtures, operators.

These functions are synchronous (alembic runs its own event loop for the async engines): from
async code call them through `asyncio.to_thread`.
"""

from __future__ import annotations

from pathlib import Path

from alembic import command
from alembic.config import Config
from sqlalchemy.engine import make_url

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


def upgrade(url: str, revision: str = "head") -> None:
    """Bring the database at `url` up to `revision`; a SQLite file is created if missing."""
    _create_sqlite_directory(url)
    command.upgrade(alembic_config(url), revision)


def downgrade(url: str, revision: str = "base") -> None:
    """Undo migrations down to `revision` (`base`: drop every table)."""
    command.downgrade(alembic_config(url), revision)
