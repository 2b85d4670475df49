"""Rooms: named spaces with a variant and a default clock, which hold tables."""

from __future__ import annotations

from typing import Any

from app.db.models import Room
from app.play.clocks import clock_payload
from app.tables.rooms_store import find_room as find_room
from app.tables.rooms_store import first_open_room as first_open_room


def room_payload(room: Room) -> dict[str, Any]:
    clock = clock_payload(room.clock_base_s, room.clock_increment_s)
    return {
        "id": room.id,
        "slug": room.slug,
        "name": room.name,
        "variant": room.variant,
        "clock": clock,
        "open": room.is_open,
    }
