"""Group commit: moves stored in batches, each conditional on the game's state, so that of two
writers (two server processes) racing for the same ply exactly one succeeds."""

from __future__ import annotations

import asyncio
import contextlib
from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import func, insert, inspect, select, text, update

from app.db.engine import Database
from app.db.models import Game as GameRow
from app.db.models import GameTable, TableEvent
from app.db.models import Move as MoveRow
from app.play import moves_store as stored_moves
from app.play import store as stored_games
from app.play.commits import MoveCommit, MoveWriter
from app.timeutil import as_utc

TABLES: dict[int, int] = {}  # game → its table


async def new_games(db: Database, count: int) -> list[int]:
    """Games in progress, each at a table of its own (the seeded room 1)."""
    async with db.engine.begin() as conn:
        ids = []
        for _ in range(count):
            table_id = await conn.scalar(
                insert(GameTable)
                .values(room_id=1, variant="english", event_seq=0)
                .returning(GameTable.id)
            )
            game_id = await conn.scalar(
                insert(GameRow)
                .values(variant="english", status="playing", table_id=table_id)
                .returning(GameRow.id)
            )
            assert game_id is not None and table_id is not None
            TABLES[game_id] = table_id
            ids.append(game_id)
        return ids


def move(game_id: int, ply: int, text: str, **ending: str) -> MoveCommit:
    event = {"type": "move", "game": game_id, "ply": ply}
    return MoveCommit(
        game_id=game_id,
        table_id=TABLES[game_id],
        ply=ply,
        move=text,
        at=datetime.now(UTC),
        events=(event,),
        **ending,
    )


async def stored(writer: MoveWriter, commit: MoveCommit) -> bool:
    return await writer.store(commit) is not None


async def test_moves_of_many_games_are_stored_together(db: Database) -> None:
    writer = MoveWriter(db)
    writer.start()
    try:
        games = await new_games(db, 20)
        events = await asyncio.gather(*(writer.store(move(g, 1, "11-15")) for g in games))
        assert [e is not None and [x.seq for x in e] for e in events] == [[1]] * 20
        second = await writer.store(move(games[0], 2, "22-18"))
        assert second is not None and second[0].seq == 2
        assert second[0].frame == f'{{"v":2,"type":"move","game":{games[0]},"ply":2}}'
    finally:
        await writer.stop()
    async with db.session() as session:
        rows = (await session.execute(select(MoveRow.game_id, MoveRow.ply))).all()
        plies = await session.scalars(select(GameRow.ply_count).where(GameRow.id == games[0]))
        assert plies.one() == 2
    assert len(rows) == 21


async def test_a_stored_move_writes_the_games_clocks_deadline_and_ending(db: Database) -> None:
    """What the move statement writes reads back as the rest of storage writes it: the times
    compare with others (the sweep finds a deadline passed), a move keeps a standing draw
    offer, and a game-ending move ends the game and withdraws the offer."""
    writer = MoveWriter(db)
    writer.start()
    try:
        game, other = await new_games(db, 2)
        async with db.engine.begin() as conn:
            await conn.execute(
                update(GameRow).where(GameRow.id.in_((game, other))).values(draw_offer="black")
            )
        at = datetime(2026, 1, 2, 3, 4, 5, 600000, tzinfo=UTC)
        deadline = at + timedelta(seconds=30)
        first = replace(
            move(game, 1, "11-15"), at=at, black_ms=9000, white_ms=8000, deadline=deadline
        )
        assert await stored(writer, first)
        ending = {"status": "finished", "result": "1-0", "termination": "resignation"}
        assert await stored(writer, replace(move(other, 1, "11-15", **ending), at=at))
    finally:
        await writer.stop()
    async with db.session() as session:
        assert await stored_games.due(session, deadline - timedelta(microseconds=1)) == []
        assert await stored_games.due(session, deadline) == [game]
        row = await session.get(GameRow, game)
        assert row is not None
        assert (row.ply_count, row.black_clock_ms, row.white_clock_ms) == (1, 9000, 8000)
        assert (as_utc(row.last_move_at), as_utc(row.deadline_at)) == (at, deadline)
        assert (row.status, row.finished_at, row.draw_offer) == ("playing", None, "black")
        ended = await session.get(GameRow, other)
        assert ended is not None
        assert (ended.status, ended.result, ended.termination) == ("finished", "1-0", "resignation")
        assert (as_utc(ended.finished_at), ended.draw_offer) == (at, None)


async def test_of_two_writers_racing_for_a_ply_exactly_one_stores_it(db: Database) -> None:
    first, second = MoveWriter(db), MoveWriter(db)
    first.start()
    second.start()
    try:
        (game,) = await new_games(db, 1)
        results = await asyncio.gather(
            stored(first, move(game, 1, "11-15")), stored(second, move(game, 1, "9-13"))
        )
        assert sorted(results) == [False, True]
        ended = move(game, 2, "22-18", status="finished", result="0-1", termination="resignation")
        assert await stored(first, ended) is True
        assert await stored(second, move(game, 3, "15-19")) is False  # the game is over
    finally:
        await first.stop()
        await second.stop()
    async with db.session() as session:
        texts = list(await session.scalars(select(MoveRow.move).order_by(MoveRow.ply)))
        row = await session.get(GameRow, game)
        assert row is not None and (row.status, row.ply_count) == ("finished", 2)
    assert texts[0] == ("11-15" if results[0] else "9-13") and len(texts) == 2
    async with db.engine.connect() as conn:
        seqs = (await conn.execute(select(TableEvent.seq).order_by(TableEvent.seq))).scalars()
        assert list(seqs) == [1, 2]  # the refused move numbered nothing


