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
- **Sharp rises are looked at.** When a rated game leaves a player's rating
  `rating_review_rise` points above where it was a week before, earned against at most
  `rating_review_max_opponents` different opponents, the account is queued for a moderator
  (`GET /api/admin/reviews`).

The checks run in the transaction that starts the game (`casual_reason`) and in the one that
stores its end (`review_rises`), so they hold on every path to a rated game: a table, a
rematch, a challenge, quick pairing, the bot API.
"""

from __future__ import annotations

import logging
from datetime import datetime, timedelta

from app.accounts import addresses_store as addresses
from app.config import Settings
from app.live import events
from app.live.log_store import Executor
from app.ratings import store as stored_ratings

logger = logging.getLogger(__name__)

SHARED_ADDRESS = "shared_address"
PAIR_LIMIT = "pair_limit"
REVIEW_WINDOW = timedelta(days=7)


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


async def review_rises(
    db: Executor,
    settings: Settings,
    black_id: int,
    white_id: int,
    variant: str,
    category: str,
    change: events.RatingChanges,
    at: datetime,
) -> None:
    """After a rated game (its changes stored in this transaction): queue for a moderator
    each of its players whose rating rose sharply against few opponents this week, unless
    already queued there."""
    for user_id, side in ((black_id, change["black"]), (white_id, change["white"])):
        if side["diff"] <= 0:
            continue
        rise, opponents = await stored_ratings.rise_since(
            db, user_id, variant, category, at - REVIEW_WINDOW
        )
        if rise < settings.rating_review_rise or opponents > settings.rating_review_max_opponents:
            continue
        if await stored_ratings.open_review(db, user_id, variant, category):
            continue
        reason = f"rose {rise:.0f} points in a week against {opponents} opponent(s)"
        await stored_ratings.add_review(db, user_id, variant, category, reason, at)
        logger.warning("rating review queued for user %d: %s", user_id, reason)
