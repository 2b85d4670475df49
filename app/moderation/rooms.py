"""An administrator's rooms: create, configure, close (its tables close and their games end)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession

from app.accounts.store import UserFilter as UserFilter
from app.db.audit import AuditFilter as AuditFilter
from app.db.models import AuditEntry, Room, User
from app.errors import Code
from app.live import messages
from app.live.liveplay import LivePlay
from app.live.log_store import StoredEvent
from app.moderation.admin import NotFound, Refused, _announce, _audit, _end, _playing_at
from app.play import tables_store as stored_tables
from app.tables import rooms_store as rooms
from app.tables import service as tables
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
        raise Refused(Code.SLUG_TAKEN, f"a room is already called {slug!r}")
    values = {name: getattr(settings, name) for name in ROOM_SETTINGS}
    try:
        room = await rooms.add_room(session, slug, **values)
    except IntegrityError as exc:  # the same slug created concurrently
        await session.rollback()
        raise Refused(Code.SLUG_TAKEN, f"a room is already called {slug!r}") from exc
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
        raise Refused(Code.ROOM_CLOSED, f"room {room.slug} is already closed")
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
    await _announce(live, events, control=messages.close_room(room_id))
    return entry
