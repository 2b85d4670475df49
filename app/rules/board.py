"""Squares, colours and the precomputed bitboard tables every variant shares.

A position is four 32-bit ints (black men, black kings, white men, white kings). Bit ``i`` is PDN
square ``i + 1``: row by row from Black's side (top of the diagram), left to right. Black moves
"down" (towards square 32), White "up". Tables are built once at import so that move generation
only indexes tuples.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Final

Square = int
"""A PDN square number, 1-32."""

Bitboard = int
"""A set of squares: bit ``i`` stands for square ``i + 1``."""

FULL: Final = 0xFFFFFFFF


class Color(StrEnum):
    """The two sides. Black moves first."""

    BLACK = "black"
    WHITE = "white"

    @property
    def other(self) -> Color:
        return Color.WHITE if self is Color.BLACK else Color.BLACK


# Directions in the diagram: up-left, up-right (White's forward), down-left, down-right (Black's).
UP_LEFT: Final = 0
UP_RIGHT: Final = 1
DOWN_LEFT: Final = 2
DOWN_RIGHT: Final = 3
DIRECTIONS: Final = (UP_LEFT, UP_RIGHT, DOWN_LEFT, DOWN_RIGHT)
_DELTAS: Final = ((-1, -1), (-1, 1), (1, -1), (1, 1))


def _coords(index: int) -> tuple[int, int]:
    row = index // 4
    return row, 2 * (index % 4) + (1 if row % 2 == 0 else 0)


def _index(row: int, col: int) -> int:
    """The bit index of a dark square, or -1 when (row, col) is off the board or light."""
    if not (0 <= row < 8 and 0 <= col < 8) or (row + col) % 2 == 0:
        return -1
    return row * 4 + col // 2


def _ray(index: int, direction: int) -> tuple[int, ...]:
    row, col = _coords(index)
    drow, dcol = _DELTAS[direction]
    out: list[int] = []
    while True:
        row, col = row + drow, col + dcol
        nxt = _index(row, col)
        if nxt < 0:
            return tuple(out)
        out.append(nxt)


RAYS: Final = tuple(tuple(_ray(i, d) for i in range(32)) for d in DIRECTIONS)
"""RAYS[direction][index]: bit indices along the diagonal, nearest first."""

STEPS: Final = tuple(
    tuple(tuple((1 << RAYS[d][i][0], RAYS[d][i][0]) for d in dirs if RAYS[d][i]) for i in range(32))
    for dirs in ((UP_LEFT, UP_RIGHT), (DOWN_LEFT, DOWN_RIGHT), DIRECTIONS)
)
"""STEPS[kind][index]: (target bit, target index) for one-square steps.

Kind 0 is a white man (up), 1 a black man (down), 2 a short-moving king (all four directions).
"""

JUMPS: Final = tuple(
    tuple(
        tuple(
            (1 << RAYS[d][i][0], 1 << RAYS[d][i][1], RAYS[d][i][1])
            for d in dirs
            if len(RAYS[d][i]) >= 2
        )
        for i in range(32)
    )
    for dirs in ((UP_LEFT, UP_RIGHT), (DOWN_LEFT, DOWN_RIGHT), DIRECTIONS)
)
"""JUMPS[kind][index]: (jumped bit, landing bit, landing index) for short jumps, kinds as STEPS."""

KING_KIND: Final = 2


def _between(a: int, b: int) -> int:
    for ray in (RAYS[d][a] for d in DIRECTIONS):
        if b in ray:
            mask = 0
            for sq in ray[: ray.index(b)]:
                mask |= 1 << sq
            return mask
    return 0


BETWEEN: Final = tuple(tuple(_between(a, b) for b in range(32)) for a in range(32))
"""BETWEEN[a][b]: the squares strictly between two indices on one diagonal (0 otherwise)."""

CROWN_ROW: Final = {Color.BLACK: 0xF0000000, Color.WHITE: 0x0000000F}
"""The far row where a man of each colour is crowned."""

LONG_DIAGONAL: Final = sum(1 << (sq - 1) for sq in (29, 25, 22, 18, 15, 11, 8, 4))
"""The a1-h8 diagonal, which matters in the pool 3-kings-against-1 ending."""

# Masks for whole-board steps by shifting: a step changes the bit index by 3, 4 or 5 depending on
# the row's parity. Even rows (0, 2, …, from Black's side) hold columns b, d, f, h.
EVEN_ROWS: Final = 0x0F0F0F0F
ODD_ROWS: Final = 0xF0F0F0F0
EVEN_NOT_RIGHT: Final = EVEN_ROWS & ~sum(1 << (sq - 1) for sq in (4, 12, 20, 28))
ODD_NOT_LEFT: Final = ODD_ROWS & ~sum(1 << (sq - 1) for sq in (5, 13, 21, 29))
