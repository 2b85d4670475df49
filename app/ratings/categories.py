"""Time-control categories: which of a player's ratings a game moves.

As lichess: a game's estimated duration is the base time plus 40 increments (a game of about
40 moves each), in seconds; under 3 minutes is bullet, under 8 blitz, under 25 rapid, longer
classical. Lichess's ultrabullet (under 30 s) is folded into bullet: too few checkers games are
played that fast to keep a rating apart. Correspondence games (a base of a day or more: days per
move) are rated apart, as there; games without a clock are `untimed` (nothing presses the
players either, but they are played at one sitting).
"""

from __future__ import annotations

from typing import Literal

Category = Literal["bullet", "blitz", "rapid", "classical", "correspondence", "untimed"]
CATEGORIES: tuple[Category, ...] = (
    "bullet",
    "blitz",
    "rapid",
    "classical",
    "correspondence",
    "untimed",
)

MOVES_PER_GAME = 40
# (upper bound in seconds, exclusive; category)
UPPER_BOUNDS: tuple[tuple[int, Category], ...] = ((180, "bullet"), (480, "blitz"), (1500, "rapid"))
CORRESPONDENCE_FROM_S = 86_400  # a base of a day or more: days per move


def category_of(base_s: int | None, increment_s: int) -> Category:
    """The category of a clock (`base_s` None: untimed)."""
    if base_s is None:
        return "untimed"
    if base_s >= CORRESPONDENCE_FROM_S:
        return "correspondence"
    estimate = base_s + MOVES_PER_GAME * increment_s
    for limit, name in UPPER_BOUNDS:
        if estimate < limit:
            return name
    return "classical"
