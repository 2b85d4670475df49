"""REST: tournaments (`/api/tournaments`): list them, create one, read one with its standings,
join and withdraw, and (its creator or an administrator) edit it before the start or cancel
it. docs/tournaments.md describes the rules and this contract."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Depends, Path, status
from pydantic import BaseModel, ConfigDict, Field, field_validator

from app.api.common.deps import CurrentUser, LiveDep, SessionDep
from app.api.common.errors import ErrorBody
from app.api.common.params import DIGITS, NAME_PATTERN
from app.api.schemas.admin import OptionalReason
from app.api.schemas.common import Clock
from app.db.models import MAX_ID
from app.tournaments import service as tournaments
from app.tournaments import settings as limits

router = APIRouter(prefix="/api/tournaments", tags=["tournaments"])

TournamentId = Annotated[int, Path(ge=1, le=MAX_ID, description="Tournament id."), DIGITS]
ERRORS: dict[int | str, dict[str, Any]] = {
    400: {"model": ErrorBody, "description": "Bad settings (`bad_request`, naming the field)."},
    401: {"model": ErrorBody, "description": "No valid bearer token."},
    403: {
        "model": ErrorBody,
        "description": "Not yours to change, a guest creating one, a recurring one by a player "
        "(`forbidden`); a banned account joining (`banned`).",
    },
    404: {"model": ErrorBody, "description": "No such tournament (`not_found`)."},
    409: {
        "model": ErrorBody,
        "description": "Joined already, full, over, a round robin already started, not in it "
        "(`conflict`); a guest in a rated one (`rated_needs_account`); a player's tournament "
        "limit (`rate_limited`).",
    },
}


class TournamentCreate(BaseModel):
    """A tournament: `minutes` for an arena, `rounds` for a Swiss (a round robin's rounds come
    from its players), `ballot` `3-move` for two-game matches on a drawn opening (English
    Swiss and round robins). Validated strictly: a value of another JSON type (`true` for a
    number, `1` or `"true"` for a boolean, `60.0` for an integer) is 422, never converted, and
    so is a name holding a control character (PostgreSQL stores no NUL)."""

    model_config = ConfigDict(extra="forbid", strict=True)

    kind: Literal["arena", "swiss", "round_robin"]
    name: str = Field(min_length=1, max_length=80, pattern=NAME_PATTERN)
    variant: Literal["english", "pool"] = "english"
    clock: Clock
    rated: bool = False
    starts_in: int = Field(default=0, ge=0, le=limits.MAX_STARTS_IN, description="Seconds.")
    minutes: int | None = Field(default=None, ge=1, le=limits.MAX_MINUTES)
    rounds: int | None = Field(default=None, ge=1, le=limits.MAX_ROUNDS)
    double: bool = Field(default=False, description="A double round robin.")
    ballot: Literal["gayp", "3-move"] = "gayp"
    max_players: int | None = Field(default=None, ge=2, le=limits.MAX_PLAYERS)
    every_minutes: int | None = Field(
        default=None, description="Recurring (administrators): the next starts this much later."
    )
    draw_after_move: int | None = Field(
        default=None,
        ge=0,
        le=200,
        description="Draw offers refused before this move (a Swiss's default: 30; else 0).",
    )

    @field_validator("clock")
    @classmethod
    def _live_clock(cls, clock: Clock) -> Clock:
        if clock.days is not None:
            raise ValueError("tournaments are played on a live clock, not days per move")
        return clock

    def settings(self) -> limits.Settings:
        base_s, increment_s = self.clock.seconds()
        return limits.Settings(
            kind=self.kind,
            name=self.name,
            variant=self.variant,
            base_s=base_s,
            increment_s=increment_s,
            rated=self.rated,
            starts_in=self.starts_in,
            minutes=self.minutes,
            rounds=self.rounds,
            double=self.double,
            ballot=self.ballot,
            max_players=self.max_players,
            every_minutes=self.every_minutes,
            draw_after_move=self.draw_after_move,
        )


class StandingPublic(BaseModel):
    model_config = ConfigDict(extra="allow")

    rank: int
    name: str
    score: float
    games: int


class TournamentPublic(BaseModel):
    """A tournament with its standings (best first), its games in progress and, once
    finished, its podium."""

    model_config = ConfigDict(extra="allow")

    id: int
    kind: str
    name: str
    variant: str
    status: Literal["created", "started", "finished", "cancelled"]
    created_by_name: str | None = None  # who created it (None: the site's schedule)
    standings: list[StandingPublic]


class TournamentSummaryPublic(BaseModel):
    model_config = ConfigDict(extra="allow")

    id: int
    kind: str
    name: str
    status: str
    players: int
    created_by_name: str | None = None


class TournamentsPublic(BaseModel):
    upcoming: list[TournamentSummaryPublic]
    running: list[TournamentSummaryPublic]
    finished: list[TournamentSummaryPublic]


async def get_member(user: CurrentUser, session: SessionDep) -> tournaments.Member:
    """The signed-in user, read once; the request's session is given back at once (the
    services open their own)."""
    member = tournaments.Member(user.id, user.name, user.role == "admin", user.kind, user.banned)
    await session.close()
    return member


MemberDep = Annotated[tournaments.Member, Depends(get_member)]


@router.get("", responses=ERRORS)
async def list_tournaments(live: LiveDep) -> TournamentsPublic:
    """Upcoming (soonest first), running, and recently finished or cancelled (latest first)."""
    return TournamentsPublic.model_validate(await tournaments.listing(live))


@router.post("", status_code=status.HTTP_201_CREATED, responses=ERRORS)
async def create(body: TournamentCreate, user: MemberDep, live: LiveDep) -> TournamentPublic:
    """Create a tournament (any registered player, a few at a time; administrators without
    limit, recurring ones too). It starts `starts_in` seconds from now."""
    return TournamentPublic.model_validate(await tournaments.create(live, user, body.settings()))


@router.get("/{tournament_id}", responses=ERRORS)
async def get(tournament_id: TournamentId, live: LiveDep) -> TournamentPublic:
    """The tournament: `status`, `standings` (`rank`, `name`, `score`, `games`; a Swiss's and
    a round robin's with `sonneborn_berger` and `buchholz`; an arena's with each game's
    points in `sheet` and `fire`), `playing` (its games in progress), `podium` once finished."""
    return TournamentPublic.model_validate(await tournaments.get(live, tournament_id))


@router.put("/{tournament_id}", responses=ERRORS)
async def edit(
    tournament_id: TournamentId, body: TournamentCreate, user: MemberDep, live: LiveDep
) -> TournamentPublic:
    """Change a tournament before it starts (its creator, or an administrator)."""
    return TournamentPublic.model_validate(
        await tournaments.edit(live, user, tournament_id, body.settings())
    )


class TournamentCancel(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    reason: OptionalReason = None  # why: shown on its page (and in the audit log)


@router.post("/{tournament_id}/cancel", responses=ERRORS)
async def cancel(
    tournament_id: TournamentId,
    user: MemberDep,
    live: LiveDep,
    body: TournamentCancel | None = None,
) -> TournamentPublic:
    """Cancel it (its creator, or an administrator), with a reason if given; games in
    progress play on. An administrator's creating, changing and cancelling are audited."""
    reason = body.reason.strip() or None if body is not None and body.reason else None
    return TournamentPublic.model_validate(
        await tournaments.cancel(live, user, tournament_id, reason)
    )


@router.post("/{tournament_id}/join", responses=ERRORS)
async def join(tournament_id: TournamentId, user: MemberDep, live: LiveDep) -> TournamentPublic:
    """Join; in an arena you left, come back. Your games start over the websocket
    (`your_game`), as any game does."""
    return TournamentPublic.model_validate(await tournaments.join(live, user, tournament_id))


@router.post("/{tournament_id}/withdraw", responses=ERRORS)
async def withdraw(tournament_id: TournamentId, user: MemberDep, live: LiveDep) -> TournamentPublic:
    """Withdraw: in an arena a pause (join again to come back); in a Swiss or round robin you
    are not paired again. Before the start, as if you never joined."""
    return TournamentPublic.model_validate(await tournaments.withdraw(live, user, tournament_id))
