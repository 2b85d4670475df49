from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from app.db.engine import Database


@pytest.fixture
async def db(db_url: str) -> AsyncIterator[Database]:
    """The migrated database of `db_url`, opened for the test."""
    database = Database(db_url)
    try:
        yield database
    finally:
        await database.dispose()
