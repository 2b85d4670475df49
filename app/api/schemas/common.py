"""Shapes shared by several faces: a table's time control and a player as others see them."""

from __future__ import annotations

from pydantic import BaseModel, Field

from app.play.clocks import Clock

__all__ = ["Clock", "PlayerPublic", "SeatedPlayerPublic"]


class PlayerPublic(BaseModel):
    id: int
    name: str


class SeatedPlayerPublic(PlayerPublic):
    """A player at a table, with their rating in the table's variant and category."""

    rating: int | None = Field(description="Whole rating; null for a guest (who has none).")
    provisional: bool = Field(description="RD, grown while idle, of 110 or more: shown as `1500?`.")
