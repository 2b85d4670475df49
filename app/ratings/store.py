"""Storage of ratings: each player's rating per variant and category (`ratings`), and what each
rated game did to it (`rating_changes`, also the rating history).

A game's update locks both players' rows in one fixed order (by user id), so two games ending
at once for the same player, on any processes, wait for each other instead of one overwriting
the other's update, and never deadlock.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import Select, case, func, insert, or_, select, text, update
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.ext.asyncio import AsyncConnection
from sqlalchemy.orm import aliased

from app.db.models import AccountAddress, Rating, RatingChange, RatingReview, User
from app.live.log_store import Executor

# Leaderboard candidates: stored RD at most 75 (a live RD is never lower), written as the
# partial index `ix_ratings_leaderboard` states it, so the planner can use that index.
LEADERBOARD_STORED_RD = 75.0
_CANDIDATE = text("ratings.rd <= 75")

# A player's first rating in a category (lichess's default: 1500, RD 500, volatility 0.09).
DEFAULT_RATING, DEFAULT_RD, DEFAULT_VOLATILITY = 1500.0, 500.0, 0.09


@dataclass(frozen=True, slots=True)
class StoredRating:
    """A rating row as stored (its RD as of `last_game_at`)."""

    user_id: int
    variant: str
    category: str
    rating: float
    rd: float
    volatility: float
    games: int
    last_game_at: datetime | None


@dataclass(frozen=True, slots=True)
class ChangeRow:
    """One player's change from one game, to store."""

    game_id: int
    user_id: int
    variant: str
    category: str
    rating_before: float
    rd_before: float
    rating_after: float
    rd_after: float
    volatility_after: float
    at: datetime
    linked: bool = False  # a linked gain (`fair_play.allowance`)
    withheld: float = 0.0  # the points of it the day's allowance kept back


_COLUMNS = (
    Rating.user_id,
    Rating.variant,
    Rating.category,
    Rating.rating,
    Rating.rd,
    Rating.volatility,
    Rating.games,
    Rating.last_game_at,
)


def _stored(row: Sequence[Any]) -> StoredRating:
    user_id, variant, category, rating, rd, volatility, games, last_game_at = row[:8]
    return StoredRating(user_id, variant, category, rating, rd, volatility, games, last_game_at)


async def lock_pair(
    db: Executor, user_ids: tuple[int, int], variant: str, category: str
) -> dict[int, StoredRating]:
    """Both players' ratings in a category, their rows created (at the default) if missing and
    locked until the transaction ends, in the order of their ids."""
    ordered = sorted(set(user_ids))
    dialect = db.dialect if isinstance(db, AsyncConnection) else db.get_bind().dialect
    make = pg_insert if dialect.name == "postgresql" else sqlite_insert
    await db.execute(
        make(Rating)
        .values(
            [
                {
                    "user_id": user_id,
                    "variant": variant,
                    "category": category,
                    "rating": DEFAULT_RATING,
                    "rd": DEFAULT_RD,
                    "volatility": DEFAULT_VOLATILITY,
                    "games": 0,
                    "last_game_at": None,
                }
                for user_id in ordered
            ]
        )
        .on_conflict_do_nothing()
    )
    rows = await db.execute(
        select(*_COLUMNS)
        .where(
            Rating.user_id.in_(ordered),
            Rating.variant == variant,
            Rating.category == category,
        )
        .order_by(Rating.user_id)
        .with_for_update()
    )
    return {row.user_id: _stored(row) for row in rows}


async def already_rated(db: Executor, game_id: int) -> bool:
    """Whether this game's rating changes are stored."""
    found = await db.scalar(select(RatingChange.game_id).where(RatingChange.game_id == game_id))
    return found is not None


async def changes_of_game(db: Executor, game_id: int) -> dict[int, tuple[float, float]]:
    """What a rated game did to its players' ratings: user id -> (rating before, after); empty
    for a game that moved none."""
    rows = await db.execute(
        select(RatingChange.user_id, RatingChange.rating_before, RatingChange.rating_after).where(
            RatingChange.game_id == game_id
        )
    )
    return {user_id: (before, after) for user_id, before, after in rows.all()}


