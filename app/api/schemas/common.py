"""Shapes shared by several faces: a table's time control and a player as others see them."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from app.services.tables import MAX_CLOCK_BASE_S, MAX_CLOCK_INCREMENT_S


class Clock(BaseModel):
    """A Fischer time control in seconds: what a room or a table plays with, as the admin API
    and the `open` message take it and the lobby shows it."""

    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)

    base: int = Field(ge=1, le=MAX_CLOCK_BASE_S, description="Time each player starts with.")
    increment: int = Field(
        default=0, ge=0, le=MAX_CLOCK_INCREMENT_S, description="Added after each move."
    )


class PlayerPublic(BaseModel):
    id: int
    name: str
