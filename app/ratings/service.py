"""Ratings: updating both players' ratings when a rated game ends, and reading them.

`apply` runs inside the transaction that stores a game's end (both endings' paths in
`app.play.games` call it: `store_ending`, for every ending but a game-ending move, and
`store_final_move`), so a rating moves exactly when the game's end is stored: a game ends once
(every ending is a write conditional on the game still being in progress, on its locked row),
so it is rated once, on whichever process. The players' rating rows are locked in the order of
their ids, and `rating_changes` keeps one row per game and player (its primary key refuses a
second update of the same game even if an ending path were ever taken twice).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy.ext.asyncio import AsyncSession

from app.accounts import store as accounts
from app.accounts.service import find_user
from app.config import Settings
from app.db.models import Game as GameRow
from app.db.models import User
from app.errors import Code, ServiceError
from app.live import events
from app.live.log_store import Executor
from app.ratings import (
    LEADERBOARD_DAYS,
    LEADERBOARD_MAX_RD,
    MIN_PLIES,
    Glicko,
    RatingChange,
    category_of,
    display,
    fair_play,
    live_rd,
    provisional,
    rate_game,
    store,
)
from app.ratings.categories import CATEGORIES
from app.rules import Result
from app.status import UserKind
from app.timeutil import as_datetime, as_unix

VARIANTS = ("english", "pool")
LEADERBOARD_MAX = 100
# The kinds of account that may play rated games: a guest's rating would be thrown away with
# the guest, and guests are free to make, so rating them invites farming a registered rating.
RATED_KINDS = (UserKind.REGISTERED,)


class RatingError(ServiceError):
    """A refusal about ratings (rated tables, leaderboard parameters)."""


def _score(result: str) -> float | None:
    """Black's score, or None for a game without a result."""
    return {Result.BLACK_WINS: 1.0, Result.WHITE_WINS: 0.0, Result.DRAW: 0.5}.get(Result(result))


def _side(change: RatingChange) -> events.RatingSide:
    return _shown_side(change.before.rating, change.after.rating)


async def apply(
    db: Executor, game: GameRow, at: datetime, settings: Settings
) -> events.RatingChanges | None:
    """Update both players' ratings for a game whose end is being stored in this transaction
    (`game` as it is stored now: result set, plies counted). None, and nothing changed, for a
    casual game, an aborted one, one of fewer than two plies, or one already rated. A linked
    gain beyond the day's allowance is withheld (`fair_play.allowance`), and a player whose
    gain was withheld or whose rating rose sharply against few opponents is queued for a
    moderator (`fair_play.review`)."""
    score = _score(game.result)
    if (
        not game.rated
        or score is None
        or game.ply_count < MIN_PLIES
        or game.black_id is None
        or game.white_id is None
        or game.black_id == game.white_id
    ):
        return None
    category = category_of(game.clock_base_s, game.clock_increment_s)
    rows = await store.lock_pair(db, (game.black_id, game.white_id), game.variant, category)
    if await store.already_rated(db, game.id):
        return None
    now = as_unix(at)
    black, white = rows[game.black_id], rows[game.white_id]
    black_change, white_change = rate_game(_live(black, now), _live(white, now), score)
    kept: list[tuple[store.StoredRating, RatingChange, fair_play.Allowance]] = []
    for row, change, opponent in (
        (black, black_change, white.user_id),
        (white, white_change, black.user_id),
    ):
        # A linked gain beyond the day's allowance is withheld (`fair_play.allowance`).
        allowed = await fair_play.allowance(
            db,
            settings,
            player=row.user_id,
            opponent=opponent,
            plies=game.ply_count,
            variant=game.variant,
            category=category,
            gain=change.after.rating - change.before.rating,
            at=at,
        )
        if allowed.withheld > 0:
            after = change.after
            change = RatingChange(
                change.before,
                Glicko(change.before.rating + allowed.kept, after.rd, after.volatility),
            )
        kept.append((row, change, allowed))
    changes = []
    for row, change, allowed in kept:
        after = change.after
        await store.store(db, row, (after.rating, after.rd, after.volatility), at)
        changes.append(
            store.ChangeRow(
                game_id=game.id,
                user_id=row.user_id,
                variant=game.variant,
                category=category,
                rating_before=change.before.rating,
                rd_before=change.before.rd,
                rating_after=after.rating,
                rd_after=after.rd,
                volatility_after=after.volatility,
                at=at,
                linked=allowed.linked,
                withheld=allowed.withheld,
            )
        )
    await store.add_changes(db, changes)
    (_, black_kept, _), (_, white_kept, _) = kept
    rating_change: events.RatingChanges = {
        "black": _side(black_kept),
        "white": _side(white_kept),
    }
    for row, change, allowed in kept:
        await fair_play.review(
            db,
            settings,
            row.user_id,
            game.variant,
            category,
            rating=change.after.rating,
            gained=change.after.rating > change.before.rating,
            withheld=allowed.withheld,
            at=at,
        )
    return rating_change


