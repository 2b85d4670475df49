"""Build the English endgame database by retrograde analysis (``checkers build-egdb``).

Slices are solved in pairs: a slice and its mirror (the same material with the sides swapped)
hold each other's children. A capture leaves a slice with fewer pieces, a man's crowning one
with fewer men: both solved before, so the pairs go by pieces, then men. For a pair:

1. Every position's moves come from the rules' own generator. A position with no move is lost
   now; one with a capture pending has only children already solved, so its value is known at
   once; for the others the children outside the pair (crownings) are looked up, and those
   inside (a man's or a king's step) are counted.
2. Distances then grow a ply at a time. A position settled at distance ``d`` settles its
   parents (positions from which a step leads to it, found by "unmoving" a piece of the side
   that just moved, and that had no capture pending): a loss makes each parent a win at
   ``d + 1``; a win takes one from each parent's count of unsettled children, and a parent
   whose count reaches zero (and has no drawing or winning crowning) is lost, at the longest of
   its children's distances plus one. A win found through a crowning waits in the queue at its
   distance, so the shortest win always comes first.
3. Whatever is left unsettled is a draw: neither side can force the end of the game.

Pure: no I/O; the caller writes ``Egdb.to_bytes()``.
"""

from __future__ import annotations

from array import array
from collections.abc import Callable

from app.engine.egdb import (
    MAX_DISTANCE,
    Egdb,
    Slice,
    combos,
    rank,
    rotate,
    slice_shape,
    slice_size,
    slices,
)
from app.rules.board import FULL, STEPS
from app.rules.variants import ENGLISH

_CROWN = 0xF0000000
"""Where the side to move (moving down) crowns."""
_SETTLED = 255
"""In the counts: a position whose value does not depend on its steps' children."""
_EXIT_WIN = 254
_EXIT_DRAW = 255
_UP_STEPS = STEPS[0]  # where a man moving down came from: one square up
_KING_STEPS = STEPS[2]


class EgdbTooDeep(Exception):
    """A distance beyond what one byte holds (never met up to five pieces)."""


def _pairs(pieces: int) -> list[tuple[Slice, ...]]:
    """Each slice with its mirror, in an order where every child outside a pair is solved."""
    seen: set[Slice] = set()
    out: list[tuple[Slice, ...]] = []
    for s in slices(pieces):
        if s in seen:
            continue
        mirror = (s[2], s[3], s[0], s[1])
        seen.update((s, mirror))
        out.append((s,) if mirror == s else (s, mirror))
    out.sort(key=lambda p: (sum(p[0]), p[0][0] + p[0][2]))
    return out


