"""The search's move generation: the rules' internal moves, found with fewer operations.

The moves are the rules' own ``InternalMove`` tuples (path of bit indices, captured mask), so the
search and the rules agree on every move, but the common cases are found by whole-board shifts
and taken from tables built once: a step or a single jump is a shared tuple, not built per node.
Longer English captures fall back on the rules' own recursion. A test compares every function
here with the rules on random positions of both variants.
"""

from __future__ import annotations

from typing import Final

from app.rules.board import (
    DOWN_LEFT,
    DOWN_RIGHT,
    EVEN_NOT_RIGHT,
    EVEN_ROWS,
    FULL,
    JUMPS,
    KING_KIND,
    ODD_NOT_LEFT,
    ODD_ROWS,
    RAYS,
    UP_LEFT,
    UP_RIGHT,
)
from app.rules.variants import InternalMove, _distinct_captures, _short_jumps

# A jump covers two rows, so its landing square is always 7 or 9 indices away; the jumped square
# is 3, 4 or 5 away depending on the row's parity. Sources that have a jump in a direction:
JUMP_UP_LEFT: Final = 0xEEEEEE00
"""Land 9 indices lower; jumped square 4 lower from an even row, 5 from an odd one."""
JUMP_UP_RIGHT: Final = 0x77777700
"""Land 7 lower; jumped square 3 lower from an even row, 4 from an odd one."""
JUMP_DOWN_LEFT: Final = 0x00EEEEEE
"""Land 7 higher; jumped square 4 higher from an even row, 3 from an odd one."""
JUMP_DOWN_RIGHT: Final = 0x00777777
"""Land 9 higher; jumped square 5 higher from an even row, 4 from an odd one."""


def jumpers(down: int, up: int, opp: int, empty: int) -> int:
    """The pieces of ``down`` (moving towards 32) or ``up`` that can jump now (as the rules'
    ``_short_jumpers``, in fewer operations)."""
    found = 0
    if down:
        shifted = opp >> 4
        found = down & (
            JUMP_DOWN_LEFT & empty >> 7 & (shifted & EVEN_ROWS | opp >> 3 & ODD_ROWS)
            | JUMP_DOWN_RIGHT & empty >> 9 & (opp >> 5 & EVEN_ROWS | shifted & ODD_ROWS)
        )
    if up:
        shifted = opp << 4
        found |= up & (
            JUMP_UP_LEFT & empty << 9 & (shifted & EVEN_ROWS | opp << 5 & ODD_ROWS)
            | JUMP_UP_RIGHT & empty << 7 & (opp << 3 & EVEN_ROWS | shifted & ODD_ROWS)
        )
    return found


_MoveBytes = tuple[tuple[tuple[InternalMove, ...], ...], ...]


def _step_tables(directions: tuple[int, int]) -> tuple[tuple[int, int, int, int, _MoveBytes], ...]:
    """For each direction: the two (source mask, shift) pairs that move a set of pieces one
    square that way, and for each byte of the target squares and each value of it, the moves
    that land there (so a direction's moves are four lookups, not a loop over targets)."""
    out = []
    for direction in directions:
        by_shift: dict[int, int] = {}
        moves: list[InternalMove] = [((i, i), 0) for i in range(32)]
        for i in range(32):
            ray = RAYS[direction][i]
            if ray:
                by_shift[ray[0] - i] = by_shift.get(ray[0] - i, 0) | 1 << i
                moves[ray[0]] = ((i, ray[0]), 0)
        (shift1, mask1), (shift2, mask2) = sorted(by_shift.items())
        by_byte = tuple(
            tuple(tuple(moves[8 * k + b] for b in range(8) if v >> b & 1) for v in range(256))
            for k in range(4)
        )
        out.append((mask1, abs(shift1), mask2, abs(shift2), by_byte))
    return tuple(out)


