"""Levels 1-8 of the computer opponent, after lichess/lidraughts' ladder.

Each level has a movetime; levels 1-4 are also capped by nodes, evaluate material and a little
advancement only, and add noise to their root moves' scores (a move up to ``noise`` hundredths
of a man worse may be chosen), so they lose honestly: by playing legal, plausible, weaker moves.
Levels 5-8 use the full evaluation and the opening book; 5-7 also stop at a depth (6, 8, 10), two
plies apart, so that each is clearly stronger than the one below whatever the machine's speed
(the movetimes alone, 300 to 500 ms, are too close to order them). In English draughts levels
7 and 8 know the endgame database's exact results of positions of four pieces or fewer; pool
has no database (its endings are not English ones), so there they search those endings too.
"""

from __future__ import annotations

from dataclasses import dataclass

from app.engine.search import Limits


@dataclass(frozen=True, slots=True)
class Level:
    movetime_ms: int
    nodes: int | None = None
    noise: int = 0
    depth: int | None = None
    """The strong levels below 8 stop at this depth (or their movetime, whichever is first)."""
    egdb: bool = False
    """Whether the search reads exact results of few-piece endings from the database."""

    @property
    def strong(self) -> bool:
        return self.nodes is None


LEVELS: dict[int, Level] = {
    1: Level(50, nodes=50, noise=150),
    2: Level(100, nodes=120, noise=100),
    3: Level(150, nodes=400, noise=60),
    4: Level(200, nodes=1_200, noise=30),
    5: Level(300, depth=6),
    6: Level(400, depth=8),
    7: Level(500, depth=10, egdb=True),
    8: Level(1_000, egdb=True),
}
MAX_LEVEL = max(LEVELS)


def level_limits(level: int, seed: int | None = None) -> Limits:
    """The search limits of ``level`` (1-8); ``ValueError`` for any other number."""
    if level not in LEVELS:
        raise ValueError(f"level must be 1 to {MAX_LEVEL}, not {level}")
    spec = LEVELS[level]
    return Limits(
        movetime_ms=spec.movetime_ms,
        nodes=spec.nodes,
        simple=not spec.strong,
        noise=spec.noise,
        depth=spec.depth,
        book=spec.strong,
        seed=seed,
        egdb=spec.egdb,
    )
