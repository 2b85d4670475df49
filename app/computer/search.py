"""The computer's search as the server runs it: its processes (spawned, at low priority), the time
it takes per move, when it offers or accepts a draw, and the quick search of the weak levels."""

from __future__ import annotations

import contextlib
import logging
import os
import threading
import time

from app.engine import Limits, level_limits, search
from app.play.players import LiveGame
from app.rules import Game

logger = logging.getLogger(__name__)

DRAW_FROM_PLY = 80  # move 40


DRAW_SCORE = 25  # hundredths of a man, for the AI


DRAW_SEARCH_MS = 200


CLOCK_SHARE = 20  # at most 1/20 of the time left on a move


MIN_MOVETIME_MS = 10


HISTORY_PLIES = 60  # earlier positions given to the search (repetitions)


# Searches capped at this many nodes (levels 1-4: 50, 120, 400 and 1,200; a few milliseconds)
# run in a thread of the server process: they need no search process, nor to wait for one.
QUICK_NODES = 1_200


def movetime_ms(level: int, clock_left_ms: int | None) -> int:
    """The AI's thinking time at `level` with `clock_left_ms` on its clock (None: untimed)."""
    budget = level_limits(level).movetime_ms or 0
    if clock_left_ms is not None:
        budget = min(budget, max(MIN_MOVETIME_MS, clock_left_ms // CLOCK_SHARE))
    return budget


def accepts_draw(ply: int, score: int | None) -> bool:
    """Whether the AI accepts a draw at `ply` when its search scores the position `score`
    (hundredths of a man, for the AI). None: the search finished no depth in its time (a
    machine too busy to give it any), so it knows nothing of the position and declines."""
    return ply >= DRAW_FROM_PLY and score is not None and score <= DRAW_SCORE


def history(lg: LiveGame) -> list[str]:
    """The FENs before the current position (the latest `HISTORY_PLIES`), for repetitions."""
    replayed = Game(lg.game.variant, start_fen=lg.start_fen)
    fens = [replayed.fen()]
    for move in lg.game.moves[:-1]:
        replayed.play(move)
        fens.append(replayed.fen())
    return fens[-HISTORY_PLIES:] if lg.game.moves else []


SEARCH_NICENESS = 19  # the search processes yield the CPU to the server's event loop


def search_process(parent: int) -> None:
    """A search process starts: at a lower priority than the server (live play comes first),
    and exiting once the server process that started it is gone (killed, say), rather than
    waiting for work forever."""
    with contextlib.suppress(OSError, AttributeError):
        os.nice(SEARCH_NICENESS)
    watch_parent(parent)


def watch_parent(parent: int) -> None:
    """In a worker process: exit once the server process `parent` that started it is gone."""

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(1.0)
        os._exit(0)

    threading.Thread(target=watch, name="parent-watch", daemon=True).start()


def warm() -> None:
    """Import the engine in a worker, and load its book and endgame database (a probe of a
    four-piece position), before the first real search."""
    search(None, "english", Limits(depth=1))
    search("W:WK1,K2:BK31,K32", "english", Limits(depth=2, egdb=True))


def quick(limits: Limits) -> bool:
    """Whether a search is capped at `QUICK_NODES` (a weak level's), so short that it runs in
    the server process rather than waiting for a search process."""
    return limits.nodes is not None and limits.nodes <= QUICK_NODES
