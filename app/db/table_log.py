"""Storage of the tables' event logs: each table's events numbered 1, 2, 3… in the order their
transactions committed.

`append` raises the table's `event_seq` and inserts the events in the caller's transaction: the
row lock that raising takes orders concurrent writers, so numbers follow commit order and no
number is skipped. Readers (`since`, `heads`) let any process, and through it any client, find
and fill a gap.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from functools import cached_property

from sqlalchemy import insert, select, text, update
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncSession

from app.db.models import GameTable, TableEvent

Executor = AsyncConnection | AsyncSession


@dataclass(frozen=True, slots=False)
class StoredEvent:
    """An event as stored: its table, its number and its JSON text (without the number)."""

    table_id: int
    seq: int
    payload: str

    @classmethod
    def of_frame(cls, table_id: int, frame: str) -> StoredEvent:
        """The event a frame carries (as rung on the broker)."""
        comma = frame.index(",", 5)
        event = cls(table_id, int(frame[5:comma]), "{" + frame[comma + 1 :])
        event.__dict__["frame"] = frame
        return event

    @cached_property
    def frame(self) -> str:
        """The event as clients receive it: the payload with `v`, the number, first."""
        return f'{{"v":{self.seq},{self.payload[1:]}'


async def append(
    db: Executor, table_id: int, payloads: Sequence[str], at: datetime
) -> list[StoredEvent]:
    """Number and store `payloads` (JSON objects as text) as the table's next events."""
    if not payloads:
        return []
    conn = db if isinstance(db, AsyncConnection) else await db.connection()
    if conn.dialect.name == "postgresql":  # one statement, one round trip
        first = (
            await db.execute(
                _APPEND_POSTGRES, {"table": table_id, "payloads": list(payloads), "at": at}
            )
        ).scalar_one()
        return [StoredEvent(table_id, first + n, text) for n, text in enumerate(payloads)]
    last = (
        await db.execute(
            update(GameTable)
            .where(GameTable.id == table_id)
            .values(event_seq=GameTable.event_seq + len(payloads))
            .returning(GameTable.event_seq)
        )
    ).scalar_one()
    first = last - len(payloads) + 1
    events = [StoredEvent(table_id, first + n, text) for n, text in enumerate(payloads)]
    await db.execute(
        insert(TableEvent),
        [{"table_id": table_id, "seq": e.seq, "payload": e.payload, "at": at} for e in events],
    )
    return events


_APPEND_POSTGRES = text(
    """
    WITH numbered AS (
        UPDATE tables SET event_seq = event_seq + cardinality(CAST(:payloads AS TEXT[]))
        WHERE id = :table
        RETURNING event_seq - cardinality(CAST(:payloads AS TEXT[])) AS base
    ),
    stored AS (
        INSERT INTO table_events (table_id, seq, payload, at)
        SELECT :table, numbered.base + e.n, e.payload, :at
        FROM numbered, unnest(CAST(:payloads AS TEXT[])) WITH ORDINALITY AS e(payload, n)
    )
    SELECT base + 1 FROM numbered
    """
)


async def since(db: Executor, table_id: int, after: int, limit: int) -> list[StoredEvent]:
    """The table's events numbered above `after`, oldest first, at most `limit`."""
    rows = await db.execute(
        select(TableEvent.seq, TableEvent.payload)
        .where(TableEvent.table_id == table_id, TableEvent.seq > after)
        .order_by(TableEvent.seq)
        .limit(limit)
    )
    return [StoredEvent(table_id, seq, payload) for seq, payload in rows.all()]


async def head(db: Executor, table_id: int) -> int:
    """The number of the table's latest event (0: none yet)."""
    return (await db.scalar(select(GameTable.event_seq).where(GameTable.id == table_id))) or 0


async def heads(db: Executor, table_ids: Iterable[int]) -> dict[int, int]:
    """The latest event number of each of these tables."""
    ids = list(table_ids)
    if not ids:
        return {}
    rows = await db.execute(select(GameTable.id, GameTable.event_seq).where(GameTable.id.in_(ids)))
    return {table_id: seq for table_id, seq in rows.all()}


async def latest_starting(
    db: Executor, table_id: int, head: str, upto: int, limit: int
) -> list[StoredEvent]:
    """The table's newest `limit` events numbered `upto` or below whose JSON text starts with
    `head` (e.g. its chat lines), newest first."""
    rows = await db.execute(
        select(TableEvent.seq, TableEvent.payload)
        .where(
            TableEvent.table_id == table_id,
            TableEvent.seq <= upto,
            TableEvent.payload.startswith(head, autoescape=True),
        )
        .order_by(TableEvent.seq.desc())
        .limit(limit)
    )
    return [StoredEvent(table_id, seq, payload) for seq, payload in rows.all()]
