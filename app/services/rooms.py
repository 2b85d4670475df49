"""Rooms: named spaces with a variant and a default clock, which hold tables."""

from __future__ import annotations

from typing import Any

from app.db.models import Room
from app.db.rooms import find_room as find_room
from app.db.rooms import first_open_room as first_open_room
from app.services.clocks import clock_payload


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
