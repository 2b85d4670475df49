"""The administrators' REST routes for users: list, kick, ban, unban, and the ratings review
queue (under `/api/admin`, for administrators only)."""

from __future__ import annotations

from dataclasses import asdict
from datetime import datetime
from typing import Annotated, Literal

from fastapi import Path, Query
from pydantic import BaseModel, Field

from app.api.admin import NOT_FOUND, REFUSED, UserId, admin_router, answer
from app.api.common.deps import (
    AdminUser,
    LiveDep,
    SessionDep,
)
from app.api.common.params import (
    DIGITS,
    MAX_ID,
    NAME_PATTERN,
    TRUE_FALSE,
)
from app.api.schemas.admin import (
    AdminUserPublic,
    AuditEntryPublic,
    KickRequest,
    ReasonRequest,
    UsersPage,
)
from app.db.models import User
from app.live.liveplay import LivePlay
from app.moderation import users as admin_users
from app.moderation.admin import UserFilter
from app.status import UserKind
from app.timeutil import as_utc

router = admin_router()


@router.get("/users", response_model=UsersPage)
async def list_users(
    session: SessionDep,
    live: LiveDep,
    q: Annotated[
        str | None, Query(max_length=64, pattern=NAME_PATTERN, description="Part of the name.")
    ] = None,
    kind: Annotated[UserKind | None, Query()] = None,
    role: Annotated[Literal["player", "admin"] | None, Query()] = None,
    banned: Annotated[
        bool | None,
        Query(description="Only banned (or not banned) users."),
        TRUE_FALSE,
    ] = None,
    limit: Annotated[int, Query(ge=1, le=200), DIGITS] = 50,
    offset: Annotated[int, Query(ge=0, le=MAX_ID), DIGITS] = 0,
) -> UsersPage:
    """Users by name (a part of it, any case), with their state; `count` counts every match."""
    flt = UserFilter(name=q, kind=kind, role=role, banned=banned)
    users, total = await admin_users.list_users(session, flt, limit, offset)
    return UsersPage(data=[_user(user, live) for user in users], count=total)


def _user(user: User, live: LivePlay) -> AdminUserPublic:
    return AdminUserPublic.model_validate(
        {
            "id": user.id,
            "name": user.name,
            "kind": user.kind,
            "role": user.role,
            "banned": user.banned,
            "ban_reason": user.ban_reason,
            "created_at": user.created_at,
            "last_seen_at": user.last_seen_at,
            "connected": live.connected_here(user.id),
        }
    )


@router.post("/users/{user_id}/kick", response_model=AuditEntryPublic, responses=REFUSED)
async def kick_user(
    user_id: UserId, body: KickRequest, session: SessionDep, live: LiveDep, actor: AdminUser
) -> AuditEntryPublic:
    """Send a user away. With `table` or `room`: their games there end with `result`, they
    lose their seats and get `kicked` with the reason. With neither: every connection of
    theirs gets `kicked` and is closed (1008). A kick does not keep anyone out: ban for that."""
    entry = await admin_users.kick(
        session,
        live,
        actor,
        user_id,
        body.reason,
        table_id=body.table,
        room_id=body.room,
        result=body.result,
    )
    return await answer(session, entry, actor)


@router.post("/users/{user_id}/ban", response_model=AuditEntryPublic, responses=REFUSED)
async def ban_user(
    user_id: UserId, body: ReasonRequest, session: SessionDep, live: LiveDep, actor: AdminUser
) -> AuditEntryPublic:
    """Ban a user: their tokens are revoked, log-in answers 403 `banned` with the reason, and
    their open websockets get an `unauthorized` error with the reason and are closed (1008)."""
    entry = await admin_users.ban(session, live, actor, user_id, body.reason)
    return await answer(session, entry, actor)


@router.post("/users/{user_id}/unban", response_model=AuditEntryPublic, responses=REFUSED)
async def unban_user(
    user_id: UserId, body: ReasonRequest, session: SessionDep, actor: AdminUser
) -> AuditEntryPublic:
    """Lift a ban; the user logs in again."""
    entry = await admin_users.unban(session, actor, user_id, body.reason)
    return await answer(session, entry, actor)


class ReviewFigures(BaseModel):
    """A reviewed rating as it is when the review is read."""

    rating: int = Field(description="The rating now (whole).")
    games: int = Field(description="Rated games in that variant and category, in all.")
    week_games: int = Field(description="Rated games there in the last 7 days.")
    week_climb: int = Field(description="The rating now above its lowest of those 7 days.")
    week_opponents: int = Field(
        description="The different opponents of those days' games that raised the rating."
    )
    week_withheld: int = Field(
        description="Points of linked gains those days that the daily allowance withheld."
    )
    day_linked_gain: int = Field(description="Points of linked gains kept in the last 24 hours.")


class RatingReviewPublic(BaseModel):
    id: int
    user_id: int
    name: str
    variant: str
    category: str
    reason: str = Field(description="Why it was queued, as things stood then.")
    created_at: datetime
    resolved_at: datetime | None
    figures: ReviewFigures = Field(description="The player's figures as they are now.")


class RatingReviewsList(BaseModel):
    data: list[RatingReviewPublic]


ReviewId = Annotated[int, Path(ge=1, le=MAX_ID, description="Review id."), DIGITS]


@router.get("/reviews", response_model=RatingReviewsList)
async def rating_reviews(
    session: SessionDep,
    all_: Annotated[bool, Query(alias="all", description="Resolved ones too."), TRUE_FALSE] = False,
) -> RatingReviewsList:
    """Accounts whose rating rose sharply against few opponents, or whose linked gains the
    daily allowance withheld (docs/ratings.md, "Fair play"), oldest first: the open ones, or
    all with `all=true`. `reason` says why each was queued then; `figures` are the player's as
    they are now."""
    rows = await admin_users.reviews(session, open_only=not all_)
    fields = ("id", "user_id", "name", "variant", "category", "reason")
    return RatingReviewsList(
        data=[
            RatingReviewPublic.model_validate(
                dict(zip(fields, row[:6], strict=True))
                | {
                    "created_at": as_utc(row[6]),
                    "resolved_at": None if row[7] is None else as_utc(row[7]),
                    "figures": asdict(figures),
                }
            )
            for row, figures in rows
        ]
    )


@router.post("/reviews/{review_id}/resolve", response_model=AuditEntryPublic, responses=NOT_FOUND)
async def resolve_rating_review(
    review_id: ReviewId, session: SessionDep, actor: AdminUser
) -> AuditEntryPublic:
    """Mark a rating review looked at (what to do about the account, a ban or nothing, is a
    separate action); 404 for no open review of that id."""
    entry = await admin_users.resolve_review(session, actor, review_id)
    return await answer(session, entry, actor)
