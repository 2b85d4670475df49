"""Administration: operators manage rooms, tables, games and users, and every action is audited.

Each action writes its change and its `AuditEntry` in one transaction (the request's session), so
there is never a change without its entry nor an entry without its change. Only after the commit
is the rest of the server told: live play follows the stored endings and closings (it updates
this process's caches and publishes on the table channels), and kicks, bans and closed rooms go
to every server process on the broker's `control` channel.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Coroutine, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from app.accounts.store import UserFilter as UserFilter
from app.db import audit
from app.db.audit import AuditFilter as AuditFilter
from app.db.models import MAX_ID, AuditEntry, Room, User
from app.db.models import Game as GameRow
from app.errors import Code, ServiceError
from app.live import heartbeat, messages
from app.live.liveplay import CONTROL_CHANNEL, LivePlay, PlayError
from app.live.log_store import StoredEvent
from app.play import endings
from app.play import store as stored_games
from app.play import tables_store as stored_tables
from app.play.players import PlayerRef, read_table
from app.rules import Result, Termination
from app.status import GameStatus, TableStatus
from app.tables import rooms_store as rooms
from app.tables import seating
from app.tables import service as tables
from app.timeutil import utcnow

ANNOUNCE_CONCURRENCY = 8


class AdminError(ServiceError):
    """A refused administrator's action."""


class NotFound(AdminError):
    def __init__(self, what: str) -> None:
        super().__init__(Code.NOT_FOUND, f"no {what}")


class Refused(AdminError):
    """The target is not in a state that allows the action (already closed, ended, banned…)."""


class BadCursor(AdminError):
    def __init__(self) -> None:
        super().__init__(Code.BAD_CURSOR, "cursor must be a `next_cursor` from a previous page")


def _audit(
    session: AsyncSession,
    actor: User,
    action: str,
    target_type: str,
    target_id: int | str,
    note: str | None,
    **details: Any,
) -> AuditEntry:
    return audit.add_entry(session, actor.id, action, target_type, target_id, note, details)


async def _each(jobs: Iterable[Coroutine[Any, Any, None]]) -> None:
    """Run jobs a few at a time: each reads the database, so a room of a hundred games is told
    several times faster than one by one, without taking the whole connection pool."""
    limit = asyncio.Semaphore(ANNOUNCE_CONCURRENCY)

    async def run(job: Coroutine[Any, Any, None]) -> None:
        async with limit:
            await job

    await asyncio.gather(*(run(job) for job in jobs))


async def _announce(
    live: LivePlay,
    events: Sequence[StoredEvent],
    *,
    control: messages.Control | None = None,
    unseat: tuple[PlayerRef, Sequence[int]] | None = None,
) -> None:
    """Tell the server what was committed: the table events stored with the change, the
    control event, and seats given up (also when the user has no connection for the control
    event to reach).

    The action and its table events are stored either way; if the broker is down every
    process still finds the events in the tables' logs.
    """
    for game_id in {e.data["game"] for e in events if "game" in e.data}:
        live.forget(game_id)
    await live.announce(events)
    await _each(_tell_lobby(live, table_id) for table_id in sorted({e.table_id for e in events}))
    if control is not None:
        await live.publish(CONTROL_CHANNEL, control)
    if unseat is not None:
        user, table_ids = unseat
        for table_id in table_ids:
            with contextlib.suppress(PlayError):  # not seated there
                await seating.leave(live, user, table_id)


async def _tell_lobby(live: LivePlay, table_id: int) -> None:
    with contextlib.suppress(PlayError):
        await live.publish_lobby(await tables.load_table(live, table_id))


# --- ending games --------------------------------------------------------------------------


async def _end(
    live: LivePlay, session: AsyncSession, row: GameRow, result: str, note: str
) -> list[StoredEvent]:
    """Record an administrator's ending on a locked game row (aborted without a result),
    stopping its clock now, with its events."""
    events = await endings.store_ending(
        live, session, row.id, Result(result), Termination.ADMIN, reason=note, row=row
    )
    return events or []


async def _playing_at(
    session: AsyncSession, table_ids: Sequence[int], user_id: int | None = None
) -> list[GameRow]:
    """The games in progress at these tables (of `user_id` only, if given), locked."""
    return await stored_games.playing_at(session, table_ids, user_id)


async def end_game(
    session: AsyncSession, live: LivePlay, actor: User, game_id: int, result: str, note: str
) -> AuditEntry:
    """Adjudicate a live game with `result`, or abort it (`*`); the players are told why."""
    row = await stored_games.locked(session, game_id)
    if row is None:
        raise NotFound(f"game {game_id}")
    if row.status != GameStatus.PLAYING or row.table_id is None:
        raise Refused(Code.GAME_OVER, f"game {game_id} is not in progress ({row.result})")
    events = await _end(live, session, row, result, note)
    entry = _audit(
        session,
        actor,
        "game.abort" if result == Result.UNFINISHED else "game.adjudicate",
        "game",
        game_id,
        note,
        result=result,
        table=row.table_id,
        ply=row.ply_count,
    )
    await session.commit()
    await _announce(live, events)
    return entry


