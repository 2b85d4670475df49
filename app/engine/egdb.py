"""Endgame databases: every English position of few pieces, its exact result and distance.

Built by our own retrograde analysis (``app.engine.egdb_build``, ``checkers build-egdb``) and
shipped inside the package as ``egdb.bin.xz``. A position is stored from the side to move's
view, turned half a round when White is to move (square ``i`` becomes ``31 - i``), so only
"Black to move" positions are kept. They are grouped in slices by material: (own men, own kings,
opponent men, opponent kings). Inside a slice each piece set is ranked among the combinations
of its squares (men: the 28 squares they can stand on; kings: all 32), and the index is the
mixed-radix number of the four ranks; index slots whose sets overlap are never read.

One byte per position: 0 is a draw, ``d + 1`` the end of the game in ``d`` plies with best play
(the side to move wins when ``d`` is odd and loses when it is even: the loser is the one left
without a move). The database knows the rules' forced captures, crowning and the loss of a side
without a move; it ignores the repetition and 40-move draws, which depend on the game's history.
"""

from __future__ import annotations

import functools
import lzma
from collections.abc import Iterable, Iterator
from importlib import resources
from itertools import combinations
from math import comb
from typing import Final

EGDB_FILE: Final = "egdb.bin.xz"
MAGIC: Final = b"checkers-egdb 1 english"
MAX_DISTANCE: Final = 253
"""Plies; one byte holds ``d + 1`` and the builder refuses anything longer."""

Slice = tuple[int, int, int, int]
"""(own men, own kings, opponent men, opponent kings), the side to move moving down."""


def _reverse_table() -> tuple[int, ...]:
    table = [0] * 65536
    for x in range(1, 65536):
        table[x] = (table[x >> 1] >> 1) | ((x & 1) << 15)
    return tuple(table)


_REV16: Final = _reverse_table()


def rotate(board: int) -> int:
    """The squares turned half a round: bit ``i`` becomes bit ``31 - i``."""
    return _REV16[board & 0xFFFF] << 16 | _REV16[board >> 16]


@functools.cache
def combos(n: int, k: int) -> tuple[int, ...]:
    """The ``k``-square sets of ``n`` squares as bitboards, in the order of ``rank``."""
    out = [0] * comb(n, k)
    for squares in combinations(range(n), k):
        board = sum(1 << s for s in squares)
        out[rank(board)] = board
    return tuple(out)


_OWN_CROWN_ROW: Final = 0xF << 28
"""Squares 29-32: the side to move's men are crowned there, so none stands there."""
_OPPONENT_CROWN_ROW: Final = 0xF
_BIN: Final = tuple(tuple(comb(p, k) for k in range(8)) for p in range(33))


def rank(board: int) -> int:
    """The colexicographic rank of a set of squares among the sets of its size."""
    r = 0
    k = 1
    while board:
        low = board & -board
        board ^= low
        r += _BIN[low.bit_length() - 1][k]
        k += 1
    return r


def slice_shape(s: Slice) -> tuple[int, int, int, int]:
    """How many sets each of the four piece kinds of ``s`` can take."""
    a, b, c, d = s
    return comb(28, a), comb(32, b), comb(28, c), comb(32, d)


def slice_size(s: Slice) -> int:
    a, b, c, d = slice_shape(s)
    return a * b * c * d


def slice_positions(s: Slice) -> int:
    """How many positions ``s`` holds: its index slots less those whose sets overlap. Own men
    stand on squares 1-28, the opponent's on 5-32; only squares 5-28 take both."""
    a, b, c, d = s
    total = 0
    for own_top in range(min(a, 4) + 1):
        for opp_bottom in range(min(c, 4) + 1):
            middle = comb(24, a - own_top) * comb(24 - (a - own_top), c - opp_bottom)
            total += comb(4, own_top) * comb(4, opp_bottom) * middle
    free = 32 - a - c
    return total * comb(free, b) * comb(free - b, d)


def slices(pieces: int) -> list[Slice]:
    """Every slice of 2 to ``pieces`` pieces, both sides with one at least, in file order."""
    out = [
        (a, b, c, d)
        for total in range(2, pieces + 1)
        for a in range(total + 1)
        for b in range(total + 1 - a)
        for c in range(total + 1 - a - b)
        for d in (total - a - b - c,)
        if a + b >= 1 and c + d >= 1
    ]
    return out


def index_of(s: Slice, men: int, kings: int, opp_men: int, opp_kings: int) -> int:
    """The index of a position (side to move moving down) in its slice ``s``."""
    _, sb, sc, sd = slice_shape(s)
    return ((rank(men) * sb + rank(kings)) * sc + rank(opp_men >> 4)) * sd + rank(opp_kings)


