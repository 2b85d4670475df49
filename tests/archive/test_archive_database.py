"""ARCHIVE_DATABASE_URL: the archive's REST reads go to a second database (a read replica),
while live play and everything else keep writing to DATABASE_URL."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import func, select

from app.db.engine import Database, is_sqlite
from app.db.models import Game, Move
from tests.conftest import make_settings, migrated_sqlite, postgres_database
from tests.support.archive_data import add_game, at
from tests.support.inproc import served_here
from tests.support.ws import guest, start_game


@pytest.fixture
def archive_db_url(db_url: str, request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """A second migrated database of the same kind as `db_url`, standing in for a replica."""
    if is_sqlite(db_url):
        yield migrated_sqlite(tmp_path / "replica.db")
        return
    with postgres_database(migrated=True) as url:
        yield url


async def _counts(url: str) -> tuple[int, int]:
    """(games, moves) stored in the database at `url`."""
    db = Database(url)
    try:
        async with db.session() as session:
            games = await session.scalar(select(func.count()).select_from(Game))
            moves = await session.scalar(select(func.count()).select_from(Move))
            return games or 0, moves or 0
    finally:
        await db.dispose()


async def test_archive_reads_the_archive_database_and_live_play_writes_the_main_one(
    db_url: str, archive_db_url: str
) -> None:
    replica = Database(archive_db_url)
    try:
        async with replica.session() as session:
            only_there = await add_game(
                session, black="replica_only", white="other", started_at=at("2026-01-01")
            )
            await session.commit()
    finally:
        await replica.dispose()

    settings = make_settings(database_url=db_url, archive_database_url=archive_db_url)
    async with served_here(settings) as served, served.http() as http:
        listed = (await http.get("/api/games")).json()["data"]
        assert [game["id"] for game in listed] == [only_there]
        assert (await http.get(f"/api/games/{only_there}")).status_code == 200
        assert (await http.get(f"/api/games/{only_there}.pdn")).status_code == 200
        exported = await http.get("/api/games/export", params={"format": "ndjson"})
        assert exported.text.count("\n") == 1
        player = await http.get("/api/players/replica_only")
        assert player.status_code == 200
        assert player.json()["games"] == 1
        history = (await http.get("/api/players/replica_only/games")).json()["data"]
        assert [game["id"] for game in history] == [only_there]

        async with guest(served.url) as a, guest(served.url) as b:
            match = await start_game(a, b)
            await match.play("11-15")

    assert await _counts(db_url) == (1, 1)  # the live game and its move
    assert await _counts(archive_db_url) == (1, 10)  # untouched by live play


async def test_without_it_the_archive_reads_the_main_database(
    db_url: str, archive_db_url: str
) -> None:
    settings = make_settings(database_url=db_url)
    async with served_here(settings) as served, served.http() as http:
        async with guest(served.url) as a, guest(served.url) as b:
            match = await start_game(a, b)
            await match.play("11-15")
        listed = (await http.get("/api/games")).json()["data"]
        assert [game["id"] for game in listed] == [match.id]
