"""Ratings: Glicko-2 with lichess's constants, one rating per variant and time-control category.

Pure like `app.rules`: no I/O, no clock of its own (times are passed in), imports nothing of the
server. `glicko2` holds the maths of one game, `limits` lichess's constants and the limits a
stored rating keeps (idle growth included), `categories` which rating a game moves.

The subsystem's use cases stand beside the pure modules (`categories`, `glicko2`, `limits` and
this package): a game's rating change stored with its end (`service`, `store`) and the
fair-play rules that make a game casual or withhold a linked gain (`fair_play`). docs/ratings.md.

May import: live, accounts.
"""

from app.ratings.categories import CATEGORIES, category_of
from app.ratings.glicko2 import Glicko, game_update
from app.ratings.limits import (
    DEFAULT,
    LEADERBOARD_DAYS,
    LEADERBOARD_MAX_RD,
    MAX_RATING_DELTA,
    MAX_RD,
    MAX_VOLATILITY,
    MIN_PLIES,
    MIN_RATING,
    MIN_RD,
    PROVISIONAL_RD,
    RATING_PERIODS_PER_DAY,
    TAU,
    RatingChange,
    cap,
    display,
    live_rd,
    provisional,
    rate_game,
)

__all__ = [
    "CATEGORIES",
    "DEFAULT",
    "LEADERBOARD_DAYS",
    "LEADERBOARD_MAX_RD",
    "MAX_RATING_DELTA",
    "MAX_RD",
    "MAX_VOLATILITY",
    "MIN_PLIES",
    "MIN_RATING",
    "MIN_RD",
    "PROVISIONAL_RD",
    "RATING_PERIODS_PER_DAY",
    "TAU",
    "Glicko",
    "RatingChange",
    "cap",
    "category_of",
    "display",
    "game_update",
    "live_rd",
    "provisional",
    "rate_game",
]