async def _other_connections(db: Database, *, kill: bool = False) -> int:
    """How many other connections the database has (the writers' among them), killed if asked."""
    each = "pg_terminate_backend(pid)" if kill else "*"
    async with db.engine.connect() as conn:
        count = await conn.scalar(
            text(
                f"SELECT count({each}) FROM pg_stat_activity"
                " WHERE datname = current_database() AND pid <> pg_backend_pid()"
            )
        )
    return count or 0


async def _writers_connected(db: Database, writer: MoveWriter) -> None:
    """Each writer task opens its connection as it starts: on a busy machine the last ones may
    not have yet when the first move is stored."""
    for _ in range(100):
        if await _other_connections(db) >= writer.writers:
            return
        await asyncio.sleep(0.05)
    pytest.fail("the writers did not connect")


async def _kill_other_connections(db: Database) -> int:
    return await _other_connections(db, kill=True)


async def test_the_first_move_after_the_database_dropped_its_connections_is_stored(
    db: Database, db_url: str
) -> None:
    """As after a PostgreSQL restart: the batch that meets a dead connection is written again
    on a new one, so no player sees the failure."""
    if not db_url.startswith("postgresql"):
        pytest.skip("killing a server connection needs PostgreSQL")
    writer = MoveWriter(db)
    writer.start()
    try:
        (game,) = await new_games(db, 1)
        assert await stored(writer, move(game, 1, "11-15"))
        await _writers_connected(db, writer)
        assert await _kill_other_connections(db) >= writer.writers
        assert await stored(writer, move(game, 2, "22-18"))
        assert await _kill_other_connections(db) >= 1
        await asyncio.sleep(3)  # idle writers find their dead connections themselves
        assert await stored(writer, move(game, 3, "15-19"))
    finally:
        await writer.stop()
    async with db.engine.connect() as conn:
        plies = await conn.scalar(select(GameRow.ply_count).where(GameRow.id == game))
        seqs = await conn.scalars(select(TableEvent.seq).order_by(TableEvent.seq))
        assert (plies, list(seqs)) == (3, [1, 2, 3])


async def test_a_writer_whose_connection_dies_reconnects_and_leaves_the_pool_as_it_was(
    db: Database, db_url: str
) -> None:
    if not db_url.startswith("postgresql"):
        pytest.skip("killing a server connection needs PostgreSQL")
    writer = MoveWriter(db)
    writer.start()
    try:
        (game,) = await new_games(db, 1)
        assert await stored(writer, move(game, 1, "11-15"))
        await _writers_connected(db, writer)
        assert await _kill_other_connections(db) >= writer.writers
        # A move sent while the connections are down fails or waits; none is half stored.
        for ply, text_ in ((2, "22-18"), (3, "15-19")):
            for _ in range(100):
                try:
                    if await stored(writer, move(game, ply, text_)):
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


# The columns of a game's row that a move in the middle of a game changes.
MOVE_COLUMNS = {"ply_count", "last_move_at", "black_clock_ms", "white_clock_ms", "deadline_at"}


async def test_no_index_of_the_games_covers_a_column_a_move_changes(db: Database) -> None:
    # Else every move would write a new entry into each of the table's indexes (on PostgreSQL
    # an update that changes no indexed column stays on its page: a heap-only tuple update).
    async with db.engine.connect() as conn:
        indexes = await conn.run_sync(lambda c: inspect(c).get_indexes("games"))
    covering = {i["name"]: MOVE_COLUMNS & set(i["column_names"]) for i in indexes}
    assert {name: cols for name, cols in covering.items() if cols} == {}


async def test_moves_update_their_games_rows_in_place(db: Database) -> None:
    """On PostgreSQL every move of a batch is a heap-only update of its game's row, its clock's
    deadline changing at each move."""
    if db.engine.dialect.name != "postgresql":
        pytest.skip("heap-only tuple updates are PostgreSQL's")
    games = await new_games(db, 10)
    start = datetime.now(UTC)
    async with db.engine.connect() as conn:
        driver, statement = await stored_moves.prepare_batch(conn)
        async with driver.transaction():
            for ply, text_ in enumerate(("11-15", "23-19", "8-11"), 1):
                at = start + timedelta(seconds=ply)
                batch = [
                    replace(move(g, ply, text_), at=at, deadline=at + timedelta(minutes=5))
                    for g in games
                ]
                assert all(s is not None for s in await statement.write(batch))
            updated, in_place = await driver.fetchrow(
                "SELECT n_tup_upd, n_tup_hot_upd FROM pg_stat_xact_user_tables"
                " WHERE relname = 'games'"
            )
        await conn.invalidate()  # it carries the writer's settings
    assert (updated, in_place) == (30, 30)


async def test_the_batch_is_planned_again_as_the_tables_grow(
    db: Database, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A writer prepares its statement again every `REPLAN_SECONDS`: a generic plan made while
    `games` was empty read every game in progress for each batch (issue 31, PostgreSQL's CPU
    per move rising during a run); planned again, it follows the statistics."""
    if db.engine.dialect.name != "postgresql":
        pytest.skip("the batch statement is PostgreSQL's")
    games = await new_games(db, 4)
    start = datetime.now(UTC)
    async with db.engine.connect() as conn:
        _, batch = await stored_moves.prepare_batch(conn)
        await batch.write([replace(move(games[0], 1, "11-15"), at=start)])
        await batch.write([replace(move(games[1], 1, "11-15"), at=start)])
        assert batch.prepared == 1
        monkeypatch.setattr(stored_moves, "REPLAN_SECONDS", 0.0)
        stored = await batch.write([replace(move(games[2], 1, "11-15"), at=start)])
        assert batch.prepared == 2 and stored[0] is not None
        await conn.invalidate()