def canonical(
    men: int, kings: int, opp_men: int, opp_kings: int, black: bool
) -> tuple[int, int, int, int]:
    """The position seen with the side to move moving down (turned half a round for White)."""
    if black:
        return men, kings, opp_men, opp_kings
    return rotate(men), rotate(kings), rotate(opp_men), rotate(opp_kings)


def header(pieces: int) -> bytes:
    return MAGIC + f" {pieces}\n".encode()


class Egdb:
    """A loaded database of up to ``pieces`` pieces: one byte per position, by slice."""

    def __init__(self, pieces: int, tables: dict[Slice, bytes | bytearray]) -> None:
        self.pieces = pieces
        self.tables = tables
        self._shapes = {s: slice_shape(s) for s in tables}

    @classmethod
    def from_bytes(cls, data: bytes) -> Egdb:
        """The database in a file's (uncompressed) bytes; ``ValueError`` if they are not one."""
        first, _, body = data.partition(b"\n")
        if not first.startswith(MAGIC):
            raise ValueError("not an English endgame database")
        try:
            pieces = int(first[len(MAGIC) :])
        except ValueError:
            raise ValueError("bad endgame database header") from None
        tables: dict[Slice, bytes | bytearray] = {}
        offset = 0
        view = memoryview(body)
        for s in slices(pieces):
            size = slice_size(s)
            tables[s] = bytes(view[offset : offset + size])
            offset += size
        if offset != len(body):
            raise ValueError("endgame database of the wrong length")
        return cls(pieces, tables)

    def to_bytes(self) -> bytes:
        return header(self.pieces) + b"".join(bytes(self.tables[s]) for s in slices(self.pieces))

    def counts(self) -> dict[int, int]:
        """How many positions are won (1), drawn (0) and lost (-1) for the side to move."""
        wins = losses = total = 0
        for s, table in self.tables.items():
            total += slice_positions(s)
            for value in range(1, MAX_DISTANCE + 2):
                found = table.count(value)
                if value % 2:
                    losses += found
                else:
                    wins += found
        return {1: wins, 0: total - wins - losses, -1: losses}

    def value(self, men: int, kings: int, opp_men: int, opp_kings: int, black: bool) -> int | None:
        """The stored byte (0 draw, ``d + 1`` an end in ``d`` plies) of a position of at most
        ``pieces`` pieces, seen from the side to move; None for a larger position, or one with
        a man on its crown row (a FEN may set one there; play never leaves one)."""
        if (men | kings | opp_men | opp_kings).bit_count() > self.pieces:
            return None
        men, kings, opp_men, opp_kings = canonical(men, kings, opp_men, opp_kings, black)
        if men & _OWN_CROWN_ROW or opp_men & _OPPONENT_CROWN_ROW:
            return None  # a man on its crown row: set up by hand, never reached in play
        if not men | kings:
            return 1  # no piece, no move: lost now
        s = (men.bit_count(), kings.bit_count(), opp_men.bit_count(), opp_kings.bit_count())
        _, sb, sc, sd = self._shapes[s]
        r = 0
        k = 1
        board = men
        while board:
            low = board & -board
            board ^= low
            r += _BIN[low.bit_length() - 1][k]
            k += 1
        index = r * sb + rank(kings)
        index = index * sc + rank(opp_men >> 4)
        return self.tables[s][index * sd + rank(opp_kings)]

    def positions(
        self, only: Iterable[Slice] | None = None
    ) -> Iterator[tuple[Slice, int, int, int, int, int]]:
        """Every stored position (of the slices ``only``): (slice, men, kings, opponent men,
        opponent kings, byte)."""
        for s in self.tables if only is None else only:
            table = self.tables[s]
            a, b, c, d = s
            for men in combos(28, a):
                for kings in combos(32, b):
                    if kings & men:
                        continue
                    for opp_men in combos(28, c):
                        opp_men <<= 4
                        if opp_men & (men | kings):
                            continue
                        for opp_kings in combos(32, d):
                            if opp_kings & (men | kings | opp_men):
                                continue
                            yield (
                                s,
                                men,
                                kings,
                                opp_men,
                                opp_kings,
                                table[index_of(s, men, kings, opp_men, opp_kings)],
                            )


def outcome(value: int) -> int:
    """+1 a win for the side to move, -1 a loss, 0 a draw, from a stored byte."""
    if value == 0:
        return 0
    return 1 if (value - 1) % 2 else -1


@functools.cache
def shipped_egdb() -> Egdb | None:
    """The database shipped in the package (read once), or None if the file is missing."""
    source = resources.files("app.engine").joinpath(EGDB_FILE)
    if not source.is_file():
        return None
    return Egdb.from_bytes(lzma.decompress(source.read_bytes()))
