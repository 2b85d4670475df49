"""Storage of the tables' event logs: each table's events numbered 1, 2, 3… in the order their
transactions committed.

`append` raises the table's `event_seq` and inserts the events in the caller's transaction: the
row lock that raising takes orders concurrent writers, so numbers follow commit order and no
number is skipped. Readers (`since`, `heads`) let any process, and through it any client, find
and fill a gap.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from functools import cached_property
from typing import Any

from sqlalchemy import bindparam, delete, insert, select, text, update
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncSession

from app.db.models import GameTable, TableEvent
from app.status import TableStatus

Executor = AsyncConnection | AsyncSession


@dataclass(frozen=True, slots=False)
class StoredEvent:
    """An event as stored: its table, its number, its type (`kind`) and its JSON text (without
    the number). `data` is the event itself: as made, for an event stored by this process; read
    from the text once (`decoded`) for one stored by another, the one place an event's text is
    read back."""

    table_id: int
    seq: int
    kind: str
    payload: str
    made: Mapping[str, Any] | None = field(default=None, compare=False, repr=False)

    @classmethod
    def of_ring(cls, table_id: int, ring: str) -> StoredEvent:
        """The event a ring carries (`ring`): its type, a space, then its frame."""
        space = ring.index(" ")
        frame = ring[space + 1 :]
        comma = frame.index(",", 5)
        event = cls(table_id, int(frame[5:comma]), ring[:space], "{" + frame[comma + 1 :])
        event.__dict__["frame"] = frame
        return event

    def kept(self) -> StoredEvent:
        """The event without its fields, as made or decoded (read again from the text if
        needed), to be kept for long."""
        if self.made is None and "data" not in self.__dict__:
            return self
        kept = StoredEvent(self.table_id, self.seq, self.kind, self.payload)
        if "frame" in self.__dict__:
            kept.__dict__["frame"] = self.__dict__["frame"]
        return kept

    @cached_property
    def ring(self) -> str:
        """The event as rung on the broker for the other processes: its type, then its frame."""
        return f"{self.kind} {self.frame}"

    @cached_property
    def frame(self) -> str:
        """The event as clients receive it: the payload with `v`, the number, first."""
        return f'{{"v":{self.seq},{self.payload[1:]}'

    @cached_property
    def data(self) -> Mapping[str, Any]:
        """The event's fields: as made here, or decoded once from its text."""
        if self.made is not None:
            return self.made
        decoded: Mapping[str, Any] = json.loads(self.payload)
        return decoded


def encode(event: Mapping[str, Any]) -> str:
    """An event's JSON text, as stored and sent (compact, UTF-8 as is)."""
    return json.dumps(event, separators=(",", ":"), ensure_ascii=False)


def numbered(table_id: int, first: int, made: Sequence[Mapping[str, Any]]) -> list[StoredEvent]:
    """Events made here, numbered from `first`, with their text."""
    return [StoredEvent(table_id, first + n, e["type"], encode(e), e) for n, e in enumerate(made)]


async def append(
    db: Executor, table_id: int, made: Sequence[Mapping[str, Any]], at: datetime
) -> list[StoredEvent]:
    """Number and store the events `made` (each with its `type`) as the table's next events."""
    if not made:
        return []
    conn = db if isinstance(db, AsyncConnection) else await db.connection()
    if conn.dialect.name == "postgresql":  # one statement, one round trip
        events = numbered(table_id, 0, made)
        values = {
            "table": table_id,
            "kinds": [e.kind for e in events],
            "payloads": [e.payload for e in events],
            "at": at,
        }
        first = (await db.execute(_APPEND_POSTGRES, values)).scalar_one()
        return [replace(e, seq=first + e.seq) for e in events]
    last = (
        await db.execute(
            update(GameTable)
            .where(GameTable.id == table_id)
            .values(event_seq=GameTable.event_seq + len(made))
            .returning(GameTable.event_seq)
        )
    ).scalar_one()
    events = numbered(table_id, last - len(made) + 1, made)
    await db.execute(
        insert(TableEvent),
        [
            {"table_id": table_id, "seq": e.seq, "kind": e.kind, "payload": e.payload, "at": at}
            for e in events
        ],
    )
    return events


