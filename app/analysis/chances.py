"""From an evaluation to winning chances, and what a move cost: lichess's model, fitted to
checkers.

An evaluation is in **centipieces** from Black's side (a man is 100; Black moves first, so a
positive number is good for Black), or a forced win: ``#N`` when Black wins in N of its own
moves, ``#-N`` when White does (``#0``: the game is over). Winning chances are lichess's
``2 / (1 + exp(-k * cp)) - 1``, from -1 (White wins) to +1 (Black wins), with ``k`` fitted on
master games (docs/analysis.md): checkers is drawish, so the same lead is worth fewer chances
than in chess. A move is labelled by the drop of the mover's chances from the position before
it (searched with the best move) to the position after it: lichess's thresholds, 0.1 an
inaccuracy, 0.2 a mistake, 0.3 a blunder. Since one number hides how drawish a position is,
``wdl`` gives Black's win, draw and loss in thousandths from a second fit (an ordered logistic:
a draw band of half-width ``DRAW_MARGIN`` centipieces).

Pure: no I/O, imports only the rules.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from app.rules import Color

K = 0.00675
"""Chances per centipiece, fitted on the master games (docs/analysis.md,
`bench/analysis_fit.py`): a man's lead is about a third of the way to a sure win."""
WDL_SLOPE = 0.0152
"""The ordered logistic's slope per centipiece (fitted with ``DRAW_MARGIN``)."""
DRAW_MARGIN = 150
"""Centipieces of lead that leave a win and a draw equally likely (fitted)."""

INACCURACY = 0.1
MISTAKE = 0.2
BLUNDER = 0.3
LABELS = ("inaccuracy", "mistake", "blunder")
SYMBOLS = {"inaccuracy": "?!", "mistake": "?", "blunder": "??"}

WON = 29_000
"""A search score beyond this (either sign) is a forced result: ``30000 - plies``."""
_WIN = 30_000


@dataclass(frozen=True, slots=True)
class Eval:
    """A position's value from Black's side: centipieces, or a forced win in ``win_in`` of the
    winner's moves (positive: Black wins, negative: White; ``win_in`` 0 with ``black_wins``
    says who when the game is over)."""

    cp: int = 0
    win_in: int | None = None
    black_wins: bool = True  # with ``win_in``: who wins

    def text(self) -> str:
        """``+35``, ``-120``, ``0``, ``#3``, ``#-3``."""
        if self.win_in is not None:
            return f"#{self.win_in}" if self.black_wins else f"#-{self.win_in}"
        return f"{self.cp:+d}" if self.cp else "0"

    def chances(self) -> float:
        """Black's winning chances, -1 to +1."""
        if self.win_in is not None:
            return 1.0 if self.black_wins else -1.0
        return chances(self.cp)

    def for_side(self, colour: Color) -> float:
        """The winning chances of ``colour``, -1 to +1."""
        value = self.chances()
        return value if colour is Color.BLACK else -value

    def payload(self) -> dict[str, int | bool | None]:
        """As stored and served: ``cp`` (None for a forced win), ``win_in``, ``black_wins``."""
        if self.win_in is not None:
            return {"cp": None, "win_in": self.win_in, "black_wins": self.black_wins}
        return {"cp": self.cp, "win_in": None, "black_wins": None}


def from_score(score: int, turn: Color) -> Eval:
    """A search's score (hundredths of a man for the side to move; beyond ``WON`` a forced
    result ``30000 - plies``) as an ``Eval`` from Black's side."""
    good_for_black = (score >= 0) == (turn is Color.BLACK)
    if abs(score) > WON:
        plies = _WIN - abs(score)
        return Eval(win_in=(plies + 1) // 2, black_wins=good_for_black)
    return Eval(cp=score if turn is Color.BLACK else -score)


def over(winner: Color | None) -> Eval:
    """The value of a game that has ended: won by ``winner``, or drawn (None)."""
    if winner is None:
        return Eval(0)
    return Eval(win_in=0, black_wins=winner is Color.BLACK)


def chances(cp: float) -> float:
    """Black's winning chances (-1 to +1) at ``cp`` centipieces from Black's side."""
    return 2 / (1 + math.exp(-K * max(-5000.0, min(5000.0, cp)))) - 1


def label(before: float, after: float) -> str | None:
    """The label of a move that took its mover's chances from ``before`` to ``after``."""
    drop = before - after
    if drop >= BLUNDER:
        return "blunder"
    if drop >= MISTAKE:
        return "mistake"
    if drop >= INACCURACY:
        return "inaccuracy"
    return None


def win_percent(side_chances: float) -> float:
    return 50 + 50 * side_chances


def move_accuracy(before: float, after: float) -> float:
    """lichess's accuracy of one move (0-100) from its mover's chances before and after."""
    lost = max(0.0, win_percent(before) - win_percent(after))
    return max(0.0, min(100.0, 103.1668 * math.exp(-0.04354 * lost) - 3.1669))


def accuracy(moves: Sequence[tuple[float, float]]) -> float | None:
    """A player's accuracy over their moves ((before, after) chances each): the mean of the
    moves' arithmetic and harmonic means (lichess weights the first by the position's
    volatility too; we do not). None without a move."""
    if not moves:
        return None
    each = [move_accuracy(before, after) for before, after in moves]
    arithmetic = sum(each) / len(each)
    harmonic = len(each) / sum(1 / max(a, 0.1) for a in each)
    return round((arithmetic + harmonic) / 2, 1)


def wdl(value: Eval) -> tuple[int, int, int]:
    """Black's win, draw and loss in thousandths (they add up to 1000)."""
    if value.win_in is not None:
        return (1000, 0, 0) if value.black_wins else (0, 0, 1000)
    win = _sigmoid(WDL_SLOPE * (value.cp - DRAW_MARGIN))
    loss = _sigmoid(WDL_SLOPE * (-value.cp - DRAW_MARGIN))
    w, lo = round(1000 * win), round(1000 * loss)
    return w, 1000 - w - lo, lo


def _sigmoid(x: float) -> float:
    return 1 / (1 + math.exp(-max(-60.0, min(60.0, x))))
