"""The migrations build exactly the schema of the models, with the seed rooms, and undo cleanly."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from sqlalchemy import Connection, inspect, select

from app.db.engine import make_engine
from app.db.migrate import downgrade, upgrade
from app.db.models import Base, Room


def schema_differences(connection: Connection) -> list[Any]:
    context = MigrationContext.configure(connection, opts={"compare_type": True})
    return list(compare_metadata(context, Base.metadata))


def table_names(connection: Connection) -> set[str]:
    return set(inspect(connection).get_table_names())


async def test_migrations_match_the_models(db_url: str) -> None:
    engine = make_engine(db_url)
    try:
        async with engine.connect() as conn:
            assert await conn.run_sync(schema_differences) == []
    finally:
        await engine.dispose()


async def test_three_rooms_are_seeded(db_url: str) -> None:
    engine = make_engine(db_url)
    try:
        async with engine.connect() as conn:
            rooms = (await conn.execute(select(Room).order_by(Room.id))).all()
    finally:
        await engine.dispose()
    assert [
        (r.slug, r.name, r.variant, r.clock_base_s, r.clock_increment_s, r.is_open) for r in rooms
    ] == [
        ("english-casual", "English casual", "english", None, 0, True),
        ("english-blitz", "English blitz 5+3", "english", 300, 3, True),
        ("pool", "Pool 10+5", "pool", 600, 5, True),
    ]


async def test_upgrade_downgrade_upgrade(blank_db_url: str) -> None:
    engine = make_engine(blank_db_url)
    try:
        await asyncio.to_thread(upgrade, blank_db_url)
        async with engine.connect() as conn:
            assert await conn.run_sync(table_names) >= set(Base.metadata.tables)
        await asyncio.to_thread(downgrade, blank_db_url)
        async with engine.connect() as conn:
            assert await conn.run_sync(table_names) <= {"alembic_version"}
        await asyncio.to_thread(upgrade, blank_db_url)
        async with engine.connect() as conn:
            assert await conn.run_sync(schema_differences) == []
            assert len((await conn.execute(select(Room.slug))).all()) == 3
    finally:
        await engine.dispose()


def test_upgrade_creates_the_sqlite_file_and_its_directory(tmp_path: Path) -> None:
    path = tmp_path / "new" / "dir" / "checkers.db"
    upgrade(f"sqlite+aiosqlite:///{path}")
    assert path.is_file()
