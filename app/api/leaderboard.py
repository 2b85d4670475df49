"""REST route for the leaderboards: the best ratings per variant and time-control category."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query

from app.api.common.deps import ArchiveSessionDep
from app.api.common.errors import ErrorBody
from app.api.common.params import DIGITS
from app.api.schemas.archive import Variant
from app.api.schemas.ratings import Category, LeaderboardEntryPublic, LeaderboardPublic
from app.ratings import service as ratings

router = APIRouter(prefix="/api/leaderboard", tags=["ratings"])


@router.get("", response_model=LeaderboardPublic, responses={422: {"model": ErrorBody}})
async def leaderboard(
    session: ArchiveSessionDep,
    variant: Annotated[Variant, Query(description="`english` or `pool`.")] = "english",
    category: Annotated[
        Category,
        Query(
            description="`bullet`, `blitz`, `rapid`, `classical`, `correspondence` or `untimed`."
        ),
    ] = "blitz",
    limit: Annotated[int, Query(ge=1, le=100, description="Players (1–100)."), DIGITS] = 50,
) -> LeaderboardPublic:
    """The best `limit` players of a category, by rating: those whose rating deviation is at
    most 75 and who played a rated game there within the last 7 days (others drop off)."""
    entries = await ratings.leaderboard(session, variant, category, limit)
    return LeaderboardPublic(
        variant=variant, category=category, data=[LeaderboardEntryPublic.of(e) for e in entries]
    )
