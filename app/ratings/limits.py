"""Lichess's constants, and the per-game rules of a stored rating around the Glicko-2 maths.

A rating is stored as it was after its player's last game (`at`); its RD grows while the
player is idle and is worked out when read (`live_rd`), 0.21436 rating periods a day (lichess's
choice: a typical RD of 60 reaches 110 in a year). A game updates both players from their live
ratings, capped (`cap`), then keeps each change within ±700 and the rating at 400 or above.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from app.ratings.glicko2 import SCALE, Glicko, game_update

TAU = 0.75
DEFAULT = Glicko(1500.0, 500.0, 0.09)
MIN_RD = 45.0
MAX_RD = 500.0
MAX_VOLATILITY = 0.1
MIN_RATING = 400.0
MAX_RATING_DELTA = 700.0
PROVISIONAL_RD = 110.0  # provisional while RD >= this
LEADERBOARD_MAX_RD = 75.0  # on leaderboards while RD <= this
LEADERBOARD_DAYS = 7  # … and a rated game within this many days
RATING_PERIODS_PER_DAY = 0.21436
MIN_PLIES = 2  # a rated game moves ratings only once both sides have moved
SECONDS_PER_DAY = 86400.0


def cap(glicko: Glicko) -> Glicko:
    """Within lichess's bounds: rating >= 400, RD in [45, 500], volatility <= 0.1."""
    return Glicko(
        max(glicko.rating, MIN_RATING),
        min(max(glicko.rd, MIN_RD), MAX_RD),
        min(glicko.volatility, MAX_VOLATILITY),
    )


def live_rd(glicko: Glicko, last_game: float | None, now: float) -> float:
    """The RD at `now` (Unix seconds) of a rating stored after a game at `last_game`: Glicko-2's
    step 6 for the rating periods passed since, at most 500, at least 45."""
    periods = 0.0
    if last_game is not None and now > last_game:
        periods = (now - last_game) / SECONDS_PER_DAY * RATING_PERIODS_PER_DAY
    phi = glicko.rd / SCALE
    grown = SCALE * math.sqrt(phi * phi + periods * glicko.volatility**2)
    return min(max(grown, MIN_RD), MAX_RD)


def provisional(rd: float) -> bool:
    return rd >= PROVISIONAL_RD


def display(rating: float) -> int:
    """The whole rating shown (and whose difference is a game's rating change), as lichess:
    truncated."""
    return int(rating)


def _sane(glicko: Glicko) -> bool:
    """Lichess's sanity check; a rating failing it (never seen) starts again from the default."""
    return 0 < glicko.rating < 4000 and 0 < glicko.rd < 1000 and 0 < glicko.volatility < 0.2


def _after(before: Glicko, computed: Glicko) -> Glicko:
    bounded = Glicko(
        min(
            max(computed.rating, before.rating - MAX_RATING_DELTA), before.rating + MAX_RATING_DELTA
        ),
        computed.rd,
        computed.volatility,
    )
    return cap(bounded if _sane(bounded) else DEFAULT)


@dataclass(frozen=True, slots=True)
class RatingChange:
    """One player's rating before and after a game (both as live when the game ended)."""

    before: Glicko
    after: Glicko

    @property
    def diff(self) -> int:
        return display(self.after.rating) - display(self.before.rating)


def rate_game(first: Glicko, second: Glicko, score: float) -> tuple[RatingChange, RatingChange]:
    """Both players' changes after one game; `first`, `second` are their live ratings (see
    `live`), `score` the first player's (1 win, 0.5 draw, 0 loss)."""
    before_first, before_second = cap(first), cap(second)
    new_first, new_second = game_update(before_first, before_second, score, TAU)
    return (
        RatingChange(before_first, _after(before_first, new_first)),
        RatingChange(before_second, _after(before_second, new_second)),
    )
