"""Games to find puzzles in, besides the master games and the archive: the computer's levels
playing each other (docs/puzzles.md), the weaker side making the mistakes people make.

Each level plays at its node or depth limit without its time limit, so that a game depends on
its seed alone, not on the machine. Pure: no I/O.
"""

from __future__ import annotations

import dataclasses
import random

from app.engine import level_limits, search_position
from app.rules import Game, Position

LEVELS = (2, 3, 4, 5, 6)
"""Levels 7 and 8 are left out: without their time limits they search too long for this."""
MAX_PLIES = 160


def self_play(variant: str, seed: int) -> tuple[int, int, list[str]]:
    """One game between two different levels drawn from ``LEVELS`` by ``seed``: the levels
    (Black's, White's) and the moves, until the game ends or ``MAX_PLIES``."""
    rng = random.Random(seed)
    black, white = rng.sample(LEVELS, 2)
    game = Game(variant, automatic_draws=True)
    history: list[Position] = []
    while game.outcome() is None and len(game.moves) < MAX_PLIES:
        level = black if len(game.moves) % 2 == 0 else white
        limits = dataclasses.replace(
            level_limits(level, seed=rng.randrange(1 << 30)), movetime_ms=None
        )
        found = search_position(game.position, limits, history)
        history.append(game.position)
        game.play(found.move)
    return black, white, [str(m) for m in game.moves]
