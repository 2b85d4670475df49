"""Opening tables while an administrator closes the room, or while others take its last place:
on PostgreSQL the room's row lock decides (SQLite runs one write transaction at a time)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest
from sqlalchemy import func, select, update

from app.broker.memory import MemoryBroker
from app.db.engine import Database
from app.db.models import GameTable, Room, User
from app.errors import Code
from app.live.liveplay import LivePlay, PlayError
from app.play.players import PlayerRef
from app.tables import opening as table_opening
from tests.conftest import make_settings

ROOM = "english-casual"


@pytest.fixture
async def live(db: Database, db_url: str) -> AsyncIterator[LivePlay]:
    broker = MemoryBroker()
    await broker.connect()
    try:
        yield LivePlay(db, broker, make_settings(database_url=db_url))
    finally:
        await broker.disconnect()


async def new_user(db: Database, name: str) -> PlayerRef:
    async with db.session() as session:
        user = User(name=name, kind="guest")
        session.add(user)
        await session.commit()
        return PlayerRef(user.id, user.name)


async def test_a_table_opened_while_its_room_closes_is_refused(live: LivePlay) -> None:
    host = await new_user(live.db, "host")
    async with live.db.engine.connect() as admin:
        # An administrator closing the room holds it from the start of the closing transaction.
        transaction = await admin.begin()
        await admin.execute(select(Room.id).where(Room.slug == ROOM).with_for_update())
        opening = asyncio.create_task(table_opening.open_table(live, host, ROOM))
        await asyncio.sleep(0.5)  # the opening reaches the room and waits for it
        assert not opening.done()
        await admin.execute(update(Room).where(Room.slug == ROOM).values(is_open=False))
        await transaction.commit()
    with pytest.raises(PlayError) as refused:
        await opening
    assert refused.value.code is Code.ROOM_CLOSED
    async with live.db.session() as session:
        opened = await session.scalar(select(func.count()).select_from(GameTable))
    assert opened == 0


async def test_two_tables_opened_at_once_do_not_exceed_the_room_limit(live: LivePlay) -> None:
    async with live.db.session() as session:
        await session.execute(update(Room).where(Room.slug == ROOM).values(table_limit=1))
        await session.commit()
    hosts = [await new_user(live.db, f"host{n}") for n in range(6)]
    results = await asyncio.gather(
        *(table_opening.open_table(live, host, ROOM) for host in hosts), return_exceptions=True
    )
    refused = [r for r in results if isinstance(r, PlayError)]
    assert len(refused) == 5 and {r.code for r in refused} == {Code.ROOM_CLOSED}
    async with live.db.session() as session:
        opened = await session.scalar(select(func.count()).select_from(GameTable))
    assert opened == 1


@pytest.fixture
async def live_two_tables(db: Database, db_url: str) -> AsyncIterator[LivePlay]:
    broker = MemoryBroker()
    await broker.connect()
    try:
        yield LivePlay(db, broker, make_settings(database_url=db_url, tables_per_user=2))
    finally:
        await broker.disconnect()


async def test_a_user_hosts_at_most_the_limit_of_tables_across_rooms(
    live_two_tables: LivePlay,
) -> None:
    live = live_two_tables
    host = await new_user(live.db, "host")
    await table_opening.open_table(live, host, "english-casual")
    await table_opening.open_table(live, host, "english-blitz")
    with pytest.raises(PlayError) as refused:
        await table_opening.open_table(live, host, "pool")
    assert refused.value.code is Code.TOO_MANY_TABLES
    assert "2 tables" in refused.value.message


async def test_tables_opened_at_once_in_several_rooms_do_not_exceed_the_limit(
    live_two_tables: LivePlay,
) -> None:
    live = live_two_tables
    host = await new_user(live.db, "host")
    rooms = ["english-casual", "english-blitz", "pool"] * 2
    results = await asyncio.gather(
        *(table_opening.open_table(live, host, room) for room in rooms), return_exceptions=True
    )
    refused = [r for r in results if isinstance(r, PlayError)]
    assert len(refused) == 4 and {r.code for r in refused} == {Code.TOO_MANY_TABLES}
    async with live.db.session() as session:
        opened = await session.scalar(select(func.count()).select_from(GameTable))
    assert opened == 2


async def test_the_stored_log_holds_no_figure_only_one_process_knows(live: LivePlay) -> None:
    """A table's events are stored and replayed to anyone on any process: the spectator count
    (each process counts its own watchers) is never in them, nor read back from them. The log
    stores each event's type beside its text."""
    host = await new_user(live.db, "host")
    opened = await table_opening.open_table(live, host, ROOM)
    events = await live.log_since(opened["id"], 0, 10)
    assert [e.kind for e in events] == ["table_update"]
    assert "spectators" not in events[0].payload
    assert "spectators" not in opened