async def change_of(
    db: Executor, game_id: int, black_id: int | None, white_id: int | None
) -> events.RatingChanges | None:
    """What a finished game did to both ratings, as `game_ended` told it (read back from
    `rating_changes`); None for a game that moved none."""
    stored_changes = await store.changes_of_game(db, game_id)
    black = stored_changes.get(black_id) if black_id is not None else None
    white = stored_changes.get(white_id) if white_id is not None else None
    if black is None or white is None:
        return None
    return {"black": _shown_side(*black), "white": _shown_side(*white)}


def _shown_side(before: float, after: float) -> events.RatingSide:
    shown_before, shown_after = display(before), display(after)
    return {"before": shown_before, "after": shown_after, "diff": shown_after - shown_before}


def _live(row: store.StoredRating, now: float) -> Glicko:
    last = as_unix(row.last_game_at) if row.last_game_at is not None else None
    glicko = Glicko(row.rating, row.rd, row.volatility)
    return Glicko(row.rating, live_rd(glicko, last, now), row.volatility)


async def check_may_play_rated(db: Executor, user_id: int) -> None:
    """Refuse (`rated_needs_account`) a user whose account may not play rated games."""
    kind = await accounts.kind_of(db, user_id)
    if kind not in RATED_KINDS:
        raise RatingError(
            Code.RATED_NEEDS_ACCOUNT, "rated games are for registered accounts: sign up to play one"
        )


# --- reading ------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class PlayerRating:
    """A rating as shown: its RD grown by the idle time since the player's last game there."""

    variant: str
    category: str
    rating: int
    rd: float
    volatility: float
    games: int
    provisional: bool
    last_game_at: datetime | None


def shown(row: store.StoredRating, now: float) -> PlayerRating:
    rd = _live(row, now).rd
    return PlayerRating(
        variant=row.variant,
        category=row.category,
        rating=display(row.rating),
        rd=round(rd, 2),
        volatility=round(row.volatility, 6),
        games=row.games,
        provisional=provisional(rd),
        last_game_at=row.last_game_at,
    )


async def _player(db: AsyncSession, name: str) -> User:
    user = await find_user(db, name)
    if user is None:
        raise RatingError(Code.NOT_FOUND, f"no player named {name!r}")
    return user


async def player_ratings(db: AsyncSession, name: str) -> list[PlayerRating]:
    """A player's ratings (the categories they have played rated games in); `not_found`."""
    now = time.time()
    return [shown(row, now) for row in await store.of_user(db, (await _player(db, name)).id)]


@dataclass(frozen=True, slots=True)
class HistoryPoint:
    day: str  # YYYY-MM-DD (UTC)
    rating: int


async def rating_history(
    db: AsyncSession, name: str
) -> tuple[str, dict[tuple[str, str], list[HistoryPoint]]]:
    """The player's name as spelled, and per (variant, category) their rating at the end of
    each day they played rated games there (UTC days), oldest first; `not_found`."""
    user = await _player(db, name)
    out: dict[tuple[str, str], dict[str, int]] = {}
    for variant, category, at, rating in await store.history(db, user.id):
        day = as_datetime(as_unix(at)).date().isoformat()
        out.setdefault((variant, category), {})[day] = display(rating)
    return user.name, {
        key: [HistoryPoint(day, rating) for day, rating in days.items()]
        for key, days in out.items()
    }


@dataclass(frozen=True, slots=True)
class LeaderboardEntry:
    rank: int
    name: str
    rating: int
    rd: float
    games: int
    last_game_at: datetime


def check_category(variant: str, category: str) -> None:
    if variant not in VARIANTS or category not in CATEGORIES:
        raise RatingError(Code.UNPROCESSABLE, f"no rating {variant}/{category}")


async def leaderboard(
    db: Executor, variant: str, category: str, limit: int
) -> list[LeaderboardEntry]:
    """The best `limit` ratings of a category among players whose live RD is at most 75 and who
    played a rated game there within the last 7 days; banned players are left out."""
    check_category(variant, category)
    now = time.time()
    since = as_datetime(now - LEADERBOARD_DAYS * 86400)
    found: list[LeaderboardEntry] = []
    offset, batch = 0, max(limit * 2, 20)
    while len(found) < limit:
        rows = await store.leaderboard_candidates(db, variant, category, since, batch, offset)
        for row, name in rows:
            rd = _live(row, now).rd
            if rd <= LEADERBOARD_MAX_RD and row.last_game_at is not None:
                found.append(
                    LeaderboardEntry(
                        rank=len(found) + 1,
                        name=name,
                        rating=display(row.rating),
                        rd=round(rd, 2),
                        games=row.games,
                        last_game_at=row.last_game_at,
                    )
                )
                if len(found) == limit:
                    break
        if len(rows) < batch:
            break
        offset += batch
    return found
