"""Storage of rooms: named spaces with a variant and a default clock, which hold tables."""

from __future__ import annotations

from typing import Any

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from app.db.models import Room


async def find_room(session: AsyncSession, ref: str | int, *, lock: bool = False) -> Room | None:
    """A room by id or slug; with `lock`, locked until the transaction ends (PostgreSQL)."""
    query = select(Room).where(Room.id == ref if isinstance(ref, int) else Room.slug == ref)
    if lock:  # FOR NO KEY UPDATE: other rows may still refer to the room meanwhile
        query = query.with_for_update(key_share=True)
    return await session.scalar(query)


async def first_open_room(session: AsyncSession, variant: str) -> Room | None:
    """The first open, listed room of a variant (the oldest), locked as `find_room` locks."""
    query = (
        select(Room)
        .where(Room.variant == variant, Room.is_open, Room.is_listed)
        .order_by(Room.id)
        .limit(1)
        .with_for_update(key_share=True)
    )
    return await session.scalar(query)


async def lock_room(session: AsyncSession, room_id: int) -> Room | None:
    """A room by id, locked (FOR UPDATE) until the transaction ends: an administrator's change."""
    return await session.scalar(select(Room).where(Room.id == room_id).with_for_update())


async def room_exists(session: AsyncSession, room_id: int) -> bool:
    return await session.get(Room, room_id) is not None


async def slug_taken(session: AsyncSession, slug: str) -> bool:
    return await session.scalar(select(Room.id).where(Room.slug == slug)) is not None


async def room_id_of(session: AsyncSession, slug: str) -> int | None:
    room_id: int | None = await session.scalar(select(Room.id).where(Room.slug == slug))
    return room_id


async def slugs(session: AsyncSession) -> dict[int, str]:
    """Every room's slug by id."""
    rows = await session.execute(select(Room.id, Room.slug))
    return {room_id: slug for room_id, slug in rows.all()}


async def list_rooms(session: AsyncSession, *, listed_only: bool = False) -> list[Room]:
    """The rooms by id: all of them, or those listed in the lobby."""
    query = select(Room).order_by(Room.id)
    if listed_only:
        query = query.where(Room.is_listed.is_(True))
    return list((await session.scalars(query)).all())


async def add_room(session: AsyncSession, slug: str, **settings: Any) -> Room:
    """A new room, flushed so that it has its id (a slug taken meanwhile raises
    `IntegrityError` here)."""
    room = Room(slug=slug, **settings)
    session.add(room)
    await session.flush()
    return room


async def first_open(session: AsyncSession, variant: str) -> Room | None:
    """The open room of a variant with the lowest id, locked as `find_room(lock=True)` locks
    (a room being closed meanwhile gets no new table)."""
    return await session.scalar(
        select(Room)
        .where(Room.variant == variant, Room.is_open.is_(True))
        .order_by(Room.id)
        .limit(1)
        .with_for_update(key_share=True)
    )
