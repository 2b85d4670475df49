"""Accounts as the REST face shows them: credentials in, `UserPublic` and `TokenPublic` out."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field

from app.api.common.params import NAME_PATTERN
from app.status import UserKind
from app.timeutil import as_utc

# Every stored time is UTC, but SQLite hands them back without a zone: say so in the JSON.
UtcDatetime = Annotated[datetime, AfterValidator(as_utc)]


class Credentials(BaseModel):
    """A name and password; the rules for new accounts are checked by the service."""

    model_config = ConfigDict(strict=True)  # a JSON value of another type is 422, not converted

    name: str = Field(
        min_length=1, max_length=64, pattern=NAME_PATTERN, examples=["marion_tinsley"]
    )
    password: str = Field(min_length=1, max_length=256)


class UserPublic(BaseModel):
    """What anyone may see of an account."""

    model_config = ConfigDict(from_attributes=True)

    id: int
    name: str
    kind: UserKind
    role: Literal["player", "admin"]
    created_at: UtcDatetime


class TokenPublic(BaseModel):
    """A session: send `Authorization: Bearer <access_token>` until `expires_at`."""

    access_token: str
    token_type: Literal["bearer"] = "bearer"
    expires_at: UtcDatetime
    user: UserPublic
