"""REST routes for a player's public record and game history."""

from __future__ import annotations

from dataclasses import replace
from typing import Annotated

from fastapi import APIRouter, Depends, Path

from app.api.common.deps import ArchiveSessionDep
from app.api.common.params import NAME_PATTERN
from app.api.common.viewer import ViewerDep
from app.api.games import (
    ERRORS,
    CountQuery,
    CursorQuery,
    LimitQuery,
    OrderQuery,
    common_filter,
    games_page,
)
from app.api.schemas.archive import GamesPage, PlayerProfilePublic
from app.api.schemas.ratings import RatingHistoryPublic, RatingPointPublic, RatingSeriesPublic
from app.archive import service as archive
from app.archive.service import GameFilter
from app.ratings import service as ratings

router = APIRouter(prefix="/api/players", tags=["players"])

PlayerName = Annotated[
    str, Path(max_length=64, pattern=NAME_PATTERN, description="The player's name (any case).")
]


@router.get("/{name}", response_model=PlayerProfilePublic, responses={404: ERRORS[404]})
async def get_player(
    session: ArchiveSessionDep, viewer: ViewerDep, name: PlayerName
) -> PlayerProfilePublic:
    """A player's games, wins, losses and draws per variant, when they were last seen, and
    their ratings.

    Games of private tables count only for their players and administrators."""
    profile = await archive.player_profile(session, name, viewer)
    return PlayerProfilePublic.of(profile, await ratings.player_ratings(session, profile.name))


@router.get(
    "/{name}/rating-history", response_model=RatingHistoryPublic, responses={404: ERRORS[404]}
)
async def rating_history(session: ArchiveSessionDep, name: PlayerName) -> RatingHistoryPublic:
    """The player's rating at the end of each day (UTC) they played rated games, per variant
    and category."""
    spelled, series = await ratings.rating_history(session, name)
    return RatingHistoryPublic(
        name=spelled,
        data=[
            RatingSeriesPublic(
                variant=variant,
                category=category,
                points=[RatingPointPublic.of(p) for p in points],
            )
            for (variant, category), points in sorted(series.items())
        ],
    )


@router.get("/{name}/games", response_model=GamesPage, responses=ERRORS)
async def player_games(
    session: ArchiveSessionDep,
    viewer: ViewerDep,
    name: PlayerName,
    flt: Annotated[GameFilter, Depends(common_filter)],
    limit: LimitQuery = 20,
    cursor: CursorQuery = None,
    order: OrderQuery = "desc",
    count: CountQuery = True,
) -> GamesPage:
    """The player's games, newest first, with the same filters and paging as `/api/games`."""
    return await games_page(session, viewer, replace(flt, player=name), limit, cursor, order, count)
