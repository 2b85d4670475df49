"""Fair play: ratings that say how well people play, not how many accounts they have.

The policy (docs/ratings.md, "Fair play"):

- **Rated games are public.** A private table cannot be rated (`rated_not_private`), so no
  rated game is hidden and nothing hidden shows through ratings, their history or who is
  online.
- **Accounts that share an address play casual.** A game at a rated table between two
  accounts that both used one address (signing up, logging in, connecting) within
  `rated_shared_address_days` starts casual: its `rated` is false and it moves no rating.
- **A pair's games count a few times a day.** Beyond `rated_games_per_pair_per_day` rated
  games between the same two players in 24 hours, their games at rated tables start casual.
- **Linked gains are capped.** What a rated game gains a player is *linked* when the game was
  short (fewer than `rated_short_game_plies` plies) or the opponent is one the player already
  met in the last 24 hours, or shares an address with one (within
  `rated_shared_address_days`): helpers at a few addresses are one source, and only the first
  full game against a source rates freely each day. A rating keeps at most
  `rated_linked_gain_per_day` points of linked gains in 24 hours; the rest is withheld
  (`allowance`).
- **Sharp rises are looked at.** When a rated game leaves a player's rating
  `rating_review_rise` points above its lowest of the week, the games that raised it won
  against at most `rating_review_max_opponents` different opponents, or when the allowance
  withheld a gain, the account is queued for a moderator (`GET /api/admin/reviews`), who sees
  the figures as they are when reading (`figures`).

The checks run in the transaction that starts the game (`casual_reason`) and in the one that
stores its end (`allowance`, `review`), so they hold on every path to a rated game: a table, a
rematch, a challenge, quick pairing, a tournament, the bot API.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import datetime, timedelta

from app.accounts import addresses_store as addresses
from app.config import Settings
from app.live.log_store import Executor
from app.ratings import display
from app.ratings import store as stored_ratings

logger = logging.getLogger(__name__)

SHARED_ADDRESS = "shared_address"
PAIR_LIMIT = "pair_limit"
REVIEW_WINDOW = timedelta(days=7)
DAY = timedelta(days=1)  # the allowance's and the sources' window


async def casual_reason(
    db: Executor, settings: Settings, black_id: int, white_id: int, at: datetime
) -> str | None:
    """Why a game at a rated table between these two players must be casual (None: it may be
    rated)."""
    if black_id == white_id:
        return None  # rated games need two players anyway (`ratings.apply`)
    since = at - timedelta(days=settings.rated_shared_address_days)
    if settings.rated_shared_address_days > 0 and await addresses.shared_since(
        db, black_id, white_id, since
    ):
        return SHARED_ADDRESS
    played = await stored_ratings.pair_rated_since(db, black_id, white_id, at - timedelta(days=1))
    if played >= settings.rated_games_per_pair_per_day:
        return PAIR_LIMIT
    return None


@dataclass(frozen=True, slots=True)
class Allowance:
    """What a player keeps of a rated game's gain: all of it unless the gain is linked and the
    day's allowance is spent."""

    linked: bool
    kept: float
    withheld: float


async def allowance(
    db: Executor,
    settings: Settings,
    *,
    player: int,
    opponent: int,
    plies: int,
    variant: str,
    category: str,
    gain: float,
    at: datetime,
) -> Allowance:
    """How much of `gain` rating points, won by `player` against `opponent` in a rated game
    of `plies` plies ending at `at` (not yet stored), the player keeps. A linked gain (a short
    game, or an opponent met already within a day or sharing an address with one) keeps what
    is left of `rated_linked_gain_per_day` after the linked gains of the last 24 hours."""
    if gain <= 0 or not await linked(db, settings, player, opponent, plies, at):
        return Allowance(linked=False, kept=gain, withheld=0.0)
    used = await stored_ratings.linked_gain_since(db, player, variant, category, at - DAY)
    kept = min(gain, max(0.0, settings.rated_linked_gain_per_day - used))
    return Allowance(linked=True, kept=kept, withheld=gain - kept)


async def linked(
    db: Executor, settings: Settings, player: int, opponent: int, plies: int, at: datetime
) -> bool:
    """Whether what the player gains in this game (of `plies` plies, against `opponent`) is a
    linked gain: the game was short, or the player met the opponent's source within a day
    (the opponent, or an account that used one of the opponent's addresses within
    `rated_shared_address_days`; 0 leaves addresses out)."""
    if plies < settings.rated_short_game_plies:
        return True
    days = settings.rated_shared_address_days
    addresses_since = at - timedelta(days=days) if days > 0 else None
    return await stored_ratings.met_since(db, player, opponent, at - DAY, addresses_since)


async def review(
    db: Executor,
    settings: Settings,
    user_id: int,
    variant: str,
    category: str,
    *,
    rating: float,
    gained: bool,
    withheld: float,
    at: datetime,
) -> None:
    """After a rated game (its changes stored in this transaction) that left the player's
    rating at `rating`: queue the player for a moderator if the allowance withheld a point or
    more of the game's gain, or if the game raised the rating to `rating_review_rise` above
    its lowest of the week, the week's gains won against at most
    `rating_review_max_opponents` opponents; unless already queued there."""
    if withheld >= 1:
        reason = f"the daily allowance of linked gains withheld {withheld:.0f} points"
    elif gained:
        week = await stored_ratings.recent(
            db, user_id, variant, category, at - REVIEW_WINDOW, at - DAY
        )
        climb = rating - (week.lowest if week.lowest is not None else rating)
        if (
            climb < settings.rating_review_rise
            or week.gain_opponents > settings.rating_review_max_opponents
        ):
            return
        reason = (
            f"rose {climb:.0f} points in a week from its lowest, its gains won against "
            f"{week.gain_opponents} opponent(s)"
        )
    else:
        return
    if await stored_ratings.open_review(db, user_id, variant, category):
        return
    await stored_ratings.add_review(db, user_id, variant, category, reason, at)
    logger.warning("rating review queued for user %d: %s", user_id, reason)


@dataclass(frozen=True, slots=True)
class Figures:
    """A player's rating in a variant and category as a moderator reads it: now, and over the
    last week (`REVIEW_WINDOW`) and day."""

    rating: int  # the rating now
    games: int  # rated games there in all
    week_games: int  # rated games there in the last 7 days
    week_climb: int  # the rating now above its lowest in those days
    week_opponents: int  # the different opponents of the games that raised it then
    week_withheld: int  # the points the allowance withheld then
    day_linked_gain: int  # the points of linked gains kept in the last 24 hours


async def figures(
    db: Executor, user_id: int, variant: str, category: str, now: datetime
) -> Figures:
    """A review's figures, read now (two indexed queries)."""
    row = await stored_ratings.rating_of(db, user_id, variant, category)
    week = await stored_ratings.recent(
        db, user_id, variant, category, now - REVIEW_WINDOW, now - DAY
    )
    rating = row.rating if row is not None else stored_ratings.DEFAULT_RATING
    lowest = week.lowest if week.lowest is not None else rating
    return Figures(
        rating=display(rating),
        games=row.games if row is not None else 0,
        week_games=week.games,
        week_climb=round(max(0.0, rating - lowest)),
        week_opponents=week.gain_opponents,
        week_withheld=round(week.withheld),
        day_linked_gain=round(week.linked_gain),
    )