def append_ctes(counts: str, events: str) -> str:
    """The append rule in PostgreSQL, as two CTEs of one statement, written here only (the
    move batch, `app.play.moves_store`, uses them too): `numbered` raises each table's
    `event_seq` by its count of events and returns (key, base), the number before its first one;
    `stored_events` stores the events numbered on from `base`. `counts` yields rows (key,
    table_id, n); `events` rows (key, off, kind, payload, at), `off` counting each key's events
    from 1. (SQLite, which has no data-modifying CTEs, runs the same rule as two statements:
    `append`.)"""
    return f"""
    numbered AS (
        UPDATE tables AS t SET event_seq = t.event_seq + c.n
        FROM {counts} AS c
        WHERE t.id = c.table_id
        RETURNING c.key, t.id AS table_id, t.event_seq - c.n AS base
    ),
    stored_events AS (
        INSERT INTO table_events (table_id, seq, kind, payload, at)
        SELECT n.table_id, n.base + e.off, e.kind, e.payload, e.at
        FROM {events} AS e JOIN numbered AS n ON n.key = e.key
    )"""


_APPEND_ONE_TABLE = append_ctes(
    counts="""(SELECT CAST(:table AS BIGINT) AS key, CAST(:table AS BIGINT) AS table_id,
        cardinality(CAST(:payloads AS TEXT[])) AS n)""",
    events="""(SELECT CAST(:table AS BIGINT) AS key, e.off, e.kind, e.payload,
            CAST(:at AS TIMESTAMPTZ) AS at
        FROM unnest(CAST(:kinds AS TEXT[]), CAST(:payloads AS TEXT[]))
            WITH ORDINALITY AS e(kind, payload, off))""",
)
_APPEND_POSTGRES = text(f"WITH {_APPEND_ONE_TABLE} SELECT base + 1 FROM numbered")


async def since(db: Executor, table_id: int, after: int, limit: int) -> list[StoredEvent]:
    """The table's events numbered above `after`, oldest first, at most `limit`."""
    rows = await db.execute(
        select(TableEvent.seq, TableEvent.kind, TableEvent.payload)
        .where(TableEvent.table_id == table_id, TableEvent.seq > after)
        .order_by(TableEvent.seq)
        .limit(limit)
    )
    return [StoredEvent(table_id, seq, kind, payload) for seq, kind, payload in rows.all()]


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


async def latest_of_kind(
    db: Executor, table_id: int, kind: str, upto: int, limit: int
) -> list[StoredEvent]:
    """The table's newest `limit` events of this type numbered `upto` or below (e.g. its chat
    lines), newest first."""
    # The type written into the statement, not bound: a partial index of one type's events
    # (`ix_table_events_chat`) serves only a statement that names it.
    of_kind = TableEvent.kind == bindparam("kind", kind, literal_execute=True)
    rows = await db.execute(
        select(TableEvent.seq, TableEvent.payload)
        .where(TableEvent.table_id == table_id, TableEvent.seq <= upto, of_kind)
        .order_by(TableEvent.seq.desc())
        .limit(limit)
    )
    return [StoredEvent(table_id, seq, kind, payload) for seq, payload in rows.all()]


# Closed tables whose events one pruning transaction deletes, at most (a table's log is a few
# hundred events: a batch is some tens of thousands of rows, a fraction of a second).
PRUNE_TABLES = 100

# The closed tables whose log is still kept (`ix_tables_log_kept`), oldest first. The status is
# written into the statement: the partial index serves only a statement that names it.
_KEPT = (
    select(GameTable.id)
    .where(
        GameTable.status == bindparam("closed", TableStatus.CLOSED.value, literal_execute=True),
        GameTable.log_pruned.is_(False),
        GameTable.closed_at < bindparam("before"),
    )
    .order_by(GameTable.closed_at)
    .limit(bindparam("limit"))
    .with_for_update(skip_locked=True)
)


async def prune(db: Executor, closed_before: datetime, limit: int | None = None) -> int:
    """Delete the events of the tables closed before `closed_before` whose log is still kept,
    at most `limit` tables (`PRUNE_TABLES`), the oldest closed first, skipping tables another
    transaction holds (processes pruning at once share the work and nobody waits); note their
    logs pruned; how many tables. Their numbering (`event_seq`) stays: a head never goes back."""
    limit = PRUNE_TABLES if limit is None else limit
    ids = list((await db.scalars(_KEPT, {"before": closed_before, "limit": limit})).all())
    if ids:
        await db.execute(delete(TableEvent).where(TableEvent.table_id.in_(ids)))
        await db.execute(update(GameTable).where(GameTable.id.in_(ids)).values(log_pruned=True))
    return len(ids)
