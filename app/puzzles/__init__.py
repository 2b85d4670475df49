"""Puzzles: positions of games where the side to move wins by one clearly best line, found by
the engine (`generate`), in games of the levels playing each other among others (`sources`), and
the ones shipped with the server (`shipped`, from `data/*.jsonl`). Pure like the engine: no I/O
but reading the files shipped inside the package. See docs/puzzles.md.

The subsystem's server code stands beside the pure modules (`generate`, `sources` and this
package): puzzles served and solved, and the puzzle ratings (`service`, `store`).

May import: live.
"""

from __future__ import annotations

import functools
import json
from importlib import resources

from app.puzzles.generate import THEMES, Puzzle, Theme

VARIANTS = ("english", "pool")


@functools.cache
def shipped() -> tuple[Puzzle, ...]:
    """The puzzles shipped with the server (`app/puzzles/data/VARIANT.jsonl`), read once."""
    found = []
    folder = resources.files("app.puzzles").joinpath("data")
    for variant in VARIANTS:
        source = folder.joinpath(f"{variant}.jsonl")
        if not source.is_file():
            continue
        for line in source.read_text(encoding="utf-8").splitlines():
            if line.strip():
                found.append(Puzzle.from_record(json.loads(line)))
    return tuple(found)


__all__ = ["THEMES", "VARIANTS", "Puzzle", "Theme", "shipped"]