(
    (_DL_MASK1, _DL_SHIFT1, _DL_MASK2, _DL_SHIFT2, (_DL0, _DL1, _DL2, _DL3)),
    (_DR_MASK1, _DR_SHIFT1, _DR_MASK2, _DR_SHIFT2, (_DR0, _DR1, _DR2, _DR3)),
) = _step_tables((DOWN_LEFT, DOWN_RIGHT))
(
    (_UL_MASK1, _UL_SHIFT1, _UL_MASK2, _UL_SHIFT2, (_UL0, _UL1, _UL2, _UL3)),
    (_UR_MASK1, _UR_SHIFT1, _UR_MASK2, _UR_SHIFT2, (_UR0, _UR1, _UR2, _UR3)),
) = _step_tables((UP_LEFT, UP_RIGHT))
_UL_SHIFTED1, _UL_SHIFTED2 = _UL_MASK1 >> _UL_SHIFT1, _UL_MASK2 >> _UL_SHIFT2
_UR_SHIFTED1, _UR_SHIFTED2 = _UR_MASK1 >> _UR_SHIFT1, _UR_MASK2 >> _UR_SHIFT2


def quiet_moves(down: int, up: int, empty: int) -> list[InternalMove]:
    """One-square steps of ``down`` pieces (towards 32) and ``up`` pieces, found by shifts a
    direction at a time: down-left, down-right, up-left, up-right, each by target square."""
    if down:
        left = ((down & _DL_MASK1) << _DL_SHIFT1 | (down & _DL_MASK2) << _DL_SHIFT2) & empty
        right = ((down & _DR_MASK1) << _DR_SHIFT1 | (down & _DR_MASK2) << _DR_SHIFT2) & empty
        out = [
            *_DL0[left & 255],
            *_DL1[left >> 8 & 255],
            *_DL2[left >> 16 & 255],
            *_DL3[left >> 24],
            *_DR0[right & 255],
            *_DR1[right >> 8 & 255],
            *_DR2[right >> 16 & 255],
            *_DR3[right >> 24],
        ]
        if not up:
            return out
    else:
        out = []
    # Shifted before masking: the masks, shifted too, are then below 2**30 (one CPython digit).
    left = (up >> _UL_SHIFT1 & _UL_SHIFTED1 | up >> _UL_SHIFT2 & _UL_SHIFTED2) & empty
    right = (up >> _UR_SHIFT1 & _UR_SHIFTED1 | up >> _UR_SHIFT2 & _UR_SHIFTED2) & empty
    out += (
        *_UL0[left & 255],
        *_UL1[left >> 8 & 255],
        *_UL2[left >> 16 & 255],
        *_UL3[left >> 24],
        *_UR0[right & 255],
        *_UR1[right >> 8 & 255],
        *_UR2[right >> 16 & 255],
        *_UR3[right >> 24],
    )
    return out


def can_step(down: int, up: int, empty: int) -> bool:
    """Whether ``down`` or ``up`` pieces have a one-square step. Without a capture, a side
    without one has no move (a flying king that cannot step cannot go further either)."""
    return bool(
        (
            (down & EVEN_ROWS) << 4
            | (down & ODD_NOT_LEFT) << 3
            | (down & EVEN_NOT_RIGHT) << 5
            | (down & ODD_ROWS) << 4
        )
        & empty
        or (
            (up & EVEN_ROWS) >> 4
            | (up & ODD_NOT_LEFT) >> 5
            | (up & EVEN_NOT_RIGHT) >> 3
            | (up & ODD_ROWS) >> 4
        )
        & empty
    )


_JumpRow = tuple[tuple[int, int, int, InternalMove], ...]


def _jump_tables() -> tuple[tuple[_JumpRow, ...], ...]:
    """JUMPS with the single-jump move of each entry: (jumped bit, landing bit, landing index,
    the move that stops there)."""
    return tuple(
        tuple(
            tuple((over, land, j, ((i, j), over)) for over, land, j in kind[i]) for i in range(32)
        )
        for kind in JUMPS
    )


_JUMPS: Final = _jump_tables()
_KING_JUMPS: Final = _JUMPS[KING_KIND]
_KING_RULES_JUMPS: Final = JUMPS[KING_KIND]
_BLACK_CROWN: Final = 0xF0000000
_WHITE_CROWN: Final = 0x0000000F


