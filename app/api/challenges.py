"""REST: challenges, in lichess's shape (`POST /api/challenge/{name}`, `…/{id}/accept`,
`…/{id}/decline`, `…/{id}/cancel`, `GET /api/challenge`); the websocket has the same."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Body, Path
from pydantic import AliasChoices, BaseModel, ConfigDict, Field

from app.api.deps import CallerDep, LiveDep
from app.api.errors import ErrorBody
from app.api.params import DIGITS, NAME_PATTERN
from app.api.schemas.common import Clock, PlayerPublic
from app.db.models import MAX_ID
from app.services import challenges

router = APIRouter(prefix="/api/challenge", tags=["challenges"])

ChallengeId = Annotated[int, Path(ge=1, le=MAX_ID, description="Challenge id."), DIGITS]
ERRORS: dict[int | str, dict[str, Any]] = {
    400: {"model": ErrorBody, "description": "Challenging yourself (`bad_message`)."},
    401: {"model": ErrorBody, "description": "No valid bearer token."},
    404: {"model": ErrorBody, "description": "No such player or challenge (`not_found`)."},
    409: {
        "model": ErrorBody,
        "description": "The challenge no longer waits (`not_found`); a rated game with a guest "
        "(`rated_needs_account`); 10 challenges waiting already (`rate_limited`).",
    },
}


class ChallengeCreate(BaseModel):
    model_config = ConfigDict(extra="forbid")

    variant: Literal["english", "pool"] = "english"
    clock: Clock | None = Field(default=None, description="None: untimed.")
    colour: Literal["black", "white", "random"] = Field(
        default="random",
        validation_alias=AliasChoices("colour", "color"),
        description="The challenger's colour (`color` is read too, as lichess spells it).",
    )
    rated: bool = False


class Decline(BaseModel):
    model_config = ConfigDict(extra="forbid")

    reason: Literal[challenges.DECLINE_REASONS] = "generic"  # type: ignore[valid-type]


class ChallengePublic(BaseModel):
    id: int
    challenger: PlayerPublic
    dest: PlayerPublic
    variant: Literal["english", "pool"]
    clock: Clock | None
    colour: Literal["black", "white", "random"]
    rated: bool
    status: Literal["created", "accepted", "declined", "canceled", "expired"]
    decline_reason: str | None
    game: int | None  # the game an accepted challenge started
    expires_at: int  # Unix milliseconds


class Answered(BaseModel):
    ok: bool
    challenge: ChallengePublic


class ChallengesPublic(BaseModel):
    incoming: list[ChallengePublic] = Field(serialization_alias="in")
    outgoing: list[ChallengePublic] = Field(serialization_alias="out")


@router.get("", responses=ERRORS, response_model_by_alias=True)
async def list_challenges(user: CallerDep, live: LiveDep) -> ChallengesPublic:
    """The challenges to you (`in`) and by you (`out`) that wait for an answer."""
    waiting = [
        ChallengePublic.model_validate(c) for c in await challenges.waiting_for(live, user.id)
    ]
    return ChallengesPublic(
        incoming=[c for c in waiting if c.dest.id == user.id],
        outgoing=[c for c in waiting if c.challenger.id == user.id],
    )


@router.post("/{name}", responses=ERRORS)
async def challenge(
    name: Annotated[str, Path(max_length=32, pattern=NAME_PATTERN, description="A player.")],
    user: CallerDep,
    live: LiveDep,
    body: Annotated[ChallengeCreate | None, Body()] = None,
) -> ChallengePublic:
    """Challenge the player `name`; they are told at once (websocket `challenge`, event
    stream `challenge`). It expires after 5 minutes without an answer."""
    body = body or ChallengeCreate()
    made = await challenges.make(
        live,
        user.player,
        name,
        variant=body.variant,
        clock=body.clock.model_dump() if body.clock is not None else None,
        colour=body.colour,
        rated=body.rated,
    )
    return ChallengePublic.model_validate(made)


@router.post("/{challenge_id}/accept", responses=ERRORS)
async def accept(challenge_id: ChallengeId, user: CallerDep, live: LiveDep) -> Answered:
    """Accept a challenge to you: the game starts (both players get `your_game`/`gameStart`)."""
    done = await challenges.accept(live, user.player, challenge_id)
    return Answered(ok=True, challenge=ChallengePublic.model_validate(done))


@router.post("/{challenge_id}/decline", responses=ERRORS)
async def decline(
    challenge_id: ChallengeId,
    user: CallerDep,
    live: LiveDep,
    body: Annotated[Decline | None, Body()] = None,
) -> Answered:
    """Decline a challenge to you, with one of lichess's reasons; the challenger is told."""
    reason = (body or Decline()).reason
    done = await challenges.decline(live, user.player, challenge_id, reason)
    return Answered(ok=True, challenge=ChallengePublic.model_validate(done))


@router.post("/{challenge_id}/cancel", responses=ERRORS)
async def cancel(challenge_id: ChallengeId, user: CallerDep, live: LiveDep) -> Answered:
    """Withdraw a challenge you made; the challenged player is told."""
    done = await challenges.cancel(live, user.player, challenge_id)
    return Answered(ok=True, challenge=ChallengePublic.model_validate(done))
