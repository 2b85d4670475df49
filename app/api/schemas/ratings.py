"""Response models of ratings: a player's ratings, their history, and leaderboards."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from app.ratings.service import HistoryPoint, LeaderboardEntry, PlayerRating

Category = Literal["bullet", "blitz", "rapid", "classical", "correspondence", "untimed"]


class RatingPublic(BaseModel):
    """A player's Glicko-2 rating in one variant and time-control category."""

    model_config = ConfigDict(
        json_schema_extra={
            "examples": [
                {
                    "category": "blitz",
                    "variant": "english",
                    "rating": 1662,
                    "rd": 290.23,
                    "volatility": 0.089998,
                    "games": 1,
                    "provisional": True,
                }
            ]
        }
    )

    category: str = Field(description="`bullet`, `blitz`, `rapid`, `classical` or `untimed`.")
    variant: str
    rating: int = Field(description="The rating, whole points (truncated).")
    rd: float = Field(description="Rating deviation now: it grows while the player is idle.")
    volatility: float
    games: int = Field(description="Rated games played in this category.")
    provisional: bool = Field(description="RD 110 or more: shown with a `?`.")

    @classmethod
    def of(cls, r: PlayerRating) -> RatingPublic:
        return cls(
            category=r.category,
            variant=r.variant,
            rating=r.rating,
            rd=r.rd,
            volatility=r.volatility,
            games=r.games,
            provisional=r.provisional,
        )


class RatingPointPublic(BaseModel):
    date: str = Field(description="A UTC day, `YYYY-MM-DD`.")
    rating: int = Field(description="The rating after the player's last rated game that day.")

    @classmethod
    def of(cls, point: HistoryPoint) -> RatingPointPublic:
        return cls(date=point.day, rating=point.rating)


class RatingSeriesPublic(BaseModel):
    variant: str
    category: str
    points: list[RatingPointPublic] = Field(description="Oldest first, one per day played.")


class RatingHistoryPublic(BaseModel):
    """A player's rating at the end of each day they played rated games, per category."""

    model_config = ConfigDict(
        json_schema_extra={
            "examples": [
                {
                    "name": "alice",
                    "data": [
                        {
                            "variant": "english",
                            "category": "blitz",
                            "points": [
                                {"date": "2026-11-30", "rating": 1662},
                                {"date": "2026-12-01", "rating": 1590},
                            ],
                        }
                    ],
                }
            ]
        }
    )

    name: str
    data: list[RatingSeriesPublic]


class LeaderboardEntryPublic(BaseModel):
    rank: int
    name: str
    rating: int
    rd: float
    games: int
    last_game_at: datetime

    @classmethod
    def of(cls, e: LeaderboardEntry) -> LeaderboardEntryPublic:
        return cls(
            rank=e.rank,
            name=e.name,
            rating=e.rating,
            rd=e.rd,
            games=e.games,
            last_game_at=e.last_game_at,
        )


class LeaderboardPublic(BaseModel):
    """The best ratings of a category among established, active players."""

    variant: str
    category: str
    data: list[LeaderboardEntryPublic]