async def store(
    db: Executor,
    rating: StoredRating,
    values: tuple[float, float, float],
    at: datetime,
) -> None:
    """A player's rating after a game (rating, RD, volatility), with one game more."""
    new_rating, rd, volatility = values
    await db.execute(
        update(Rating)
        .where(
            Rating.user_id == rating.user_id,
            Rating.variant == rating.variant,
            Rating.category == rating.category,
        )
        .values(
            rating=new_rating,
            rd=rd,
            volatility=volatility,
            games=Rating.games + 1,
            last_game_at=at,
        )
    )


async def add_changes(db: Executor, changes: list[ChangeRow]) -> None:
    """Store a game's changes; a second set for the same game and player violates the key."""
    await db.execute(insert(RatingChange), [vars_of(change) for change in changes])


def vars_of(change: ChangeRow) -> dict[str, object]:
    return {name: getattr(change, name) for name in ChangeRow.__slots__}


async def of_user(db: Executor, user_id: int) -> list[StoredRating]:
    """A player's ratings, by variant and category."""
    rows = await db.execute(
        select(*_COLUMNS).where(Rating.user_id == user_id).order_by(Rating.variant, Rating.category)
    )
    return [_stored(row) for row in rows]


async def history(db: Executor, user_id: int) -> list[tuple[str, str, datetime, float]]:
    """(variant, category, at, rating after) of every rated game of a player, oldest first."""
    rows = await db.execute(
        select(
            RatingChange.variant,
            RatingChange.category,
            RatingChange.at,
            RatingChange.rating_after,
        )
        .where(RatingChange.user_id == user_id)
        .order_by(RatingChange.at, RatingChange.game_id)
    )
    return [(row[0], row[1], row[2], row[3]) for row in rows]


def leaderboard_query(variant: str, category: str, since: datetime) -> Select:  # type: ignore[type-arg]
    """The ratings that may be on a category's leaderboard (stored RD at most
    `LEADERBOARD_STORED_RD`, a game since `since`), best first, with their player's name;
    banned players are left out."""
    return (
        select(*_COLUMNS, User.name)
        .join(User, User.id == Rating.user_id)
        .where(
            Rating.variant == variant,
            Rating.category == category,
            _CANDIDATE,
            Rating.last_game_at >= since,
            User.banned.is_(False),
        )
        .order_by(Rating.rating.desc(), Rating.user_id)
    )


async def leaderboard_candidates(
    db: Executor,
    variant: str,
    category: str,
    since: datetime,
    limit: int,
    offset: int,
) -> list[tuple[StoredRating, str]]:
    rows = await db.execute(leaderboard_query(variant, category, since).limit(limit).offset(offset))
    return [(_stored(row[:8]), row[8]) for row in rows]


# --- fair play -----------------------------------------------------------------------------


async def pair_rated_since(db: Executor, one: int, other: int, since: datetime) -> int:
    """How many rated games the two players played each other since `since`."""
    mine, theirs = aliased(RatingChange), aliased(RatingChange)
    count = await db.scalar(
        select(func.count())
        .select_from(mine)
        .join(theirs, theirs.game_id == mine.game_id)
        .where(mine.user_id == one, theirs.user_id == other, mine.at >= since)
    )
    return int(count or 0)


async def met_since(
    db: Executor, player: int, opponent: int, since: datetime, addresses_since: datetime | None
) -> bool:
    """Whether the player played a rated game since `since` against `opponent` or, given
    `addresses_since`, against an account that used an address `opponent` also used (both
    since `addresses_since`)."""
    mine, theirs = aliased(RatingChange), aliased(RatingChange)
    met = theirs.user_id == opponent
    if addresses_since is not None:
        one, other = aliased(AccountAddress), aliased(AccountAddress)
        shared = (
            select(one.address)
            .join(other, other.address == one.address)
            .where(
                one.user_id == theirs.user_id,
                other.user_id == opponent,
                one.last_seen >= addresses_since,
                other.last_seen >= addresses_since,
            )
            .exists()
        )
        met = or_(met, shared)
    found = await db.scalar(
        select(theirs.user_id)
        .select_from(mine)
        .join(theirs, (theirs.game_id == mine.game_id) & (theirs.user_id != mine.user_id))
        .where(mine.user_id == player, mine.at >= since, met)
        .limit(1)
    )
    return found is not None


