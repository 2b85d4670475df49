"""Static evaluation in hundredths of a man, from Black's side (``black_score``).

Square tables are summed a byte at a time (four lookups per piece set, no loop over pieces):
the evaluation runs at every leaf, so its cost decides the search's speed. The terms are the
classic ones of checkers programs: material (kings worth more, pool's flying kings much more),
advancement by phase (tempo), the back rank kept while the opponent has no king, the centre,
runaway men (a man nobody can stop from crowning: found by tables of the men each opposing
piece stands in front of), and trading down when ahead. Mobility is not a term: it cost more
nodes than it won (measured on the master positions: 63% agreement at depth 8 with it, 65%
without, at 2.5 times the time); the search only checks that a side has a move at all.

Lazy evaluation: given the search's window, a position whose material alone is more than
``LAZY_MARGIN`` outside it gets that bound (material plus or minus the margin) without the
positional terms, which would not bring it back into the window. Measured at the leaves of the
speed positions' searches (235,000 of them): the positional terms came to at most 318 (English)
and 278 (pool), 276 and 211 in 999 leaves of 1,000; with a margin of 150 or more, no leaf
whose full score would have entered the window was cut short. A margin of 200 skips the
positional terms at about two leaves in three (English) and one in two (pool).
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Final, Protocol

from app.rules.board import LONG_DIAGONAL


class Evaluator(Protocol):
    """(black men, black kings, white men, white kings) -> score for Black; with a window
    (``lo``, ``hi``), a score at or beyond one of its ends may be a bound on that side."""

    def __call__(self, bm: int, bk: int, wm: int, wk: int, lo: int = ..., hi: int = ...) -> int: ...


class Positional(Protocol):
    """(black men, black kings, white men, white kings, ``material``, pieces on the board) ->
    score for Black: the evaluation finished from its material term (``material`` as
    ``material()`` gives it for Black), for a caller that has done the lazy test itself."""

    def __call__(self, bm: int, bk: int, wm: int, wk: int, score: int, total: int) -> int: ...


UNBOUNDED: Final = 1 << 30
"""No window: the exact score."""
LAZY_MARGIN: Final = 200
"""How far outside the window the material must be for the positional terms to be skipped."""

MAN: Final = 100
KING_VALUE: Final = {"english": 135, "pool": 260}
"""A short king is worth about a man and a third; a flying king, which rules the long diagonals
and takes from afar, about two and a half."""

_ByteTable = tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...], tuple[int, ...]]


def _byte_table(values: Sequence[int]) -> _ByteTable:
    """For each byte of a 32-square set and each value of it: the sum of ``values`` of its
    squares, so that a set's total is four lookups."""
    b0, b1, b2, b3 = (
        tuple(sum(values[8 * k + i] for i in range(8) if v >> i & 1) for v in range(256))
        for k in range(4)
    )
    return b0, b1, b2, b3


def _row(index: int) -> int:
    return index // 4


def _col(index: int) -> int:
    row = index // 4
    return 2 * (index % 4) + (1 if row % 2 == 0 else 0)


def _centrality(index: int) -> int:
    """0 on the edge files and rows, up to 3 in the four central squares."""
    row, col = _row(index), _col(index)
    return min(row, 7 - row, col, 7 - col)


# Phase by pieces on the board: opening (> 16), middle game (9-16), ending (<= 8).
_PHASE: Final = tuple(2 if n <= 8 else 1 if n <= 16 else 0 for n in range(25))
_ADVANCE: Final = (
    (0, 1, 2, 4, 6, 9, 12, 0),  # rows from a man's own side; row 7 is the crowning row
    (0, 2, 4, 7, 10, 14, 18, 0),
    (0, 4, 8, 13, 19, 26, 34, 0),
)
_BACK_RANK: Final = (12, 8, 2)
"""A man on its own back row guards the crowning squares; it matters less as the board empties."""
_CENTRE_MAN: Final = (5, 4, 1)
_CENTRE_KING: Final = (4, 5, 7)


