"""Shapes shared by several faces: a table's time control and a player as others see them."""

from __future__ import annotations

from pydantic import BaseModel

from app.services.clocks import Clock

__all__ = ["Clock", "PlayerPublic"]


class PlayerPublic(BaseModel):
    id: int
    name: str
