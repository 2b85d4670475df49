"""Response models of the game archive: history pages, one game, a player's record."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field
from pydantic.config import JsonDict

from app.api.schemas.ratings import RatingPublic
from app.archive.service import GameRating, GameRecord, GameSummary, PlayerProfile
from app.ratings.service import PlayerRating
from app.status import GameStatus

Variant = Literal["english", "pool"]
ResultFilter = Literal["1-0", "0-1", "1/2-1/2", "*", "win", "loss", "draw"]

_SUMMARY_EXAMPLE: JsonDict = {
    "id": 1042,
    "variant": "english",
    "status": "finished",
    "result": "0-1",
    "termination": "resignation",
    "black": "alice",
    "white": "bob",
    "black_rating": {"rating": 1523, "provisional": False, "diff": -8},
    "white_rating": {"rating": 1490, "provisional": True, "diff": 14},
    "rated": True,
    "room": "main",
    "source": "live",
    "start_fen": None,
    "clock": {"base_s": 300, "increment_s": 3},
    "ply_count": 47,
    "started_at": "2026-03-01T18:04:11Z",
    "last_move_at": "2026-03-01T18:15:40Z",
    "finished_at": "2026-03-01T18:15:40Z",
    "tournament": None,
}


class TimeControlPublic(BaseModel):
    """A stored game's time control."""

    base_s: int = Field(description="Time each player starts with, in seconds.")
    increment_s: int = Field(description="Seconds added after each move.")


class GameRatingPublic(BaseModel):
    """One side's rating before a rated game, and what the game did to it."""

    rating: int = Field(description="The whole rating before the game.")
    provisional: bool = Field(description="Whether it was provisional (RD 110 or more) then.")
    diff: int = Field(description="The change the game made (whole points after minus before).")

    @classmethod
    def of(cls, rating: GameRating | None) -> GameRatingPublic | None:
        if rating is None:
            return None
        return cls(rating=rating.rating, provisional=rating.provisional, diff=rating.diff)


class GameSummaryPublic(BaseModel):
    """A game as listed in a history page."""

    model_config = ConfigDict(json_schema_extra={"examples": [_SUMMARY_EXAMPLE]})

    id: int
    variant: Variant
    status: GameStatus = Field(description="`playing` while the game is in progress.")
    result: str = Field(description="PDN result: `1-0` Black won, `0-1` White won, `*` open.")
    termination: str | None = Field(description="How the game ended, e.g. `no_moves`.")
    black: str | None = Field(description="Name of the player with Black (moves first).")
    white: str | None
    black_rating: GameRatingPublic | None = Field(
        description="Black's rating before the game, for a game that moved ratings (a rated "
        "game with a result and at least two plies); null otherwise."
    )
    white_rating: GameRatingPublic | None = Field(description="White's, as `black_rating`.")
    rated: bool
    room: str | None = Field(description="Slug of the room the game was played in.")
    source: Literal["live", "import"]
    start_fen: str | None = Field(description="Start position, null for the standard start.")
    clock: TimeControlPublic | None = Field(description="Time control, null for an untimed game.")
    ply_count: int
    started_at: datetime
    last_move_at: datetime | None
    finished_at: datetime | None
    tournament: int | None = Field(
        default=None, description="The tournament the game was played in, if any."
    )

    @classmethod
    def of(cls, game: GameSummary) -> GameSummaryPublic:
        return cls(**_summary_fields(game))


def _summary_fields(game: GameSummary) -> dict[str, Any]:
    clock = (
        None
        if game.clock_base_s is None
        else TimeControlPublic(base_s=game.clock_base_s, increment_s=game.clock_increment_s)
    )
    return {
        "id": game.id,
        "variant": game.variant,
        "status": game.status,
        "result": game.result,
        "termination": game.termination,
        "black": game.black,
        "white": game.white,
        "black_rating": GameRatingPublic.of(game.black_rating),
        "white_rating": GameRatingPublic.of(game.white_rating),
        "rated": game.rated,
        "room": game.room,
        "source": game.source,
        "start_fen": game.start_fen,
        "clock": clock,
        "ply_count": game.ply_count,
        "started_at": game.started_at,
        "last_move_at": game.last_move_at,
        "finished_at": game.finished_at,
        "tournament": game.tournament,
    }


