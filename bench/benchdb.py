"""What the benchmarks that load a database of their own share: the option naming it, and
making it afresh (dropped, created, given the schema)."""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path

import asyncpg
from sqlalchemy.ext.asyncio import create_async_engine

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from app.db.migrate import upgrade  # noqa: E402
from app.db.models import Base  # noqa: E402


def dsn(url: str) -> str:
    """SQLAlchemy's URL as asyncpg takes it."""
    return url.replace("postgresql+asyncpg://", "postgresql://")


def add_database_option(parser: argparse.ArgumentParser, name: str) -> None:
    parser.add_argument(
        "--database-url",
        default=f"postgresql+asyncpg://postgres@127.0.0.1:5432/{name}",
        help="a database this script may drop and recreate",
    )


async def recreate_database(url: str, *, migrate: bool = False) -> None:
    """Drop and create the database, then give it the schema: by the migrations (`migrate`,
    with the rows they add), or straight from the models (faster, empty)."""
    name = url.rsplit("/", 1)[1]
    admin = await asyncpg.connect(dsn(url.rsplit("/", 1)[0] + "/postgres"))
    try:
        await admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        await admin.execute(f'CREATE DATABASE "{name}"')
    finally:
        await admin.close()
    if migrate:
        await asyncio.to_thread(upgrade, url)
        return
    engine = create_async_engine(url)
    async with engine.begin() as conn:
        await conn.run_sync(Base.metadata.create_all)
    await engine.dispose()
