"""The two rule sets as classes over one board representation, and ``get_variant``.

Move generation works on plain ints and tuples: ``InternalMove`` is (path of bit indices, mask
of captured squares). ``Position`` turns them into public ``Move`` objects only when asked, and
perft never does, which keeps the hot path free of allocations beyond small tuples.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import ClassVar

from app.rules.board import (
    BETWEEN,
    CROWN_ROW,
    EVEN_NOT_RIGHT,
    EVEN_ROWS,
    JUMPS,
    KING_KIND,
    ODD_NOT_LEFT,
    ODD_ROWS,
    RAYS,
    STEPS,
    Color,
)
from app.rules.fen import parse_fen
from app.rules.position import Position

InternalMove = tuple[tuple[int, ...], int]

_JumpTable = tuple[tuple[tuple[int, int, int], ...], ...]


def _short_jumpers(down: int, up: int, opp: int, empty: int) -> int:
    """The pieces of ``down`` (moving towards 32) or ``up`` that can make a short jump now.

    Computed backwards from the empty landing squares, so a position without captures costs a
    few shifts and no loop over pieces. The shifts are written out: this runs at every node.
    """
    jumpers = 0
    if down:  # landing squares seen from below: step up twice through an opponent
        over = ((empty & EVEN_NOT_RIGHT) >> 3 | (empty & ODD_ROWS) >> 4) & opp
        from_left = (over & EVEN_NOT_RIGHT) >> 3 | (over & ODD_ROWS) >> 4
        over = ((empty & EVEN_ROWS) >> 4 | (empty & ODD_NOT_LEFT) >> 5) & opp
        from_right = (over & EVEN_ROWS) >> 4 | (over & ODD_NOT_LEFT) >> 5
        jumpers = down & (from_left | from_right)
    if up:
        over = ((empty & EVEN_ROWS) << 4 | (empty & ODD_NOT_LEFT) << 3) & opp
        from_right = (over & EVEN_ROWS) << 4 | (over & ODD_NOT_LEFT) << 3
        over = ((empty & EVEN_NOT_RIGHT) << 5 | (empty & ODD_ROWS) << 4) & opp
        from_left = (over & EVEN_NOT_RIGHT) << 5 | (over & ODD_ROWS) << 4
        jumpers |= up & (from_left | from_right)
    return jumpers


def _short_step_count(down: int, up: int, empty: int) -> int:
    """How many one-square steps ``down`` and ``up`` pieces have (shifts and popcounts)."""
    count = 0
    if down:
        count += (((down & EVEN_ROWS) << 4 | (down & ODD_NOT_LEFT) << 3) & empty).bit_count() + (
            ((down & EVEN_NOT_RIGHT) << 5 | (down & ODD_ROWS) << 4) & empty
        ).bit_count()
    if up:
        count += (((up & EVEN_ROWS) >> 4 | (up & ODD_NOT_LEFT) >> 5) & empty).bit_count() + (
            ((up & EVEN_NOT_RIGHT) >> 3 | (up & ODD_ROWS) >> 4) & empty
        ).bit_count()
    return count


def _short_steps(men: int, kings: int, empty: int, black: bool, out: list[InternalMove]) -> None:
    """One-square steps: men forward, kings all four ways (English kings, men of both)."""
    for pieces, table in ((men, STEPS[1 if black else 0]), (kings, STEPS[KING_KIND])):
        while pieces:
            low = pieces & -pieces
            pieces ^= low
            i = low.bit_length() - 1
            for bit, j in table[i]:
                if empty & bit:
                    out.append(((i, j), 0))


def _short_jumps(
    i: int,
    table: _JumpTable,
    opp: int,
    empty: int,
    crown: int,
    path: tuple[int, ...],
    captured: int,
    out: list[InternalMove],
) -> None:
    """Every complete short-jump sequence from ``i``; landing on ``crown`` ends the move.

    A jumped piece leaves ``opp`` at once so it cannot be jumped twice; it stays out of
    ``empty``, so it still blocks (landing on it is impossible with short jumps anyway).
    """
    extended = False
    for over, land, j in table[i]:
        if opp & over and empty & land:
            extended = True
            if land & crown:
                out.append((path + (j,), captured | over))
            else:
                _short_jumps(j, table, opp ^ over, empty, crown, path + (j,), captured | over, out)
    if not extended and captured:
        out.append((path, captured))


def _flying_jumps(
    i: int, opp: int, empty: int, path: tuple[int, ...], captured: int, out: list[InternalMove]
) -> bool:
    """Every complete flying-king capture from ``i``; True when at least one capture exists.

    Captured pieces stay on the board (out of ``empty``) until the move ends, so they block.
    When capture can continue from some landing squares, only those are allowed.
    """
    found = False
    for ray in (RAYS[0][i], RAYS[1][i], RAYS[2][i], RAYS[3][i]):
        n = len(ray)
        k = 0
        while k < n and empty >> ray[k] & 1:
            k += 1
        if k >= n - 1 or not opp >> ray[k] & 1 or not empty >> ray[k + 1] & 1:
            continue
        found = True
        over = 1 << ray[k]
        k += 1
        landings = []
        while k < n and empty >> ray[k] & 1:
            landings.append(ray[k])
            k += 1
        continued = False
        for land in landings:
            if _flying_jumps(land, opp ^ over, empty, path + (land,), captured | over, out):
                continued = True
        if not continued:
            out.extend((path + (land,), captured | over) for land in landings)
    return found


def _capture_key(move: InternalMove) -> tuple[int, int, tuple[int, ...]]:
    """What identifies a capture: start, end and the pieces taken, in order.

    A flying king that goes on along the same diagonal may stop on any square between two
    captured pieces; those stops are one move, not several (as in the reference perft figures).
    """
    path, captured = move
    order = tuple(BETWEEN[a][b] & captured for a, b in zip(path, path[1:], strict=False))
    return path[0], path[-1], order


def _distinct_captures(moves: list[InternalMove]) -> list[InternalMove]:
    """The moves with the same ``_capture_key`` reduced to the first (the nearest stops)."""
    seen: set[tuple[int, int, tuple[int, ...]]] = set()
    out = []
    for move in moves:
        key = _capture_key(move)
        if key not in seen:
            seen.add(key)
            out.append(move)
    return out


def _flying_capture_exists(kings: int, opp: int, empty: int) -> bool:
    while kings:
        low = kings & -kings
        kings ^= low
        i = low.bit_length() - 1
        for ray in (RAYS[0][i], RAYS[1][i], RAYS[2][i], RAYS[3][i]):
            for k, square in enumerate(ray):
                if not empty >> square & 1:
                    if opp >> square & 1 and k + 1 < len(ray) and empty >> ray[k + 1] & 1:
                        return True
                    break
    return False


class Variant(ABC):
    """A rule set. Class-level facts describe it; the generators implement it."""

    name: ClassVar[str]
    aliases: ClassVar[tuple[str, ...]]
    pdn_game_type: ClassVar[int]
    repetitions_to_draw: ClassVar[int]
    """How many times one position must occur for the automatic repetition draw."""
    move_limit_plies: ClassVar[int]
    """Consecutive plies without a reset that draw the game (the 40- or 30-move rule)."""
    man_moves_reset_move_limit: ClassVar[bool]
    """True: a man move or a capture resets the count; False: only a capture or a promotion."""
    kings_ending_draw: ClassVar[bool] = False
    """Whether the 3-kings-against-1 ending is drawn after a number of moves."""
    starting_fen: ClassVar[str] = (
        "B:W" + ",".join(map(str, range(21, 33))) + ":B" + ",".join(map(str, range(1, 13)))
    )

    def position(self, fen: str | None = None) -> Position:
        """A position of this variant from PDN FEN; ``None`` is the standard start."""
        placement = parse_fen(self.starting_fen if fen is None else fen)
        return Position(self, *placement)

    def __repr__(self) -> str:
        return f"<Variant {self.name}>"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Variant) and other.name == self.name

    def __hash__(self) -> int:
        return hash(self.name)

    def _generate(
        self, men: int, kings: int, opp: int, empty: int, black: bool
    ) -> list[InternalMove]:
        """The legal moves: the captures if there is any (capturing is mandatory), else steps."""
        captures = self._captures(men, kings, opp, empty, black)
        return captures or self._steps(men, kings, empty, black)

    def _same_move(
        self, men: int, kings: int, opp: int, empty: int, path: tuple[int, ...]
    ) -> tuple[int, ...] | None:
        """The listed path of a move written with another route, for variants where one move
        has several spellings (flying kings); None when ``path`` is no such spelling."""
        return None

    @abstractmethod
    def _captures(
        self, men: int, kings: int, opp: int, empty: int, black: bool
    ) -> list[InternalMove]:
        """Every complete capture sequence (each distinct path is a distinct move)."""

    @abstractmethod
    def _steps(self, men: int, kings: int, empty: int, black: bool) -> list[InternalMove]:
        """Non-capturing moves, ignoring the capture obligation."""

    @abstractmethod
    def _count(self, men: int, kings: int, opp: int, empty: int, black: bool) -> int:
        """How many legal moves there are, without building them when possible (perft)."""


class English(Variant):
    """English draughts / American checkers: short kings, men capture forward, crowning stops."""

    name = "english"
    aliases = ("english", "checkers", "american", "english-draughts", "american-checkers")
    pdn_game_type = 21
    repetitions_to_draw = 5
    move_limit_plies = 80
    man_moves_reset_move_limit = True

    def _captures(
        self, men: int, kings: int, opp: int, empty: int, black: bool
    ) -> list[InternalMove]:
        down, up = (men | kings, kings) if black else (kings, men | kings)
        jumpers = _short_jumpers(down, up, opp, empty)
        return self._jumps(jumpers, men, kings, opp, empty, black) if jumpers else []

    @staticmethod
    def _jumps(
        jumpers: int, men: int, kings: int, opp: int, empty: int, black: bool
    ) -> list[InternalMove]:
        out: list[InternalMove] = []
        crown = CROWN_ROW[Color.BLACK if black else Color.WHITE]
        for pieces, table, stop in (
            (men & jumpers, JUMPS[1 if black else 0], crown),
            (kings & jumpers, JUMPS[KING_KIND], 0),
        ):
            while pieces:
                low = pieces & -pieces
                pieces ^= low
                i = low.bit_length() - 1
                _short_jumps(i, table, opp, empty | low, stop, (i,), 0, out)
        return out

    def _steps(self, men: int, kings: int, empty: int, black: bool) -> list[InternalMove]:
        out: list[InternalMove] = []
        _short_steps(men, kings, empty, black, out)
        return out

    def _count(self, men: int, kings: int, opp: int, empty: int, black: bool) -> int:
        down, up = (men | kings, kings) if black else (kings, men | kings)
        jumpers = _short_jumpers(down, up, opp, empty)
        if jumpers:
            return len(self._jumps(jumpers, men, kings, opp, empty, black))
        return _short_step_count(down, up, empty)


class Pool(Variant):
    """American pool checkers: men capture backward too, flying kings, pieces removed at the end."""

    name = "pool"
    aliases = ("pool", "american-pool", "pool-checkers")
    pdn_game_type = 23
    repetitions_to_draw = 3
    move_limit_plies = 60
    man_moves_reset_move_limit = False
    kings_ending_draw = True

    def _captures(
        self, men: int, kings: int, opp: int, empty: int, black: bool
    ) -> list[InternalMove]:
        out: list[InternalMove] = []
        pieces = _short_jumpers(men, men, opp, empty) if men else 0
        if pieces:
            table = JUMPS[KING_KIND]
            while pieces:
                low = pieces & -pieces
                pieces ^= low
                i = low.bit_length() - 1
                _short_jumps(i, table, opp, empty | low, 0, (i,), 0, out)
        pieces = kings
        while pieces:
            low = pieces & -pieces
            pieces ^= low
            i = low.bit_length() - 1
            found: list[InternalMove] = []
            _flying_jumps(i, opp, empty | low, (i,), 0, found)
            out.extend(_distinct_captures(found) if len(found) > 1 else found)
        return out

    def _same_move(
        self, men: int, kings: int, opp: int, empty: int, path: tuple[int, ...]
    ) -> tuple[int, ...] | None:
        """The listed path of the king capture written as ``path`` with other stops, if any."""
        start = 1 << path[0]
        if not kings & start:
            return None
        found: list[InternalMove] = []
        _flying_jumps(path[0], opp, empty | start, (path[0],), 0, found)
        written = [move for move in found if move[0] == path]
        if not written:
            return None
        key = _capture_key(written[0])
        return next(move[0] for move in found if _capture_key(move) == key)

    def _steps(self, men: int, kings: int, empty: int, black: bool) -> list[InternalMove]:
        out: list[InternalMove] = []
        _short_steps(men, 0, empty, black, out)
        while kings:
            low = kings & -kings
            kings ^= low
            i = low.bit_length() - 1
            for ray in (RAYS[0][i], RAYS[1][i], RAYS[2][i], RAYS[3][i]):
                for j in ray:
                    if not empty >> j & 1:
                        break
                    out.append(((i, j), 0))
        return out

    def _count(self, men: int, kings: int, opp: int, empty: int, black: bool) -> int:
        if (men and _short_jumpers(men, men, opp, empty)) or (
            kings and _flying_capture_exists(kings, opp, empty)
        ):
            return len(self._captures(men, kings, opp, empty, black))
        count = _short_step_count(men, 0, empty) if black else _short_step_count(0, men, empty)
        while kings:
            low = kings & -kings
            kings ^= low
            i = low.bit_length() - 1
            for ray in (RAYS[0][i], RAYS[1][i], RAYS[2][i], RAYS[3][i]):
                for j in ray:
                    if not empty >> j & 1:
                        break
                    count += 1
        return count


ENGLISH = English()
POOL = Pool()
VARIANTS: dict[str, Variant] = {alias: v for v in (ENGLISH, POOL) for alias in v.aliases}


def get_variant(name: str) -> Variant:
    """The variant called ``name`` (or one of its aliases); ``ValueError`` for anything else."""
    try:
        return VARIANTS[name.strip().lower()]
    except KeyError:
        raise ValueError(f"unknown variant {name!r}: choose english or pool") from None
