"""The distinct ways a move or a position can be refused; each carries a stable ``code``."""

from __future__ import annotations

from typing import ClassVar


class RulesError(ValueError):
    """Base of every refusal by the rules. ``code`` is stable and safe to send to clients."""

    code: ClassVar[str] = "rules_error"

    def __init__(self, message: str, *, move: str | None = None, fen: str | None = None) -> None:
        super().__init__(message)
        self.move = move
        self.fen = fen


class InvalidMoveError(RulesError):
    """The move text is not move notation at all (``11-15``, ``15x24``, ``15x24x31``)."""

    code = "invalid_move"


class IllegalMoveError(RulesError):
    """The move is well formed but not legal in the position."""

    code = "illegal_move"


class CaptureRequiredError(IllegalMoveError):
    """A plain move was submitted while a capture is available; ``squares`` can capture."""

    code = "capture_required"

    def __init__(
        self,
        message: str,
        *,
        squares: tuple[int, ...],
        move: str | None = None,
        fen: str | None = None,
    ) -> None:
        super().__init__(message, move=move, fen=fen)
        self.squares = squares


class AmbiguousMoveError(RulesError):
    """A short ``start x end`` matches several capture paths; ``paths`` lists them in full."""

    code = "ambiguous_move"

    def __init__(
        self,
        message: str,
        *,
        paths: tuple[str, ...],
        move: str | None = None,
        fen: str | None = None,
    ) -> None:
        super().__init__(message, move=move, fen=fen)
        self.paths = paths


class GameOverError(RulesError):
    """A move or an ending was submitted after the game ended."""

    code = "game_over"


class InvalidFenError(RulesError):
    """The position text is not a valid PDN FEN for an 8x8 board."""

    code = "invalid_fen"
