"""REST: challenges, in lichess's shape (`POST /api/challenge/{name}`, `…/{id}/accept`,
`…/{id}/decline`, `…/{id}/cancel`, `GET /api/challenge`); the websocket has the same.
Bodies are read as lichess reads them (JSON or form-encoded, lichess's field names beside
ours; bad input is 400), and challenges are shown with lichess's fields beside ours."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Path, Request
from pydantic import AliasChoices, BaseModel, ConfigDict, Field, model_validator

from app.api.common.deps import CallerDep, LiveDep
from app.api.common.errors import ErrorBody
from app.api.common.lichess import FORM_NUMBER, FormBool, bad_request, body_schema, read
from app.api.common.params import DIGITS, NAME_PATTERN
from app.api.schemas.common import Clock, PlayerPublic
from app.bots import lichess
from app.db.models import MAX_ID
from app.matchmaking import challenges
from app.play.clocks import MAX_CLOCK_BASE_S, MAX_CLOCK_INCREMENT_S, Days

router = APIRouter(prefix="/api/challenge", tags=["challenges"])

ChallengeId = Annotated[int, Path(ge=1, le=MAX_ID, description="Challenge id."), DIGITS]
ERRORS: dict[int | str, dict[str, Any]] = {
    400: {
        "model": ErrorBody,
        "description": "Bad input (`bad_request`: an unknown variant, a clock out of bounds, "
        "`days`), a `fen` that is no position (`invalid_fen`), challenging yourself "
        "(`bad_message`).",
    },
    401: {"model": ErrorBody, "description": "No valid bearer token."},
    404: {"model": ErrorBody, "description": "No such player or challenge (`not_found`)."},
    409: {
        "model": ErrorBody,
        "description": "The challenge no longer waits (`not_found`); a rated game with a guest "
        "(`rated_needs_account`); 10 challenges waiting already (`rate_limited`).",
    },
}


class ChallengeCreate(BaseModel):
    """Ours (`clock: {base, increment}`, `colour`) or lichess's fields (`clock.limit`,
    `clock.increment`, `color`, `fen`, `days`); a field sent as null counts as not sent, as
    lichess's clients send every field they know. Strict: `rated` is `true` or `false`, the
    numbers numbers (in a form, as lichess reads them: `app.api.common.lichess`)."""

    model_config = ConfigDict(extra="forbid", strict=True)

    variant: Literal["english", "pool"] = "english"
    clock: Clock | None = Field(default=None, description="None: untimed.")
    clock_limit: Annotated[int | None, FORM_NUMBER] = Field(
        default=None,
        ge=1,
        le=MAX_CLOCK_BASE_S,
        validation_alias="clock.limit",
        description="Lichess's spelling of `clock.base` (seconds), with `clock.increment`.",
    )
    clock_increment: Annotated[int | None, FORM_NUMBER] = Field(
        default=None, ge=0, le=MAX_CLOCK_INCREMENT_S, validation_alias="clock.increment"
    )
    days: Annotated[Days | None, FORM_NUMBER] = Field(
        default=None,
        description="Lichess's spelling of `clock.days`: correspondence, days per move.",
    )
    colour: Literal["black", "white", "random"] = Field(
        default="random",
        validation_alias=AliasChoices("colour", "color"),
        description="The challenger's colour (`color` is read too, as lichess spells it).",
    )
    rated: FormBool = False
    fen: str | None = Field(
        default=None, max_length=200, description="Start from this position (casual only)."
    )

    @model_validator(mode="before")
    @classmethod
    def _nulls_are_absent(cls, data: Any) -> Any:
        if isinstance(data, dict):
            return {key: value for key, value in data.items() if value is not None}
        return data

    def time_control(self) -> dict[str, int] | None:
        """The clock asked for in any spelling, None for an untimed game; 400 for two
        spellings at once, or half of lichess's."""
        lichess_clock = (self.clock_limit, self.clock_increment)
        if self.days is not None:
            if self.clock is not None or lichess_clock != (None, None):
                raise bad_request("send either days or a clock, not both")
            return {"days": self.days}
        if lichess_clock == (None, None):
            return self.clock.model_dump() if self.clock is not None else None
        if self.clock is not None:
            raise bad_request("send either clock or clock.limit and clock.increment, not both")
        if None in lichess_clock:
            raise bad_request("clock.limit and clock.increment go together")
        return {"base": self.clock_limit or 0, "increment": self.clock_increment or 0}