def _man_values(phase: int, simple: bool) -> list[int]:
    """Black men's square values (Black's back row is squares 1-4, it moves towards 32)."""
    values = []
    for i in range(32):
        row = _row(i)
        if simple:
            values.append(2 * row if row < 7 else 0)
            continue
        value = _ADVANCE[phase][row]
        value += _CENTRE_MAN[phase] * max(0, _centrality(i) - 1)
        if row == 0:
            # The bridge squares (1 and 3) hold the back rank with two men.
            value += _BACK_RANK[phase] + (4 if i in (0, 2) else 0)
        values.append(value)
    return values


def _king_values(phase: int, variant: str, simple: bool) -> list[int]:
    if simple:
        return [0] * 32
    values = [_CENTRE_KING[phase] * _centrality(i) - 4 for i in range(32)]
    if variant == "pool":
        values = [v + (12 if LONG_DIAGONAL >> i & 1 else 0) for i, v in enumerate(values)]
    return values


def _mirror(values: Sequence[int]) -> list[int]:
    """White's values: the board turned half a round (square s <-> 33 - s)."""
    return [values[31 - i] for i in range(32)]


def _cone(index: int, black: bool) -> int:
    """The squares a man on ``index`` could reach on its way to the crowning row."""
    row, col = _row(index), _col(index)
    mask = 0
    for k in range(1, 8):
        r = row + k if black else row - k
        if not 0 <= r < 8:
            break
        for c in range(col - k, col + k + 1):
            if 0 <= c < 8 and (r + c) % 2 == 1:
                mask |= 1 << (r * 4 + c // 2)
    return mask


_BLACK_CONE: Final = tuple(_cone(i, True) for i in range(32))
_WHITE_CONE: Final = tuple(_cone(i, False) for i in range(32))
_RUNAWAY: Final = (0, 0, 0, 20, 30, 40, 50, 0)
"""By rows advanced: a man whose way to the crowning row is clear is nearly a king."""
_BLACK_HALF: Final = 0x0FFFF000
"""Rows 3-6 from Black's side, where a black runaway is worth looking for."""
_WHITE_HALF: Final = 0x000FFFF0


def _blocked_tables(cones: Sequence[int]) -> tuple[tuple[int, ...], ...]:
    """For each byte of a set of opposing pieces and each value of it: the men (of the side
    whose ``cones`` these are) that those pieces stand in front of, so no runaway."""
    behind = [sum(1 << i for i in range(32) if cones[i] >> j & 1) for j in range(32)]
    out = []
    for k in range(4):
        row = []
        for value in range(256):
            mask = 0
            for bit in range(8):
                if value >> bit & 1:
                    mask |= behind[8 * k + bit]
            row.append(mask)
        out.append(tuple(row))
    return tuple(out)


def material(men: int, kings: int, opp_men: int, opp_kings: int, king: int) -> int:
    """The full evaluation's material term for the side of ``men`` and ``kings`` (``king``: the
    variant's king value), trading down included: what the lazy test compares with the window.
    The search's leaf loop counts it the same way, written out."""
    total = (men | kings | opp_men | opp_kings).bit_count()
    lead = MAN * (men.bit_count() - opp_men.bit_count()) + king * (
        kings.bit_count() - opp_kings.bit_count()
    )
    # Trading down when ahead: the same lead weighs more on an emptier board.
    if lead > 0:
        return lead + lead * (24 - total) // 48
    if lead < 0:
        return lead - -lead * (24 - total) // 48
    return 0


@functools.cache
def make_evaluator(variant: str, *, simple: bool = False) -> Evaluator:
    """The evaluation of ``variant`` ("english" or "pool"); ``simple`` is the weak levels':
    material and a little advancement only."""
    return _make(variant, simple)[0]


@functools.cache
def make_positional(variant: str, *, simple: bool = False) -> Positional:
    """``make_evaluator``'s evaluation after its lazy test: given the material term (and the
    number of pieces), the rest. The simple evaluation ignores them and scores from scratch."""
    return _make(variant, simple)[1]


@functools.cache
def _make(variant: str, simple: bool) -> tuple[Evaluator, Positional]:
    king = KING_VALUE[variant]
    phases = []
    for phase in range(3):
        men = _man_values(phase, simple)
        kings = _king_values(phase, variant, simple)
        phases.append(
            (_byte_table(men), _byte_table(_mirror(men)), _byte_table(kings), _byte_table(kings))
        )
    tables = tuple(phases)
    phase_of = _PHASE

    if simple:

        def simple_score(
            bm: int, bk: int, wm: int, wk: int, lo: int = -UNBOUNDED, hi: int = UNBOUNDED
        ) -> int:
            (a0, a1, a2, a3), (b0, b1, b2, b3), _, _ = tables[1]
            return (
                MAN * (bm.bit_count() - wm.bit_count())
                + king * (bk.bit_count() - wk.bit_count())
                + a0[bm & 255]
                + a1[bm >> 8 & 255]
                + a2[bm >> 16 & 255]
                + a3[bm >> 24]
                - b0[wm & 255]
                - b1[wm >> 8 & 255]
                - b2[wm >> 16 & 255]
                - b3[wm >> 24]
            )

        def simple_positional(bm: int, bk: int, wm: int, wk: int, score: int, total: int) -> int:
            return simple_score(bm, bk, wm, wk)

        return simple_score, simple_positional

    men_tables = tuple((*a, *b) for a, b, _, _ in tables)
    king_tables = tuple((*c, *d) for _, _, c, d in tables)
    # Only men on the far half can be runaways, and only pieces further on can stop them:
    # Black's candidates are on squares 13-28, stopped by White's pieces on 17-32 (the upper
    # two bytes); White's on 5-20, stopped by Black's on 1-16 (the lower two bytes).
    _, _, bb2, bb3 = _blocked_tables(_BLACK_CONE)
    wb0, wb1, _, _ = _blocked_tables(_WHITE_CONE)
    _, r1, r2, r3 = _byte_table(
        [_RUNAWAY[i >> 2] if _BLACK_HALF >> i & 1 else 0 for i in range(32)]
    )
    s0, s1, s2, _ = _byte_table(
        [_RUNAWAY[7 - (i >> 2)] if _WHITE_HALF >> i & 1 else 0 for i in range(32)]
    )

    def black_score(
        bm: int, bk: int, wm: int, wk: int, lo: int = -UNBOUNDED, hi: int = UNBOUNDED
    ) -> int:
        score = material(bm, bk, wm, wk, king)
        # Lazy: the material alone is so far outside the window that the rest cannot matter.
        if score + LAZY_MARGIN <= lo:
            return score + LAZY_MARGIN
        if score - LAZY_MARGIN >= hi:
            return score - LAZY_MARGIN
        return positional(bm, bk, wm, wk, score, (bm | bk | wm | wk).bit_count())

    def positional(bm: int, bk: int, wm: int, wk: int, score: int, total: int) -> int:
        phase = phase_of[total]
        a0, a1, a2, a3, b0, b1, b2, b3 = men_tables[phase]
        score += (
            a0[bm & 255]
            + a1[bm >> 8 & 255]
            + a2[bm >> 16 & 255]
            + a3[bm >> 24]
            - b0[wm & 255]
            - b1[wm >> 8 & 255]
            - b2[wm >> 16 & 255]
            - b3[wm >> 24]
        )
        if bk or wk:
            c0, c1, c2, c3, d0, d1, d2, d3 = king_tables[phase]
            if bk:
                score += c0[bk & 255] + c1[bk >> 8 & 255] + c2[bk >> 16 & 255] + c3[bk >> 24]
                # Once the opponent has a king, the back rank guards nothing: undo its bonus.
                score += (wm & 0xF0000000).bit_count() * 8
            if wk:
                score -= d0[wk & 255] + d1[wk >> 8 & 255] + d2[wk >> 16 & 255] + d3[wk >> 24]
                score -= (bm & 0xF).bit_count() * 8
        # Runaway men: those no opposing piece stands in front of (in the cone of squares on
        # the way to the crowning row), found a byte of the opponent's pieces at a time.
        free = bm & _BLACK_HALF
        if free:
            white = wm | wk
            free &= ~(bb2[white >> 16 & 255] | bb3[white >> 24])
            if free:
                score += r1[free >> 8 & 255] + r2[free >> 16 & 255] + r3[free >> 24]
        free = wm & _WHITE_HALF
        if free:
            black = bm | bk
            free &= ~(wb0[black & 255] | wb1[black >> 8 & 255])
            if free:
                score -= s0[free & 255] + s1[free >> 8 & 255] + s2[free >> 16 & 255]
        return score

    return black_score, positional
