"""REST: your conditional moves in a correspondence game (docs/notifications.md#conditional-moves):
lines of your opponent's move and your reply, played for you when their move comes."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Path
from pydantic import BaseModel, ConfigDict, Field

from app.api.common.deps import CallerDep, LiveDep
from app.api.common.errors import ErrorBody
from app.api.common.params import DIGITS, MAX_ID
from app.correspondence import conditional

router = APIRouter(prefix="/api/games", tags=["correspondence"])

GameId = Annotated[int, Path(ge=1, le=MAX_ID, description="Game id."), DIGITS]
MoveText = Annotated[str, Field(pattern=r"^[0-9x\-]{3,80}$")]
Line = Annotated[list[MoveText], Field(min_length=2, max_length=conditional.MAX_PLIES)]

ERRORS: dict[int | str, dict[str, Any]] = {
    400: {"model": ErrorBody, "description": "Not a correspondence game, or a line malformed."},
    401: {"model": ErrorBody, "description": "Not signed in."},
    404: {"model": ErrorBody, "description": "No game of yours (`not_found`)."},
    409: {
        "model": ErrorBody,
        "description": "The game is over (`game_over`), it is your move (`not_your_turn`), or "
        "a move breaks the rules (`illegal_move`, naming the line).",
    },
}
SAVE_ERRORS: dict[int | str, dict[str, Any]] = {
    **ERRORS,
    429: {
        "model": ErrorBody,
        "description": "Stored too often (`rate_limited`, with `Retry-After`): a few times a "
        "minute, across your games.",
    },
}


class ConditionalPublic(BaseModel):
    """Your conditional moves: the lines (their move, your reply, in turn) from the ply of
    your opponent's next move."""

    game: int
    ply: int
    lines: list[list[str]]


class ConditionalBody(BaseModel):
    model_config = ConfigDict(extra="forbid")

    lines: list[
        Annotated[list[MoveText], Field(min_length=2, max_length=conditional.MAX_PLIES)]
    ] = Field(max_length=conditional.MAX_LINES, description="Empty: forget them.")


@router.get("/{game_id}/conditional", responses=ERRORS)
async def show(game_id: GameId, caller: CallerDep, live: LiveDep) -> ConditionalPublic:
    """Your conditional moves in this game (only you ever see them)."""
    return ConditionalPublic.model_validate(await conditional.show(live, caller.id, game_id))


@router.put("/{game_id}/conditional", responses=SAVE_ERRORS)
async def store(
    game_id: GameId, body: ConditionalBody, caller: CallerDep, live: LiveDep
) -> ConditionalPublic:
    """Store your conditional moves (instead of those before), while your opponent is to move:
    when their move is the first of some lines, the reply of the first of them is played at
    once; lines that no longer fit are dropped. A few times a minute at most."""
    return ConditionalPublic.model_validate(
        await conditional.store(live, caller.id, game_id, body.lines)
    )
