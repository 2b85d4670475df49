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
import json
from collections.abc import Coroutine, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession

from app.db import accounts, audit, rooms
from app.db import games as stored_games
from app.db import ratings as stored_ratings
from app.db import tables as stored_tables
from app.db.accounts import UserFilter as UserFilter
from app.db.audit import AuditFilter as AuditFilter
from app.db.models import MAX_ID, AuditEntry, Room, User
from app.db.models import Game as GameRow
from app.db.table_log import StoredEvent
from app.rules import Result, Termination
from app.services import games, heartbeat, tables
from app.services.errors import ServiceError
from app.services.live import CONTROL_CHANNEL, LivePlay, PlayerRef, PlayError, read_table
from app.status import GameStatus, TableStatus
from app.timeutil import utcnow

ROOM_SETTINGS = (
    "name",
    "variant",
    "clock_base_s",
    "clock_increment_s",
    "table_limit",
    "is_open",
    "is_listed",
)
BAN_REASON_LENGTH = 200  # users.ban_reason
ANNOUNCE_CONCURRENCY = 8


class AdminError(ServiceError):
    """A refused administrator's action (409 unless said otherwise)."""

    http_status = 409


class NotFound(AdminError):
    def __init__(self, what: str) -> None:
        super().__init__("not_found", f"no {what}", http_status=404)


class Refused(AdminError):
    """The target is not in a state that allows the action (already closed, ended, banned…)."""


class BadCursor(AdminError):
    def __init__(self) -> None:
        super().__init__(
            "bad_cursor", "cursor must be a `next_cursor` from a previous page", http_status=400
        )


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
    control: dict[str, Any] | None = None,
    unseat: tuple[PlayerRef, Sequence[int]] | None = None,
) -> None:
    """Tell the server what was committed: the table events stored with the change, the
    control event, and seats given up (also when the user has no connection for the control
    event to reach).

    The action and its table events are stored either way; if the broker is down every
    process still finds the events in the tables' logs.
    """
    for game_id in {json.loads(e.payload).get("game") for e in events} - {None}:
        games.forget(live, game_id)
    await live.announce(events)
    await _each(_tell_lobby(live, table_id) for table_id in sorted({e.table_id for e in events}))
    if control is not None:
        await live.publish(CONTROL_CHANNEL, control)
    if unseat is not None:
        user, table_ids = unseat
        for table_id in table_ids:
            with contextlib.suppress(PlayError):  # not seated there
                await tables.leave(live, user, table_id)


async def _tell_lobby(live: LivePlay, table_id: int) -> None:
    with contextlib.suppress(PlayError):
        await live.publish_lobby(await tables.load_table(live, table_id))


# --- ending games --------------------------------------------------------------------------