def english_captures(
    jumping: int, men: int, kings: int, opp: int, empty: int, black: bool
) -> list[InternalMove]:
    """Every English capture of the ``jumping`` pieces (as ``jumpers`` found them), in the
    rules' form: a jump that cannot go on is a shared tuple, a longer one is the rules'."""
    out: list[InternalMove] = []
    if black:
        man_table, man_rules_table, man_stop = _JUMPS[1], JUMPS[1], _BLACK_CROWN
    else:
        man_table, man_rules_table, man_stop = _JUMPS[0], JUMPS[0], _WHITE_CROWN
    while jumping:
        low = jumping & -jumping
        jumping ^= low
        i = low.bit_length() - 1
        if men & low:
            table, rules_table, stop = man_table, man_rules_table, man_stop
        else:
            table, rules_table, stop = _KING_JUMPS, _KING_RULES_JUMPS, 0
        space = empty | low
        for over, land, j, single in table[i]:
            if opp & over and space & land:
                if land & stop:
                    out.append(single)
                    continue
                rest = opp ^ over
                for over2, land2, _, _ in table[j]:
                    if rest & over2 and space & land2:
                        _short_jumps(j, rules_table, rest, space, stop, (i, j), over, out)
                        break
                else:
                    out.append(single)
    return out


def _ray_tables(direction: int) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """For each square: the mask of the diagonal from it in ``direction``, and for each
    square the bit of the next one that way (0 off the board)."""
    rays = tuple(sum(1 << j for j in RAYS[direction][i]) for i in range(32))
    beyond = tuple(1 << RAYS[direction][i][0] if RAYS[direction][i] else 0 for i in range(32))
    return rays, beyond


_UL_RAY, _UL_BEYOND = _ray_tables(UP_LEFT)
_UR_RAY, _UR_BEYOND = _ray_tables(UP_RIGHT)
_DL_RAY, _DL_BEYOND = _ray_tables(DOWN_LEFT)
_DR_RAY, _DR_BEYOND = _ray_tables(DOWN_RIGHT)
_TAKEN_FROM: Final = tuple(
    sum(
        1 << j
        for direction in (UP_LEFT, UP_RIGHT, DOWN_LEFT, DOWN_RIGHT)
        for j in RAYS[direction][i][:-1]
    )
    for i in range(32)
)
"""For each square: the squares a flying king there could take a piece on (every square of
its diagonals but the last, which has nothing beyond it)."""


def flying_capturers(kings: int, opp: int, empty: int) -> int:
    """The flying kings that can capture now: along each diagonal, the first piece met is an
    opponent's with an empty square behind it (found by ray masks, not square by square)."""
    found = 0
    occupied = FULL ^ empty
    pieces = kings
    while pieces:
        low = pieces & -pieces
        pieces ^= low
        i = low.bit_length() - 1
        if not opp & _TAKEN_FROM[i]:
            continue
        # Up the board the nearest piece is the highest bit; down it is the lowest.
        met = _UL_RAY[i] & occupied
        if met:
            j = met.bit_length() - 1
            if opp >> j & 1 and empty & _UL_BEYOND[j]:
                found |= low
                continue
        met = _UR_RAY[i] & occupied
        if met:
            j = met.bit_length() - 1
            if opp >> j & 1 and empty & _UR_BEYOND[j]:
                found |= low
                continue
        met = _DL_RAY[i] & occupied
        if met:
            j = (met & -met).bit_length() - 1
            if opp >> j & 1 and empty & _DL_BEYOND[j]:
                found |= low
                continue
        met = _DR_RAY[i] & occupied
        if met:
            j = (met & -met).bit_length() - 1
            if opp >> j & 1 and empty & _DR_BEYOND[j]:
                found |= low
    return found