class _Builder:
    def __init__(self, pieces: int) -> None:
        self.pieces = pieces
        self.tables: dict[Slice, bytearray] = {}
        self.shapes = {s: slice_shape(s) for s in slices(pieces)}

    def lookup(self, men: int, kings: int, opp_men: int, opp_kings: int) -> int:
        """The byte of a solved child, given as the mover left it (before turning it round)."""
        own_men, own_kings = rotate(opp_men), rotate(opp_kings)
        if not own_men | own_kings:
            return 1
        other_men, other_kings = rotate(men), rotate(kings)
        s = (
            own_men.bit_count(),
            own_kings.bit_count(),
            other_men.bit_count(),
            other_kings.bit_count(),
        )
        _, sb, sc, sd = self.shapes[s]
        index = ((rank(own_men) * sb + rank(own_kings)) * sc + rank(other_men >> 4)) * sd + rank(
            other_kings
        )
        return self.tables[s][index]

    def solve(self, pair: tuple[Slice, ...]) -> None:
        values = [bytearray(slice_size(s)) for s in pair]
        counts = [bytearray(slice_size(s)) for s in pair]
        extras = [bytearray(slice_size(s)) for s in pair]
        for s, v in zip(pair, values, strict=True):
            self.tables[s] = v
        buckets: list[array[int]] = [array("q") for _ in range(MAX_DISTANCE + 2)]
        for side, s in enumerate(pair):
            self._first_pass(s, side, counts[side], extras[side], buckets)
        mirror_side = [len(pair) - 1 - side for side in range(len(pair))]
        for d in range(MAX_DISTANCE + 1):
            bucket = buckets[d]
            win = d % 2 == 0  # a parent of a loss wins
            for code in bucket:
                side, index = code & 1, code >> 1
                if values[side][index]:
                    continue
                values[side][index] = d + 1
                parent_side = mirror_side[side]
                parent_values = values[parent_side]
                parent_counts = counts[parent_side]
                parent_extras = extras[parent_side]
                for parent in self._parents(pair[side], index, pair[parent_side]):
                    if parent_values[parent] or parent_counts[parent] == _SETTLED:
                        continue
                    if win:
                        buckets[d + 1].append(parent << 1 | parent_side)
                        continue
                    left = parent_counts[parent] - 1
                    parent_counts[parent] = left
                    if left == 0:
                        extra = parent_extras[parent]
                        if extra < _EXIT_WIN:
                            buckets[max(d + 1, extra)].append(parent << 1 | parent_side)
            buckets[d] = array("q")
        if any(buckets[MAX_DISTANCE + 1]):
            raise EgdbTooDeep(f"a distance over {MAX_DISTANCE} plies in {pair}")

    def _first_pass(
        self,
        s: Slice,
        side: int,
        counts: bytearray,
        extras: bytearray,
        buckets: list[array[int]],
    ) -> None:
        a, b, c, d = s
        _, sb, sc, sd = self.shapes[s]
        generate = ENGLISH._generate
        lookup = self.lookup
        all_kings = combos(32, b)
        all_opp_men = combos(28, c)
        all_opp_kings = combos(32, d)
        for ra, men in enumerate(combos(28, a)):
            for rb, kings in enumerate(all_kings):
                if kings & men:
                    continue
                own = men | kings
                base_b = (ra * sb + rb) * sc
                for rc, opp_men in enumerate(all_opp_men):
                    opp_men <<= 4
                    if opp_men & own:
                        continue
                    base_c = (base_b + rc) * sd
                    for rd, opp_kings in enumerate(all_opp_kings):
                        if opp_kings & (own | opp_men):
                            continue
                        index = base_c + rd
                        code = index << 1 | side
                        opp = opp_men | opp_kings
                        moves = generate(men, kings, opp, FULL ^ (own | opp), True)
                        if not moves:
                            counts[index] = _SETTLED
                            buckets[0].append(code)
                            continue
                        capture = moves[0][1] != 0
                        inside = 0
                        best_win = 0
                        longest_loss = 0
                        draw = False
                        for path, captured in moves:
                            source, target = 1 << path[0], 1 << path[-1]
                            if men & source:
                                if not captured and not target & _CROWN:
                                    inside += 1
                                    continue
                                m = men ^ source
                                k = kings | target if target & _CROWN else kings
                                if not target & _CROWN:
                                    m |= target
                            elif not captured:
                                inside += 1
                                continue
                            else:
                                m, k = men, kings ^ source ^ target
                            value = lookup(m, k, opp_men & ~captured, opp_kings & ~captured)
                            if value == 0:
                                draw = True
                            elif value % 2:  # the child's mover loses in value - 1 plies
                                if not best_win or value < best_win:
                                    best_win = value
                            elif value > longest_loss:
                                longest_loss = value
                        if capture:
                            counts[index] = _SETTLED
                            if best_win:
                                buckets[best_win].append(code)
                            elif not draw:
                                buckets[longest_loss].append(code)
                            continue
                        counts[index] = inside
                        if best_win:
                            extras[index] = _EXIT_WIN
                            buckets[best_win].append(code)
                        elif draw:
                            extras[index] = _EXIT_DRAW
                        else:
                            extras[index] = longest_loss
                            if not inside:
                                buckets[longest_loss].append(code)

    def _parents(self, s: Slice, index: int, parent_slice: Slice) -> list[int]:
        """The indices (in ``parent_slice``) of the positions with a step leading to position
        ``index`` of ``s``; those with a capture pending are left to the caller's check."""
        _, sb, sc, sd = self.shapes[s]
        index, rd = divmod(index, sd)
        index, rc = divmod(index, sc)
        ra, rb = divmod(index, sb)
        a, b, c, d = s
        # The parent's mover is this position's opponent: turn the board back round.
        men = rotate(combos(28, c)[rc] << 4)
        kings = rotate(combos(32, d)[rd])
        opp_men = rotate(combos(28, a)[ra])
        opp_kings = rotate(combos(32, b)[rb])
        empty = FULL ^ (men | kings | opp_men | opp_kings)
        _, pb, pc, pd = self.shapes[parent_slice]
        rank_men = rank(men)
        rank_kings = rank(kings)
        tail = rank(opp_men >> 4) * pd + rank(opp_kings)
        out: list[int] = []
        board = men
        while board:
            low = board & -board
            board ^= low
            for bit, _ in _UP_STEPS[low.bit_length() - 1]:
                if empty & bit:
                    r = rank(men ^ low ^ bit)
                    out.append((r * pb + rank_kings) * pc * pd + tail)
        board = kings
        while board:
            low = board & -board
            board ^= low
            for bit, _ in _KING_STEPS[low.bit_length() - 1]:
                if empty & bit:
                    r = rank(kings ^ low ^ bit)
                    out.append((rank_men * pb + r) * pc * pd + tail)
        return out


def extend(base: Egdb, wanted: list[Slice]) -> dict[Slice, bytearray]:
    """The slices ``wanted`` (and their mirrors) of one piece more than ``base``, solved from
    ``base``: for a part of a bigger database, whose captures and crownings all lead to ``base``
    or to ``wanted`` itself (kings only, say)."""
    builder = _Builder(base.pieces + 1)
    builder.tables.update((s, bytearray(table)) for s, table in base.tables.items())
    for pair in _pairs(base.pieces + 1):
        if any(s in wanted for s in pair):
            builder.solve(pair)
    return {s: builder.tables[s] for s in builder.tables if s not in base.tables}


def build(pieces: int, progress: Callable[[tuple[Slice, ...]], None] | None = None) -> Egdb:
    """The database of every position of 2 to ``pieces`` pieces (``progress`` is told of each
    pair of slices before it is solved)."""
    if pieces < 2:
        raise ValueError(f"an endgame database needs 2 pieces at least, not {pieces}")
    builder = _Builder(pieces)
    for pair in _pairs(pieces):
        if progress is not None:
            progress(pair)
        builder.solve(pair)
    return Egdb(pieces, dict(builder.tables))
