"""REST: the rooms and their public tables, as the lobby shows them (live updates go over /ws)."""

from __future__ import annotations

from typing import Literal

from fastapi import APIRouter, Request
from pydantic import BaseModel

from app.api.schemas.common import Clock, SeatedPlayerPublic
from app.services import tables
from app.status import TableState

router = APIRouter(prefix="/api/rooms", tags=["rooms"])


class TablePublic(BaseModel):
    id: int
    room: int
    variant: Literal["english", "pool"]
    clock: Clock | None  # None: untimed
    colour: Literal["black", "white", "random"]  # the host's colour
    private: bool
    rated: bool  # its games move ratings
    start_fen: str | None
    status: TableState
    players: list[SeatedPlayerPublic]  # each with their rating in the table's category
    game: int | None  # the latest game at the table


class RoomPublic(BaseModel):
    id: int
    slug: str
    name: str
    variant: Literal["english", "pool"]
    clock: Clock | None  # the default clock of its tables
    open: bool
    tables: list[TablePublic]


@router.get("")
async def list_rooms(request: Request) -> list[RoomPublic]:
    """Every listed room with its public tables waiting for a player or playing."""
    rooms = await tables.lobby(request.app.state.live)
    return [RoomPublic.model_validate(room) for room in rooms]
