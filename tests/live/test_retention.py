"""The live log does not grow for ever: the events of tables closed longer than the retention
period are pruned, batch by batch, and those of open tables and of recently closed ones stay."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import timedelta

import pytest
from sqlalchemy import func, select

from app.broker.memory import MemoryBroker
from app.clock import FakeClock
from app.db.engine import Database
from app.db.models import GameTable, Room, TableEvent
from app.live import log_store as table_log
from app.live import retention
from app.live.liveplay import LivePlay
from app.tables import service as tables
from tests.conftest import make_settings


@pytest.fixture
async def live(db_url: str) -> AsyncIterator[LivePlay]:
    broker = MemoryBroker()
    await broker.connect()
    made = LivePlay(Database(db_url), broker, make_settings(database_url=db_url), FakeClock())
    try:
        yield made
    finally:
        await made.stop()
        await broker.disconnect()


async def add_tables(live: LivePlay, spec: list[tuple[str, float | None]]) -> list[int]:
    """Tables (status, days since closing or None) with five events each; their ids."""
    now = live.clock.now()
    ids = []
    async with live.db.session() as session:
        room = await session.scalar(select(func.min(Room.id)))
        for status, closed_days in spec:
            closed_at = None if closed_days is None else now - timedelta(days=closed_days)
            table = GameTable(room_id=room, variant="english", status=status, closed_at=closed_at)
            session.add(table)
            await session.flush()
            await table_log.append(session, table.id, [{"type": "chat"}] * 5, now)
            ids.append(table.id)
        await session.commit()
    return ids


async def events_of(live: LivePlay) -> dict[int, int]:
    async with live.db.session() as session:
        rows = await session.execute(
            select(TableEvent.table_id, func.count()).group_by(TableEvent.table_id)
        )
        return {table_id: count for table_id, count in rows.all()}


async def test_events_of_tables_closed_past_the_retention_are_pruned(live: LivePlay) -> None:
    assert live.settings.table_log_retention_days == 7
    old, recent, open_ = await add_tables(live, [("closed", 8), ("closed", 6), ("open", None)])
    assert await events_of(live) == {old: 5, recent: 5, open_: 5}
    assert await retention.prune_log(live) == 1
    assert await events_of(live) == {recent: 5, open_: 5}
    async with live.db.session() as session:
        assert await table_log.head(session, old) == 5  # the numbering stays
    assert await retention.prune_log(live) == 0  # nothing left to do
    live.clock.advance(timedelta(days=1.5).total_seconds())
    assert await retention.prune_log(live) == 1
    assert await events_of(live) == {open_: 5}


async def test_a_backlog_is_pruned_in_batches(
    live: LivePlay, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(table_log, "PRUNE_TABLES", 3)
    await add_tables(live, [("closed", 30 + n) for n in range(8)])
    assert await retention.prune_log(live, max_batches=2) == 6  # two batches of three
    assert len(await events_of(live)) == 2
    assert await retention.prune_log(live) == 2
    assert await events_of(live) == {}


async def test_a_retention_of_zero_keeps_every_event(db_url: str) -> None:
    broker = MemoryBroker()
    settings = make_settings(database_url=db_url, table_log_retention_days=0)
    live = LivePlay(Database(db_url), broker, settings, FakeClock())
    try:
        await add_tables(live, [("closed", 400)])
        assert await retention.prune_log(live) == 0
        assert len(await events_of(live)) == 1
    finally:
        await live.stop()


async def test_the_log_grows_no_more_with_tables_closed_long_ago(live: LivePlay) -> None:
    """Rows in `table_events` stay bounded by the tables of the retention period however
    many tables were closed before it (the finding: the log kept every event for ever)."""
    await add_tables(live, [("closed", 10 + n) for n in range(20)] + [("closed", 1)])
    assert sum((await events_of(live)).values()) == 21 * 5
    await retention.prune_log(live)
    assert sum((await events_of(live)).values()) == 5


async def test_a_client_resuming_a_pruned_log_gets_a_snapshot(live: LivePlay) -> None:
    (old,) = await add_tables(live, [("closed", 8)])
    assert [e.seq for e in await tables.missed(live, old, 2, None) or []] == [3, 4, 5]
    await retention.prune_log(live)
    assert await tables.missed(live, old, 2, None) is None
    assert await tables.missed(live, old, 5, None) == []  # nothing was missed
