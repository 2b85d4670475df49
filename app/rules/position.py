"""An immutable position: four bitboards, the side to move, and the variant whose rules apply."""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

from app.rules.board import BETWEEN, CROWN_ROW, FULL, Color, Square
from app.rules.errors import (
    AmbiguousMoveError,
    CaptureRequiredError,
    IllegalMoveError,
    InvalidMoveError,
)
from app.rules.fen import Placement, format_fen
from app.rules.moves import Move, parse_squares

if TYPE_CHECKING:
    from app.rules.variants import InternalMove, Variant

_SQUARE_TEXT = tuple(str(square) for square in range(1, 33))

PositionKey = tuple[int, int, int, int, bool]
"""What makes two positions the same for repetition: pieces per colour and kind, side to move."""


class Piece(NamedTuple):
    """What stands on a square."""

    color: Color
    king: bool


def _is_subsequence(short: tuple[int, ...], long: tuple[int, ...]) -> bool:
    rest = iter(long)
    return all(square in rest for square in short)


class Position:
    """A position of one variant. Immutable: ``play`` returns a new position."""

    __slots__ = (
        "variant",
        "turn",
        "black_men",
        "black_kings",
        "white_men",
        "white_kings",
        "_moves",
    )

    def __init__(
        self,
        variant: Variant,
        turn: Color,
        black_men: int,
        black_kings: int,
        white_men: int,
        white_kings: int,
    ) -> None:
        self.variant = variant
        self.turn = turn
        self.black_men = black_men
        self.black_kings = black_kings
        self.white_men = white_men
        self.white_kings = white_kings
        self._moves: list[InternalMove] | None = None

    # -- reading the position ------------------------------------------------------------------

    def fen(self) -> str:
        return format_fen(
            Placement(self.turn, self.black_men, self.black_kings, self.white_men, self.white_kings)
        )

    def key(self) -> PositionKey:
        return (
            self.black_men,
            self.black_kings,
            self.white_men,
            self.white_kings,
            self.turn is Color.BLACK,
        )

    def piece_at(self, square: Square) -> Piece | None:
        if not 1 <= square <= 32:
            raise ValueError(f"squares are numbered 1 to 32, not {square}")
        bit = 1 << (square - 1)
        if (self.black_men | self.black_kings) & bit:
            return Piece(Color.BLACK, bool(self.black_kings & bit))
        if (self.white_men | self.white_kings) & bit:
            return Piece(Color.WHITE, bool(self.white_kings & bit))
        return None

    def count(self, color: Color, *, kings: bool | None = None) -> int:
        """How many pieces ``color`` has (only kings or only men when ``kings`` is given)."""
        men, kings_ = (
            (self.black_men, self.black_kings)
            if color is Color.BLACK
            else (self.white_men, self.white_kings)
        )
        if kings is None:
            return (men | kings_).bit_count()
        return (kings_ if kings else men).bit_count()

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, Position)
            and self.variant.name == other.variant.name
            and self.key() == other.key()
        )

    def __hash__(self) -> int:
        return hash((self.variant.name, self.key()))

    def __repr__(self) -> str:
        return f"<Position {self.variant.name} {self.fen()}>"

    # -- moves -----------------------------------------------------------------------------------

    def _sides(self) -> tuple[int, int, int, int, bool]:
        """(own men, own kings, opponent pieces, empty squares, black to move)."""
        black = self.turn is Color.BLACK
        occupied = self.black_men | self.black_kings | self.white_men | self.white_kings
        if black:
            return (
                self.black_men,
                self.black_kings,
                self.white_men | self.white_kings,
                FULL ^ occupied,
                True,
            )
        return (
            self.white_men,
            self.white_kings,
            self.black_men | self.black_kings,
            FULL ^ occupied,
            False,
        )

    def _internal_moves(self) -> list[InternalMove]:
        if self._moves is None:
            self._moves = self.variant._generate(*self._sides())
        return self._moves

    def _public(self, internal: InternalMove) -> Move:
        path, captured = internal
        if not captured:
            return Move(tuple(i + 1 for i in path))
        order = tuple(
            (BETWEEN[a][b] & captured).bit_length() for a, b in zip(path, path[1:], strict=False)
        )
        return Move(tuple(i + 1 for i in path), order)

    def legal_moves(self) -> list[Move]:
        return [self._public(m) for m in self._internal_moves()]

    def legal_move_texts(self) -> list[str]:
        """``str(move)`` of each legal move, in the same order, without building the moves."""
        return [
            ("x" if captured else "-").join([_SQUARE_TEXT[i] for i in path])
            for path, captured in self._internal_moves()
        ]

    def has_legal_moves(self) -> bool:
        return bool(self._internal_moves())

    def parse_move(self, text: str) -> Move:
        """The legal move that ``text`` names; full paths, or ``start x end`` when unambiguous."""
        return self._public(self._find(text))

    def _find(self, text: str) -> InternalMove:
        try:
            wanted = tuple(s - 1 for s in parse_squares(text))
        except InvalidMoveError as exc:
            fen = self.fen()
            raise InvalidMoveError(
                f"invalid move {text!r} in {fen}: {exc}", move=text, fen=fen
            ) from None
        moves = self._internal_moves()
        for move in moves:
            if move[0] == wanted:
                return move
        candidates = [
            m
            for m in moves
            if m[0][0] == wanted[0] and m[0][-1] == wanted[-1] and _is_subsequence(wanted, m[0])
        ]
        if not candidates and moves and moves[0][1]:
            listed = self.variant._same_move(*self._sides()[:4], wanted)
            candidates = [m for m in moves if m[0] == listed]
        if len(candidates) == 1:
            return candidates[0]
        fen = self.fen()
        if candidates:
            paths = tuple(sorted(str(self._public(m)) for m in candidates))
            raise AmbiguousMoveError(
                f"ambiguous move {text!r} in {fen}: write the full path, one of {', '.join(paths)}",
                paths=paths,
                move=text,
                fen=fen,
            )
        men, kings, _, empty, black = self._sides()
        if (
            moves
            and moves[0][1]
            and any(step[0] == wanted for step in self.variant._steps(men, kings, empty, black))
        ):
            squares = tuple(sorted({m[0][0] + 1 for m in moves}))
            raise CaptureRequiredError(
                f"capture required: {text!r} in {fen} ignores the capture available from "
                f"{'square' if len(squares) == 1 else 'squares'} {', '.join(map(str, squares))}",
                squares=squares,
                move=text,
                fen=fen,
            )
        own = self.piece_at(wanted[0] + 1)
        longer = [str(self._public(m)) for m in moves if m[0][: len(wanted)] == wanted]
        if own is None or own.color is not self.turn:
            reason = f"no {self.turn.value} piece on {wanted[0] + 1}"
        elif longer:
            reason = f"a capture must be completed ({', '.join(sorted(longer))})"
        else:
            reason = "not a legal move here"
        raise IllegalMoveError(f"illegal move {text!r} in {fen}: {reason}", move=text, fen=fen)

    def _known(self, text: str) -> InternalMove | None:
        """The move a full path names when another server already checked it legal: its
        captures read off the board (the opponent's piece between each two stops), no legal
        move generated. None when the path does not fit this position: no piece of the side to
        move on its first square, its last square taken, or not one capture per hop of a
        capture (`x`) and none in a plain move."""
        path = tuple(s - 1 for s in parse_squares(text))
        men, kings, opp, empty, _ = self._sides()
        source, target = 1 << path[0], 1 << path[-1]
        if not (men | kings) & source or not (empty | source) & target:
            return None
        captured = 0
        for a, b in zip(path, path[1:], strict=False):
            hop = BETWEEN[a][b] & opp
            if hop & (hop - 1) or hop & captured:
                return None  # two pieces jumped at once, or one twice
            captured |= hop
        jumps = captured.bit_count()
        if ("x" in text and jumps != len(path) - 1) or ("x" not in text and jumps):
            return None
        return path, captured

    def play(self, move: Move | str) -> Position:
        """The position after ``move`` (move text or a ``Move``), which must be legal here."""
        return self._apply(self._find(move if isinstance(move, str) else str(move)))

    def _apply(self, internal: InternalMove) -> Position:
        path, captured = internal
        source, target = 1 << path[0], 1 << path[-1]
        black = self.turn is Color.BLACK
        if black:
            men, kings, opp_men, opp_kings = (
                self.black_men,
                self.black_kings,
                self.white_men,
                self.white_kings,
            )
        else:
            men, kings, opp_men, opp_kings = (
                self.white_men,
                self.white_kings,
                self.black_men,
                self.black_kings,
            )
        if men & source:
            men ^= source
            if target & CROWN_ROW[self.turn]:
                kings |= target
            else:
                men |= target
        else:
            kings = kings ^ source ^ target
        if captured:
            opp_men &= ~captured
            opp_kings &= ~captured
        if black:
            return Position(self.variant, Color.WHITE, men, kings, opp_men, opp_kings)
        return Position(self.variant, Color.BLACK, opp_men, opp_kings, men, kings)
