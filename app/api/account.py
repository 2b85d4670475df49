"""REST: your account as lichess's `GET /api/account` shows it, so that a bot written for
lichess's clients learns who it is: our fields (`id`, `name`, `kind`, `role`, `created_at`)
with lichess's beside them (`username`, `title` "BOT" for a bot, `createdAt`/`seenAt` in Unix
milliseconds); and your preferences (`/api/account/preferences`: whether takebacks may be
asked in your games)."""

from __future__ import annotations

from typing import Any, Literal

from fastapi import APIRouter
from pydantic import BaseModel, ConfigDict, Field

from app.accounts import preferences
from app.api.common.deps import CurrentUser, SessionDep
from app.api.common.errors import ErrorBody
from app.api.schemas.users import UserPublic
from app.db.models import User
from app.live.events import unix_ms
from app.timeutil import as_unix

router = APIRouter(prefix="/api", tags=["bot"])


class AccountPublic(UserPublic):
    """An account, with lichess's names beside ours."""

    username: str = Field(description="`name`, as lichess.")
    title: Literal["BOT"] | None = Field(description='"BOT" for a bot account, as lichess.')
    created: int = Field(alias="createdAt", description="Unix milliseconds.")
    seen: int = Field(alias="seenAt", description="Last seen, Unix milliseconds.")

    @classmethod
    def of(cls, user: User) -> AccountPublic:
        created = as_unix(user.created_at)
        seen = as_unix(user.last_seen_at) if user.last_seen_at is not None else created
        return cls.model_validate(
            {
                "id": user.id,
                "name": user.name,
                "kind": user.kind,
                "role": user.role,
                "created_at": user.created_at,
                "username": user.name,
                "title": "BOT" if user.is_bot else None,
                "createdAt": unix_ms(created),
                "seenAt": unix_ms(seen),
            }
        )


@router.get("/account", responses={401: {"model": ErrorBody}})
async def account(user: CurrentUser) -> AccountPublic:
    """Who you are (lichess's `GET /api/account`)."""
    return AccountPublic.of(user)


TAKEBACKS = (
    "Whether takebacks may be asked in your games (casual ones: never in rated games). Off "
    '(lichess\'s "never"): a request to you is refused at once (`takebacks_off`), you may not '
    "ask either, your seat says `takebacks: false` so that clients offer no takeback against "
    "you, and the tables you open allow none unless you say so."
)


class PreferencesPublic(BaseModel):
    """What your account allows in its games."""

    takebacks: bool = Field(description=TAKEBACKS)


class PreferencesUpdate(BaseModel):
    """Only the fields sent change."""

    model_config = ConfigDict(
        extra="forbid", strict=True, json_schema_extra={"examples": [{"takebacks": False}]}
    )

    takebacks: bool | None = Field(default=None, description=TAKEBACKS)


PREFERENCES_ERRORS: dict[int | str, dict[str, Any]] = {
    401: {"model": ErrorBody},
    422: {"model": ErrorBody},
}


@router.get("/account/preferences", tags=["account"], responses={401: {"model": ErrorBody}})
async def get_preferences(user: CurrentUser) -> PreferencesPublic:
    """Your preferences."""
    return PreferencesPublic(takebacks=preferences.of(user).takebacks)


@router.patch("/account/preferences", tags=["account"], responses=PREFERENCES_ERRORS)
async def update_preferences(
    body: PreferencesUpdate, user: CurrentUser, session: SessionDep
) -> PreferencesPublic:
    """Change your preferences (the fields sent); the preferences now. A game in progress
    follows the change at its next takeback request."""
    now = await preferences.update(session, user, takebacks=body.takebacks)
    return PreferencesPublic(takebacks=now.takebacks)