# --- tables and rooms ----------------------------------------------------------------------


async def close_table(
    session: AsyncSession, live: LivePlay, actor: User, table_id: int, result: str, note: str
) -> AuditEntry:
    """Close a table; a game in progress there ends with `result` (`*`: aborted)."""
    table = await stored_tables.locked(session, table_id)
    if table is None:
        raise NotFound(f"table {table_id}")
    if table.status == TableStatus.CLOSED:
        raise Refused(Code.TABLE_CLOSED, f"table {table_id} is already closed")
    ended = await _playing_at(session, [table_id])
    events: list[StoredEvent] = []
    for row in ended:
        events += await _end(live, session, row, result, note)
    events += await tables.record_closing(live, session, table_id, note)
    entry = _audit(
        session,
        actor,
        "table.close",
        "table",
        table_id,
        note,
        room=table.room_id,
        result=result,
        games=[g.id for g in ended],
    )
    await session.commit()
    await _announce(live, events)
    return entry


@dataclass(frozen=True)
class RoomState:
    """A room with its tables as live play shows them (players, game, status)."""

    room: Room
    tables: list[dict[str, Any]]


async def _open_table_ids(session: AsyncSession, room_id: int | None = None) -> list[int]:
    return await stored_tables.open_ids(session, room_id)


async def live_tables(
    session: AsyncSession, live: LivePlay, room_id: int | None = None
) -> list[dict[str, Any]]:
    """Every table not closed (of one room, if given), private ones included with their invite,
    as live play shows them plus the room's slug."""
    if room_id is not None and not await rooms.room_exists(session, room_id):
        raise NotFound(f"room {room_id}")
    slugs = await rooms.slugs(session)
    found = []
    for table_id in await _open_table_ids(session, room_id):
        table = await read_table(session, table_id)
        if table is not None and not table.closed:
            payload = live.table_payload(table, with_invite=True)
            found.append(payload | {"room_slug": slugs.get(table.room_id, "")})
    return found


async def list_rooms(session: AsyncSession, live: LivePlay) -> list[RoomState]:
    """Every room, hidden and closed ones too, with its open tables."""
    every = await rooms.list_rooms(session)
    by_room: dict[int, list[dict[str, Any]]] = {room.id: [] for room in every}
    for table in await live_tables(session, live):
        by_room.setdefault(table["room"], []).append(table)
    return [RoomState(room, by_room[room.id]) for room in every]


# --- users ---------------------------------------------------------------------------------


# --- the audit log -------------------------------------------------------------------------


@dataclass(frozen=True)
class AuditRecord:
    """An entry as the log shows it: with its administrator's name, and the name of the user
    or the room it is about (None for other targets)."""

    entry: AuditEntry
    actor: str | None
    target: str | None = None


@dataclass(frozen=True)
class AuditPage:
    entries: list[AuditRecord]
    next_cursor: str | None


async def audit_log(
    session: AsyncSession, flt: AuditFilter, limit: int, cursor: str | None = None
) -> AuditPage:
    """Entries newest first; `next_cursor` continues after the last one of the page."""
    before_id = None
    if cursor is not None:
        if not (cursor.isascii() and cursor.isdigit() and int(cursor) <= MAX_ID):
            raise BadCursor()
        before_id = int(cursor)
    rows = await audit.entries(session, flt, limit + 1, before_id)
    names = await audit.target_names(session, [entry for entry, _ in rows[:limit]])
    records = [
        AuditRecord(entry, name, names.get((entry.target_type, entry.target_id or "")))
        for entry, name in rows[:limit]
    ]
    next_cursor = str(records[-1].entry.id) if len(rows) > limit else None
    return AuditPage(records, next_cursor)


async def audit_record(session: AsyncSession, entry: AuditEntry, actor: User) -> AuditRecord:
    """The entry an action wrote, as the log shows it."""
    names = await audit.target_names(session, [entry])
    return AuditRecord(entry, actor.name, names.get((entry.target_type, entry.target_id or "")))


# --- server status -------------------------------------------------------------------------


async def live_counts(session: AsyncSession) -> tuple[int, int]:
    """(games in progress, tables open) on the whole server, as stored."""
    playing = await stored_games.count_playing(session)
    return playing, await stored_tables.count_open(session)


async def others_load(
    session: AsyncSession, instance: str, interval: float
) -> tuple[int, heartbeat.Load]:
    """The other server processes alive (beating), and their load as of their last beat."""
    conn = await session.connection()
    return await heartbeat.others_load(conn, instance, utcnow(), interval)
