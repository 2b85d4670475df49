"""A game analysed: every position searched at a fixed budget, each move given the evaluation
after it, the best move before it (with its line) and a label (``chances.label``), and each
player an accuracy.

The search is the computer opponent's (``app.engine``) at full strength, with the endgame
database, without the book or noise, at ``DEFAULT_NODES`` nodes a position unless told
otherwise: a node budget, unlike a time budget, gives the same analysis on any machine and any
load. A position where the game is over (no move) is not searched.

Pure: no I/O; takes and returns plain values, so a process pool can run it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from app.analysis import chances
from app.analysis.chances import Eval
from app.engine import Limits, search_position
from app.rules import Color, Game, Position

DEFAULT_NODES = 100_000
"""Nodes a position: a 60-ply game in about 15 s of one core (docs/benchmarks.md)."""
MAX_NODES = 5_000_000
MAX_MOVETIME_MS = 60_000


def limits(nodes: int | None = None, movetime_ms: int | None = None) -> Limits:
    """The analysis's search limits: ``nodes`` a position (default ``DEFAULT_NODES``) or a
    CPU-time budget in milliseconds, at full strength with the endgame database."""
    if movetime_ms is not None:
        if not 1 <= movetime_ms <= MAX_MOVETIME_MS:
            raise ValueError(f"movetime must be 1 to {MAX_MOVETIME_MS} ms, not {movetime_ms}")
        return Limits(movetime_ms=movetime_ms, cpu_time=True, egdb=True, seed=0)
    nodes = DEFAULT_NODES if nodes is None else nodes
    if not 1_000 <= nodes <= MAX_NODES:
        raise ValueError(f"nodes must be 1000 to {MAX_NODES}, not {nodes}")
    return Limits(nodes=nodes, egdb=True, seed=0)


@dataclass(frozen=True, slots=True)
class PositionValue:
    """What the search said of one position: its value from Black's side, the best move and
    its line (None and () where the game is over)."""

    value: Eval
    best: str | None
    pv: tuple[str, ...]
    depth: int


@dataclass(frozen=True, slots=True)
class PlyReport:
    """Ply ``ply`` (1-based): ``move``, played by ``mover``; ``value`` the position after it;
    ``best`` the best move instead (and its line) in the position before it; ``label`` what
    the move cost (None, or ``inaccuracy``, ``mistake``, ``blunder``)."""

    ply: int
    move: str
    mover: Color
    value: Eval
    best: str | None
    pv: tuple[str, ...]
    label: str | None
    before: float  # the mover's chances before the move (-1 to +1)
    after: float  # and after it

    def line(self) -> str:
        """``PLY MOVE EVAL BEST LABEL``, as ``checkers analyse`` prints it."""
        return f"{self.ply} {self.move} {self.value.text()} {self.best or '-'} {self.label or '-'}"


@dataclass(frozen=True, slots=True)
class GameAnalysis:
    start: PositionValue  # the position before the first move
    plies: list[PlyReport] = field(default_factory=list)

    def accuracy(self, colour: Color) -> float | None:
        return chances.accuracy([(p.before, p.after) for p in self.plies if p.mover is colour])


def evaluate(game: Game, history: Sequence[Position], budget: Limits) -> PositionValue:
    """The value of ``game``'s current position (its earlier positions in ``history``)."""
    position = game.position
    if not position.has_legal_moves():
        return PositionValue(chances.over(position.turn.other), None, (), 0)
    found = search_position(position, budget, history)
    return PositionValue(
        chances.from_score(found.score, position.turn), found.move, found.pv, found.depth
    )


def value_at(
    variant: str, moves: Sequence[str], start_fen: str | None, ply: int, budget: Limits
) -> PositionValue:
    """The value of the position after the first ``ply`` moves: one position of an analysis,
    from plain values (what a worker process is given)."""
    game = Game(variant, start_fen, automatic_draws=False)
    history: list[Position] = []
    for text in moves[:ply]:
        history.append(game.position)
        game.play(text)
    return evaluate(game, history, budget)


MAX_DEPTH = 30
POSITION_NODES = 1_000_000
"""The analysis board's searches stop at this many nodes, whatever the depth asked for."""


def position_line(
    variant: str, start_fen: str | None, moves: Sequence[str], depth: int
) -> PositionValue:
    """The analysis board's search of the position after ``moves`` from ``start_fen``, to
    ``depth`` (at most ``POSITION_NODES`` nodes): its value, best move and line."""
    game = Game(variant, start_fen, automatic_draws=True)
    history: list[Position] = []
    for text in moves:
        history.append(game.position)
        game.play(text)
    budget = Limits(depth=depth, nodes=POSITION_NODES, egdb=True, seed=0)
    return evaluate(game, history, budget)


def assemble(
    variant: str, moves: Sequence[str], start_fen: str | None, values: Sequence[PositionValue]
) -> GameAnalysis:
    """The analysis from each position's value (``values[i]``: after ``i`` moves)."""
    game = Game(variant, start_fen, automatic_draws=False)
    plies = []
    for index, text in enumerate(moves):
        mover = game.position.turn
        played = str(game.play(text))
        before, after = values[index], values[index + 1]
        was, now = before.value.for_side(mover), after.value.for_side(mover)
        # The move the search would have played costs nothing, whatever its node budget said.
        cost = None if before.best == played else chances.label(was, now)
        plies.append(
            PlyReport(index + 1, played, mover, after.value, before.best, before.pv, cost, was, now)
        )
    return GameAnalysis(values[0], plies)


def analyse(
    variant: str,
    moves: Sequence[str],
    start_fen: str | None = None,
    budget: Limits | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> GameAnalysis:
    """Analyse a game given by its moves, in this process; raises the rules' error for an
    illegal move. ``progress(done, total)`` is called after each position searched."""
    budget = limits() if budget is None else budget
    game = Game(variant, start_fen, automatic_draws=False)
    history: list[Position] = []
    total = len(moves) + 1
    values = [evaluate(game, history, budget)]
    if progress is not None:
        progress(1, total)
    for index, text in enumerate(moves):
        history.append(game.position)
        game.play(text)
        values.append(evaluate(game, history, budget))
        if progress is not None:
            progress(index + 2, total)
    return assemble(variant, moves, start_fen, values)