class GamesPage(BaseModel):
    """One page of games, newest first unless `order=asc`."""

    model_config = ConfigDict(
        json_schema_extra={
            "examples": [
                {
                    "data": [_SUMMARY_EXAMPLE],
                    "count": 311,
                    "count_exact": True,
                    "next_cursor": "ZGVzY3w...",
                }
            ]
        }
    )

    data: list[GameSummaryPublic]
    count: int | None = Field(
        description="How many games match the filters in all (null when `count=false`)."
    )
    count_exact: bool | None = Field(
        default=None,
        description="Whether `count` is exact (null when `count=false`). A count that no "
        "index serves (a filter such as `min_plies` over the whole archive) is the database's "
        "estimate instead of a read of every game.",
    )
    next_cursor: str | None = Field(
        description="Pass as `cursor` to get the next page; null on the last page."
    )


class MovePublic(BaseModel):
    ply: int = Field(description="1 for Black's first move.")
    move: str = Field(description="PDN move text, every landing square of a capture listed.")
    clock_ms: int | None = Field(description="The mover's time left after the move.")
    played_at: datetime | None
    fen_after: str | None = Field(
        default=None, description="Position after the move (only with `positions=true`)."
    )


class GamePublic(GameSummaryPublic):
    """One game with its tags and moves."""

    model_config = ConfigDict(
        json_schema_extra={
            "examples": [
                {
                    **_SUMMARY_EXAMPLE,
                    "tags": {},
                    "start_position": "B:W21,22,23,24,25,26,27,28,29,30,31,32"
                    ":B1,2,3,4,5,6,7,8,9,10,11,12",
                    "moves": [
                        {
                            "ply": 1,
                            "move": "11-15",
                            "clock_ms": 298500,
                            "played_at": "2026-03-01T18:04:13Z",
                            "fen_after": "W:W21,22,23,24,25,26,27,28,29,30,31,32"
                            ":B1,2,3,4,5,6,7,8,9,10,12,15",
                        }
                    ],
                }
            ]
        }
    )

    tags: dict[str, str] = Field(description="PDN tags of an imported game (Event, Site…).")
    start_position: str | None = Field(
        default=None, description="FEN of the start position (only with `positions=true`)."
    )
    moves: list[MovePublic]

    @classmethod
    def of_record(
        cls, game: GameRecord, start: str | None = None, fens: list[str | None] | None = None
    ) -> GamePublic:
        moves = [
            MovePublic(
                ply=i + 1,
                move=text,
                clock_ms=game.clocks_ms[i],
                played_at=game.played_at[i],
                fen_after=None if fens is None else fens[i],
            )
            for i, text in enumerate(game.moves)
        ]
        return cls(
            **_summary_fields(game),
            tags={k: str(v) for k, v in game.tags.items()},
            start_position=start,
            moves=moves,
        )


class VariantRecord(BaseModel):
    games: int
    wins: int
    losses: int
    draws: int
    playing: int = Field(description="Games in progress.")


class PlayerProfilePublic(BaseModel):
    """A player and their record per variant."""

    model_config = ConfigDict(
        json_schema_extra={
            "examples": [
                {
                    "name": "alice",
                    "kind": "registered",
                    "created_at": "2026-01-10T09:00:00Z",
                    "last_seen_at": "2026-03-01T18:15:40Z",
                    "games": 12,
                    "variants": {
                        "english": {"games": 12, "wins": 7, "losses": 3, "draws": 1, "playing": 1}
                    },
                    "ratings": [
                        {
                            "category": "blitz",
                            "variant": "english",
                            "rating": 1662,
                            "rd": 290.23,
                            "volatility": 0.089998,
                            "games": 1,
                            "provisional": True,
                        }
                    ],
                }
            ]
        }
    )

    name: str
    kind: str = Field(description="`registered`, `guest`, or `imported` (a name from PDN).")
    created_at: datetime
    last_seen_at: datetime | None = Field(description="Last activity, or last game started.")
    games: int
    variants: dict[str, VariantRecord]
    ratings: list[RatingPublic] = Field(
        description="One per variant and category the player has played rated games in."
    )

    @classmethod
    def of(cls, profile: PlayerProfile, ratings: list[PlayerRating]) -> PlayerProfilePublic:
        return cls(
            name=profile.name,
            kind=profile.kind,
            created_at=profile.created_at,
            last_seen_at=profile.last_seen_at,
            games=profile.games,
            variants={
                name: VariantRecord(**vars(stats)) for name, stats in profile.variants.items()
            },
            ratings=[RatingPublic.of(r) for r in ratings],
        )