async def _end(
    live: LivePlay, session: AsyncSession, row: GameRow, result: str, note: str
) -> list[StoredEvent]:
    """Record an administrator's ending on a locked game row (aborted without a result),
    stopping its clock now, with its events."""
    events = await games.store_ending(
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
        raise Refused("game_over", f"game {game_id} is not in progress ({row.result})")
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
        raise Refused("table_closed", f"table {table_id} is already closed")
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


@dataclass(frozen=True)
class RoomSettings:
    """What an administrator sets on a room; tables opened later take these defaults."""

    name: str
    variant: str
    clock_base_s: int | None
    clock_increment_s: int
    table_limit: int
    is_open: bool
    is_listed: bool


def _room_settings(room: Room) -> dict[str, Any]:
    return {name: getattr(room, name) for name in ROOM_SETTINGS}


async def create_room(
    session: AsyncSession, actor: User, slug: str, settings: RoomSettings, note: str | None
) -> Room:
    if await rooms.slug_taken(session, slug):
        raise Refused("slug_taken", f"a room is already called {slug!r}")
    values = {name: getattr(settings, name) for name in ROOM_SETTINGS}
    try:
        room = await rooms.add_room(session, slug, **values)
    except IntegrityError as exc:  # the same slug created concurrently
        await session.rollback()
        raise Refused("slug_taken", f"a room is already called {slug!r}") from exc
    _audit(session, actor, "room.create", "room", room.id, note, slug=slug, **values)
    await session.commit()
    return room


async def update_room(
    session: AsyncSession, actor: User, room_id: int, changes: dict[str, Any], note: str | None
) -> Room:
    """Rename or configure a room (any of `ROOM_SETTINGS`); tables already open keep theirs.

    Opening a closed room makes it usable again. Changing nothing records nothing.
    """
    unknown = set(changes) - set(ROOM_SETTINGS)
    if unknown:
        raise ValueError(f"not a room setting: {sorted(unknown)}")
    room = await rooms.lock_room(session, room_id)
    if room is None:
        raise NotFound(f"room {room_id}")
    before = _room_settings(room)
    changed = {name: [before[name], value] for name, value in changes.items()}
    changed = {name: pair for name, pair in changed.items() if pair[0] != pair[1]}
    if not changed:
        await session.commit()
        return room
    for name, (_, value) in changed.items():
        setattr(room, name, value)
    if room.is_open:
        room.closed_at = None
    action = "room.rename" if set(changed) == {"name"} else "room.configure"
    _audit(session, actor, action, "room", room_id, note, changed=changed)
    await session.commit()
    return room


async def close_room(
    session: AsyncSession, live: LivePlay, actor: User, room_id: int, result: str, note: str
) -> AuditEntry:
    """Close a room: no new tables, its tables closed, their games ended with `result`."""
    room = await rooms.lock_room(session, room_id)
    if room is None:
        raise NotFound(f"room {room_id}")
    if room.closed_at is not None:
        raise Refused("room_closed", f"room {room.slug} is already closed")
    now = utcnow()
    closed = await stored_tables.locked_open_in_room(session, room_id)
    ended = await _playing_at(session, [t.id for t in closed])
    events: list[StoredEvent] = []
    for row in ended:
        events += await _end(live, session, row, result, note)
    for table in closed:
        events += await tables.record_closing(live, session, table.id, note)
    room.is_open, room.closed_at = False, now
    entry = _audit(
        session,
        actor,
        "room.close",
        "room",
        room_id,
        note,
        result=result,
        tables=[t.id for t in closed],
        games=[g.id for g in ended],
    )
    await session.commit()
    await _announce(live, events, control={"type": "room_closed", "room_id": room_id})
    return entry


# --- users ---------------------------------------------------------------------------------


async def _target_user(session: AsyncSession, actor: User, user_id: int, verb: str) -> User:
    user = await accounts.lock_user(session, user_id)
    if user is None:
        raise NotFound(f"user {user_id}")
    if user.id == actor.id:
        raise Refused("own_account", f"administrators cannot {verb} themselves")
    return user


async def kick(
    session: AsyncSession,
    live: LivePlay,
    actor: User,
    user_id: int,
    note: str,
    *,
    table_id: int | None = None,
    room_id: int | None = None,
    result: str = Result.UNFINISHED,
) -> AuditEntry:
    """Send a user away from a table, from every table of a room, or (neither) from the server.

    From tables: their games there end with `result`, they lose their seats and stop watching.
    From the server: their connections are closed. Nothing stops them coming back: ban for that.
    """
    user = await _target_user(session, actor, user_id, "kick")
    if table_id is not None:
        table = await stored_tables.get(session, table_id)
        if table is None:
            raise NotFound(f"table {table_id}")
        if table.status == TableStatus.CLOSED:
            raise Refused("table_closed", f"table {table_id} is closed")
        scope = [table_id]
    elif room_id is not None:
        if not await rooms.room_exists(session, room_id):
            raise NotFound(f"room {room_id}")
        scope = await _open_table_ids(session, room_id)
    else:
        scope = []
    ended = await _playing_at(session, scope, user_id)
    events: list[StoredEvent] = []
    for row in ended:
        events += await _end(live, session, row, result, note)
    details: dict[str, Any] = {"name": user.name, "table": table_id, "room": room_id}
    if ended:
        details |= {"games": [g.id for g in ended], "result": result}
    entry = _audit(session, actor, "user.kick", "user", user_id, note, **details)
    await session.commit()
    await _announce(
        live,
        events,
        control={
            "type": "kick",
            "user_id": user_id,
            "table_ids": scope if table_id is not None or room_id is not None else None,
            "reason": note,
        },
        unseat=(PlayerRef(user.id, user.name), scope),
    )
    return entry


async def ban(
    session: AsyncSession, live: LivePlay, actor: User, user_id: int, note: str
) -> AuditEntry:
    """Refuse the user's log-ins and tokens from now on and close their connections.

    Their tokens are revoked, so an unban asks them to log in again. A game they were playing is
    left to its clock and the abandonment rule, like any player who goes away.
    """
    user = await _target_user(session, actor, user_id, "ban")
    if user.banned:
        raise Refused("already_banned", f"{user.name} is already banned")
    user.banned, user.ban_reason = True, note[:BAN_REASON_LENGTH]
    await accounts.delete_tokens_of(session, user_id)
    entry = _audit(session, actor, "user.ban", "user", user_id, note, name=user.name)
    await session.commit()
    await _announce(
        live, [], control={"type": "ban", "user_id": user_id, "reason": f"banned: {note}"}
    )
    return entry


async def unban(session: AsyncSession, actor: User, user_id: int, note: str) -> AuditEntry:
    user = await _target_user(session, actor, user_id, "unban")
    if not user.banned:
        raise Refused("not_banned", f"{user.name} is not banned")
    user.banned, user.ban_reason = False, None
    entry = _audit(session, actor, "user.unban", "user", user_id, note, name=user.name)
    await session.commit()
    return entry


async def resolve_review(session: AsyncSession, actor: User, review_id: int) -> AuditEntry:
    """A moderator looked at a rating review (`app.services.fair_play`)."""
    if not await stored_ratings.resolve_review(session, review_id, actor.id, utcnow()):
        raise NotFound(f"open review {review_id}")
    entry = _audit(session, actor, "review.resolve", "review", review_id, None)
    await session.commit()
    return entry


async def list_users(
    session: AsyncSession, flt: UserFilter, limit: int, offset: int
) -> tuple[list[User], int]:
    """Matching users by name, and how many match in all."""
    return await accounts.list_users(session, flt, limit, offset)


# --- the audit log -------------------------------------------------------------------------


@dataclass(frozen=True)
class AuditRecord:
    entry: AuditEntry
    actor: str | None


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
    records = [AuditRecord(entry, name) for entry, name in rows[:limit]]
    next_cursor = str(records[-1].entry.id) if len(rows) > limit else None
    return AuditPage(records, next_cursor)


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