def _flying_jumps(
    i: int,
    opp: int,
    empty: int,
    occupied: int,
    path: tuple[int, ...],
    captured: int,
    out: list[InternalMove],
) -> bool:
    """The rules' ``_flying_jumps`` by ray masks: every complete flying-king capture from
    ``i`` in the same order (directions up-left, up-right, down-left, down-right; landing
    squares nearest first); True when there is at least one. Captured pieces stay on the
    board until the move ends (in ``occupied``, out of ``empty``), so they block."""
    found = False
    for rays, beyond, up in _FLYING:
        met = rays[i] & occupied
        if not met:
            continue
        j = met.bit_length() - 1 if up else (met & -met).bit_length() - 1
        if not (opp >> j & 1 and empty & beyond[j]):
            continue
        found = True
        over = 1 << j
        # The landing squares: on from the captured piece up to the next piece.
        landing = rays[j]
        stop = landing & occupied
        if stop:
            k = stop.bit_length() - 1 if up else (stop & -stop).bit_length() - 1
            landing &= ~(rays[k] | 1 << k)
        squares = []
        while landing:
            if up:
                k = landing.bit_length() - 1
                landing ^= 1 << k
            else:
                low = landing & -landing
                landing ^= low
                k = low.bit_length() - 1
            squares.append(k)
        rest, taken = opp ^ over, captured | over
        continued = False
        for k in squares:
            # (Without an opponent's piece on a diagonal from k, short of its end, the
            # capture cannot go on from there: no call.)
            if rest & _TAKEN_FROM[k] and _flying_jumps(
                k, rest, empty, occupied, (*path, k), taken, out
            ):
                continued = True
        if not continued:
            out.extend(((*path, k), taken) for k in squares)
    return found


_FLYING: Final = (
    (_UL_RAY, _UL_BEYOND, True),
    (_UR_RAY, _UR_BEYOND, True),
    (_DL_RAY, _DL_BEYOND, False),
    (_DR_RAY, _DR_BEYOND, False),
)


_SLIDES: Final = tuple(
    tuple(
        tuple(tuple(((i, j), 0) for j in RAYS[direction][i][:n]) for n in range(8))
        for i in range(32)
    )
    for direction in (UP_LEFT, UP_RIGHT, DOWN_LEFT, DOWN_RIGHT)
)
"""_SLIDES[direction][square][n]: the moves to the n nearest squares that way (shared)."""
_SLIDING: Final = tuple(
    (rays, up, slides) for (rays, _, up), slides in zip(_FLYING, _SLIDES, strict=True)
)


def king_slides(kings: int, empty: int) -> list[InternalMove]:
    """The flying kings' plain moves, in the rules' order (king by king, directions up-left,
    up-right, down-left, down-right, nearest square first): along each diagonal, every
    square before the first piece met, counted by a mask rather than walked."""
    out: list[InternalMove] = []
    occupied = FULL ^ empty
    while kings:
        low = kings & -kings
        kings ^= low
        i = low.bit_length() - 1
        for rays, up, slides in _SLIDING:
            free = rays[i]
            met = free & occupied
            if met:
                k = met.bit_length() - 1 if up else (met & -met).bit_length() - 1
                free &= ~(rays[k] | 1 << k)
            if free:
                out += slides[i][free.bit_count()]
    return out


def pool_captures(jumping: int, flying: int, opp: int, empty: int) -> list[InternalMove]:
    """Every pool capture, in the rules' form and order: the men's of ``jumping`` (as
    ``jumpers`` found them; a pool man jumps like a short king and goes on past the crowning
    row), then the flying kings' of ``flying`` (as ``flying_capturers`` found them)."""
    out = english_captures(jumping, 0, 0, opp, empty, False) if jumping else []
    while flying:
        low = flying & -flying
        flying ^= low
        i = low.bit_length() - 1
        found: list[InternalMove] = []
        space = empty | low
        _flying_jumps(i, opp, space, FULL ^ space, (i,), 0, found)
        # Single captures are distinct by their landing squares; longer ones may be one
        # move written with different stops (the rules keep the nearest).
        if len(found) > 1:
            for path, _ in found:  # (a loop: cheaper than any() over a generator)
                if len(path) > 2:
                    found = _distinct_captures(found)
                    break
        out.extend(found)
    return out
