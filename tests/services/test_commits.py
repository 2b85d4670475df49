"""Group commit: moves stored in batches, each conditional on the game's state, so that of two
writers (two server processes) racing for the same ply exactly one succeeds."""

from __future__ import annotations

import asyncio
import contextlib
from datetime import UTC, datetime

import pytest
from sqlalchemy import func, insert, select, text

from app.db.engine import Database
from app.db.models import Game as GameRow
from app.db.models import Move as MoveRow
from app.services.commits import MoveCommit, MoveWriter


async def new_games(db: Database, count: int) -> list[int]:
    async with db.engine.begin() as conn:
        ids = []
        for _ in range(count):
            game_id = await conn.scalar(
                insert(GameRow).values(variant="english", status="playing").returning(GameRow.id)
            )
            assert game_id is not None
            ids.append(game_id)
        return ids


def move(game_id: int, ply: int, text: str, **ending: str) -> MoveCommit:
    return MoveCommit(game_id=game_id, ply=ply, move=text, at=datetime.now(UTC), **ending)


async def test_moves_of_many_games_are_stored_together(db: Database) -> None:
    writer = MoveWriter(db)
    writer.start()
    try:
        games = await new_games(db, 20)
        stored = await asyncio.gather(*(writer.store(move(g, 1, "11-15")) for g in games))
        assert stored == [True] * 20
        assert await writer.store(move(games[0], 2, "22-18")) is True
    finally:
        await writer.stop()
    async with db.session() as session:
        rows = (await session.execute(select(MoveRow.game_id, MoveRow.ply))).all()
        plies = await session.scalars(select(GameRow.ply_count).where(GameRow.id == games[0]))
        assert plies.one() == 2
    assert len(rows) == 21


async def test_of_two_writers_racing_for_a_ply_exactly_one_stores_it(db: Database) -> None:
    first, second = MoveWriter(db), MoveWriter(db)
    first.start()
    second.start()
    try:
        (game,) = await new_games(db, 1)
        results = await asyncio.gather(
            first.store(move(game, 1, "11-15")), second.store(move(game, 1, "9-13"))
        )
        assert sorted(results) == [False, True]
        ended = move(game, 2, "22-18", status="finished", result="0-1", termination="resignation")
        assert await first.store(ended) is True
        assert await second.store(move(game, 3, "15-19")) is False  # the game is over
    finally:
        await first.stop()
        await second.stop()
    async with db.session() as session:
        texts = list(await session.scalars(select(MoveRow.move).order_by(MoveRow.ply)))
        row = await session.get(GameRow, game)
        assert row is not None and (row.status, row.ply_count) == ("finished", 2)
    assert texts[0] == ("11-15" if results[0] else "9-13") and len(texts) == 2


async def test_a_writer_whose_connection_dies_reconnects_and_leaves_the_pool_as_it_was(
    db: Database, db_url: str
) -> None:
    if not db_url.startswith("postgresql"):
        pytest.skip("killing a server connection needs PostgreSQL")
    writer = MoveWriter(db)
    writer.start()
    try:
        (game,) = await new_games(db, 1)
        assert await writer.store(move(game, 1, "11-15")) is True
        async with db.engine.connect() as conn:
            # Every other connection to the database: the writers' among them.
            killed = await conn.scalar(
                text(
                    "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity"
                    " WHERE datname = current_database() AND pid <> pg_backend_pid()"
                )
            )
        assert killed is not None and killed >= writer.writers
        # A move sent while the connections are down fails or waits; none is half stored.
        for ply, text_ in ((2, "22-18"), (3, "15-19")):
            for _ in range(100):
                try:
                    if await writer.store(move(game, ply, text_)):
                        break
                except Exception:  # the batch that met the dead connection
                    await asyncio.sleep(0.1)
            else:
                pytest.fail("the writer did not come back")
    finally:
        await writer.stop()
    async with contextlib.AsyncExitStack() as stack:
        # The writers' session setting left with their connections: none came back to the pool.
        pooled = [await stack.enter_async_context(db.engine.connect()) for _ in range(6)]
        for conn in pooled:
            assert await conn.scalar(text("SHOW plan_cache_mode")) == "auto"
    async with db.engine.connect() as conn:
        plies = await conn.scalar(select(GameRow.ply_count).where(GameRow.id == game))
        count = await conn.scalar(select(func.count()).where(MoveRow.game_id == game))
    assert (plies, count) == (3, 3)
