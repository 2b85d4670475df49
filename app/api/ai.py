"""REST: start a game against the computer (it is then played over /ws like any game)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Request
from pydantic import BaseModel, ConfigDict, Field

from app.api.auth import client_address
from app.api.common.deps import CurrentUser, LiveDep, SessionDep
from app.api.common.errors import ErrorBody
from app.db.models import MAX_ID
from app.play.clocks import Clock
from app.play.players import PlayerRef
from app.tables import opening as table_opening

RoomId = Annotated[int, Field(ge=1, le=MAX_ID)]  # beyond: no room (ids are BIGINT)

router = APIRouter(prefix="/api/ai", tags=["ai"])


class AIGameCreate(BaseModel):
    """A game against the computer: always casual (never rated)."""

    model_config = ConfigDict(extra="forbid", strict=True)

    level: Annotated[int, Field(ge=1, le=8, description="1 (weakest) to 8.")]
    variant: Literal["english", "pool"] = "english"
    colour: Literal["black", "white", "random"] = "random"  # the player's; random: by lot
    clock: Clock | None = None  # null or omitted: untimed
    room: Annotated[str, Field(max_length=40)] | RoomId | None = None
    start_fen: Annotated[str, Field(max_length=200)] | None = None


REFUSED: dict[int | str, dict[str, Any]] = {
    409: {
        "model": ErrorBody,
        "description": "`too_many_ai_games`: AI_GAMES_PER_USER games of yours, or "
        "AI_GAMES_PER_ADDRESS from your address, are in progress against the computer; "
        "`too_many_tables`: you host TABLES_PER_USER open tables; `room_closed`.",
    }
}


@router.post("/games", status_code=201, responses=REFUSED)
async def create_ai_game(
    body: AIGameCreate, request: Request, user: CurrentUser, session: SessionDep, live: LiveDep
) -> dict[str, Any]:
    """Open a table against the computer and start its game at once; returns the table (its
    `game` is the new game's id). Play it over /ws (`watch` the table, then `move`). 409
    `too_many_ai_games` beyond AI_GAMES_PER_USER games of yours, or AI_GAMES_PER_ADDRESS from
    your address, in progress against the computer."""
    # The request's session ends here (noting the user seen): the game is started in a
    # transaction of its own, which on SQLite must not wait for this one.
    await session.commit()
    return await table_opening.start_ai_game(
        live,
        PlayerRef(user.id, user.name),
        level=body.level,
        variant=body.variant,
        colour=body.colour,
        clock=body.clock.model_dump() if body.clock is not None else None,
        room=body.room,
        start_fen=body.start_fen,
        address=client_address(request),
    )