async def linked_gain_since(
    db: Executor, user_id: int, variant: str, category: str, since: datetime
) -> float:
    """The points a player's rating in a variant and category kept of its linked gains since
    `since`."""
    total = await db.scalar(
        select(func.sum(RatingChange.rating_after - RatingChange.rating_before)).where(
            RatingChange.user_id == user_id,
            RatingChange.at >= since,
            RatingChange.variant == variant,
            RatingChange.category == category,
            RatingChange.linked.is_(True),
        )
    )
    return float(total or 0.0)


@dataclass(frozen=True, slots=True)
class Recent:
    """A player's rated games in a variant and category since some time."""

    games: int
    lowest: float | None  # the lowest rating they started one of those games from
    gain_opponents: int  # the different opponents of the games that raised the rating
    linked_gain: float  # what the linked gains kept since `day_since`
    withheld: float  # what the allowance withheld


async def recent(
    db: Executor,
    user_id: int,
    variant: str,
    category: str,
    since: datetime,
    day_since: datetime,
) -> Recent:
    """A player's rated games in a variant and category since `since`, in figures. A game
    raised the rating when it gained points, kept or withheld."""
    mine, theirs = aliased(RatingChange), aliased(RatingChange)
    gained = mine.rating_after + mine.withheld > mine.rating_before
    row = (
        await db.execute(
            select(
                func.count(),
                func.min(mine.rating_before),
                func.count(func.distinct(case((gained, theirs.user_id)))),
                func.sum(
                    case(
                        (
                            mine.linked.is_(True) & (mine.at >= day_since),
                            mine.rating_after - mine.rating_before,
                        ),
                        else_=0.0,
                    )
                ),
                func.sum(mine.withheld),
            )
            .select_from(mine)
            .join(theirs, (theirs.game_id == mine.game_id) & (theirs.user_id != mine.user_id))
            .where(
                mine.user_id == user_id,
                mine.at >= since,
                mine.variant == variant,
                mine.category == category,
            )
        )
    ).one()
    games, lowest, opponents, linked_gain, withheld = row
    return Recent(
        games=int(games or 0),
        lowest=None if lowest is None else float(lowest),
        gain_opponents=int(opponents or 0),
        linked_gain=float(linked_gain or 0.0),
        withheld=float(withheld or 0.0),
    )


async def rating_of(db: Executor, user_id: int, variant: str, category: str) -> StoredRating | None:
    """A player's rating in a variant and category; None before their first game there."""
    row = (
        await db.execute(
            select(*_COLUMNS).where(
                Rating.user_id == user_id, Rating.variant == variant, Rating.category == category
            )
        )
    ).first()
    return None if row is None else _stored(row)


async def open_review(db: Executor, user_id: int, variant: str, category: str) -> bool:
    found = await db.scalar(
        select(RatingReview.id).where(
            RatingReview.user_id == user_id,
            RatingReview.variant == variant,
            RatingReview.category == category,
            RatingReview.resolved_at.is_(None),
        )
    )
    return found is not None


async def add_review(
    db: Executor, user_id: int, variant: str, category: str, reason: str, at: datetime
) -> None:
    await db.execute(
        insert(RatingReview).values(
            user_id=user_id, variant=variant, category=category, reason=reason, created_at=at
        )
    )


async def reviews(db: Executor, *, open_only: bool = True) -> list[tuple[Any, ...]]:
    """(id, user id, name, variant, category, reason, created_at, resolved_at) of the rating
    reviews, oldest first."""
    statement = (
        select(
            RatingReview.id,
            RatingReview.user_id,
            User.name,
            RatingReview.variant,
            RatingReview.category,
            RatingReview.reason,
            RatingReview.created_at,
            RatingReview.resolved_at,
        )
        .join(User, User.id == RatingReview.user_id)
        .order_by(RatingReview.created_at, RatingReview.id)
    )
    if open_only:
        statement = statement.where(RatingReview.resolved_at.is_(None))
    return [tuple(row) for row in (await db.execute(statement)).all()]


async def resolve_review(db: Executor, review_id: int, by: int, at: datetime) -> bool:
    """Mark a review resolved; False if there is no such open review."""
    result = await db.execute(
        update(RatingReview)
        .where(RatingReview.id == review_id, RatingReview.resolved_at.is_(None))
        .values(resolved_at=at, resolved_by=by)
    )
    return bool(result.rowcount)  # type: ignore[attr-defined]
