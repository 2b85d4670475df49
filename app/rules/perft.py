"""Perft: the number of leaf positions of the legal-move tree, the standard test of a generator.

Each distinct capture path counts as a distinct move. The last ply is counted, not played.
"""

from __future__ import annotations

from app.rules.board import CROWN_ROW, FULL, Color
from app.rules.position import Position
from app.rules.variants import Variant


def _perft(variant: Variant, bm: int, bk: int, wm: int, wk: int, black: bool, depth: int) -> int:
    empty = FULL ^ (bm | bk | wm | wk)
    if black:
        men, kings, opp_men, opp_kings = bm, bk, wm, wk
    else:
        men, kings, opp_men, opp_kings = wm, wk, bm, bk
    if depth == 1:
        return variant._count(men, kings, opp_men | opp_kings, empty, black)
    crown = CROWN_ROW[Color.BLACK if black else Color.WHITE]
    total = 0
    for path, captured in variant._generate(men, kings, opp_men | opp_kings, empty, black):
        source, target = 1 << path[0], 1 << path[-1]
        if men & source:
            if target & crown:
                m, k = men ^ source, kings | target
            else:
                m, k = men ^ source | target, kings
        else:
            m, k = men, kings ^ source ^ target
        om, ok = opp_men, opp_kings
        if captured:
            om &= ~captured
            ok &= ~captured
        if black:
            total += _perft(variant, m, k, om, ok, False, depth - 1)
        else:
            total += _perft(variant, om, ok, m, k, True, depth - 1)
    return total


def perft(position: Position, depth: int) -> int:
    """Leaf count at ``depth`` plies from ``position`` (1 for depth 0)."""
    if depth < 0:
        raise ValueError("perft depth must be 0 or more")
    if depth == 0:
        return 1
    return _perft(
        position.variant,
        position.black_men,
        position.black_kings,
        position.white_men,
        position.white_kings,
        position.turn is Color.BLACK,
        depth,
    )


def divide(position: Position, depth: int) -> list[tuple[str, int]]:
    """Perft split by first move: (move text, leaf count below it), in generation order."""
    if depth < 1:
        raise ValueError("divide needs a depth of 1 or more")
    return [(str(move), perft(position.play(move), depth - 1)) for move in position.legal_moves()]
