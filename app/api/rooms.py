"""REST: the rooms and their public tables, as the lobby shows them (live updates go over /ws)."""

from __future__ import annotations

import re
from typing import Annotated, Literal

from fastapi import APIRouter, Path, Request
from pydantic import BaseModel

from app.api.common.deps import LiveDep
from app.api.common.errors import ErrorBody
from app.api.common.params import NAME_PATTERN
from app.api.schemas.common import Clock, SeatedPlayerPublic
from app.db.models import MAX_ID
from app.status import TableState, UserKind
from app.tables import presence
from app.tables import service as tables

router = APIRouter(prefix="/api/rooms", tags=["rooms"])
_DECIMAL_ID = re.compile("[1-9][0-9]*")


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


class OnlinePlayer(SeatedPlayerPublic):
    """A player seated in the room, with their rating in that table's category."""

    kind: UserKind  # only "registered" has a rating
    table: int | None  # their lowest-numbered public table here; None: private tables only


class RoomOnline(BaseModel):
    room: int
    slug: str
    count: int
    players: list[OnlinePlayer]


@router.get("/{name}/online", responses={404: {"model": ErrorBody, "description": "No room."}})
async def online(
    name: Annotated[str, Path(max_length=40, pattern=NAME_PATTERN, description="Slug or id.")],
    live: LiveDep,
) -> RoomOnline:
    """Who is in the room now: the players seated at its tables (waiting, playing, or after a
    game) who are connected, by name, with their rating in their table's category (as the
    lobby shows seats: null for a guest or the computer) and their account's kind."""
    # An id in decimal digits as written (beyond BIGINT no room has it); anything else a slug.
    ref: str | int = name
    if _DECIMAL_ID.fullmatch(name) and int(name) <= MAX_ID:
        ref = int(name)
    return RoomOnline.model_validate(await presence.online_in_room(live, ref))


@router.get("")
async def list_rooms(request: Request) -> list[RoomPublic]:
    """Every listed room with its public tables waiting for a player or playing."""
    rooms = await tables.lobby(request.app.state.live)
    return [RoomPublic.model_validate(room) for room in rooms]