class Decline(BaseModel):
    """Lichess's reasons (JSON or form-encoded)."""

    model_config = ConfigDict(extra="forbid", strict=True)

    reason: Literal[challenges.DECLINE_REASONS] = "generic"  # type: ignore[valid-type]


class TimeControl(BaseModel):
    """Lichess's `timeControl`: `{"type": "clock", "limit", "increment", "show"}` (seconds,
    `show` as `3+2`), `{"type": "correspondence", "daysPerTurn"}` or `{"type": "unlimited"}`."""

    model_config = ConfigDict(populate_by_name=True)

    type: Literal["clock", "correspondence", "unlimited"]
    limit: int | None = None
    increment: int | None = None
    show: str | None = None
    days_per_turn: int | None = Field(
        default=None, alias="daysPerTurn", exclude_if=lambda days: days is None
    )


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
    start_fen: str | None = None  # None: the standard start
    # Lichess's names beside ours.
    color: Literal["black", "white", "random"] = Field(description="`colour`, as lichess.")
    dest_user: PlayerPublic = Field(alias="destUser", description="`dest`, as lichess.")
    speed: str = Field(description="Lichess's speed category (`correspondence`: untimed).")
    time_control: TimeControl = Field(alias="timeControl")

    @classmethod
    def of(cls, shown: dict[str, Any]) -> ChallengePublic:
        return cls.model_validate(lichess.challenge(shown))


class Answered(BaseModel):
    ok: bool
    challenge: ChallengePublic


class ChallengesPublic(BaseModel):
    incoming: list[ChallengePublic] = Field(serialization_alias="in")
    outgoing: list[ChallengePublic] = Field(serialization_alias="out")


@router.get("", responses=ERRORS, response_model_by_alias=True)
async def list_challenges(user: CallerDep, live: LiveDep) -> ChallengesPublic:
    """The challenges to you (`in`) and by you (`out`) that wait for an answer."""
    waiting = [ChallengePublic.of(c) for c in await challenges.waiting_for(live, user.id)]
    return ChallengesPublic(
        incoming=[c for c in waiting if c.dest.id == user.id],
        outgoing=[c for c in waiting if c.challenger.id == user.id],
    )


@router.post("/{name}", responses=ERRORS, openapi_extra=body_schema(ChallengeCreate))
async def challenge(
    name: Annotated[str, Path(max_length=32, pattern=NAME_PATTERN, description="A player.")],
    request: Request,
    user: CallerDep,
    live: LiveDep,
) -> ChallengePublic:
    """Challenge the player `name`; they are told at once (websocket `challenge`, event
    stream `challenge`). It expires after 5 minutes without an answer. The body is JSON or
    form-encoded, in our fields or lichess's."""
    body = await read(request, ChallengeCreate)
    made = await challenges.make(
        live,
        user.player,
        name,
        variant=body.variant,
        clock=body.time_control(),
        colour=body.colour,
        rated=body.rated,
        start_fen=body.fen,
    )
    return ChallengePublic.of(made)


@router.post("/{challenge_id}/accept", responses=ERRORS)
async def accept(challenge_id: ChallengeId, user: CallerDep, live: LiveDep) -> Answered:
    """Accept a challenge to you: the game starts (both players get `your_game`/`gameStart`)."""
    done = await challenges.accept(live, user.player, challenge_id)
    return Answered(ok=True, challenge=ChallengePublic.of(done))


@router.post("/{challenge_id}/decline", responses=ERRORS, openapi_extra=body_schema(Decline))
async def decline(
    challenge_id: ChallengeId, request: Request, user: CallerDep, live: LiveDep
) -> Answered:
    """Decline a challenge to you, with one of lichess's reasons; the challenger is told."""
    reason = (await read(request, Decline)).reason
    done = await challenges.decline(live, user.player, challenge_id, reason)
    return Answered(ok=True, challenge=ChallengePublic.of(done))


@router.post("/{challenge_id}/cancel", responses=ERRORS)
async def cancel(challenge_id: ChallengeId, user: CallerDep, live: LiveDep) -> Answered:
    """Withdraw a challenge you made; the challenged player is told."""
    done = await challenges.cancel(live, user.player, challenge_id)
    return Answered(ok=True, challenge=ChallengePublic.of(done))
