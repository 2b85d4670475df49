"""Rooms: named spaces with a variant and a default clock, which hold tables."""

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


def room_payload(room: Room) -> dict[str, Any]:
    clock = None
    if room.clock_base_s is not None:
        clock = {"base": room.clock_base_s, "increment": room.clock_increment_s}
    return {
        "id": room.id,
        "slug": room.slug,
        "name": room.name,
        "variant": room.variant,
        "clock": clock,
        "open": room.is_open,
    }
