"""Pure game logic: no I/O, no web framework, no database.

Positions and move generation for English draughts and American pool checkers, move and FEN
notation, and the game record with its automatic endings. PDN files: ``app.rules.pdn``.
"""

from app.rules.board import Color, Square
from app.rules.errors import (
    AmbiguousMoveError,
    CaptureRequiredError,
    GameOverError,
    IllegalMoveError,
    InvalidFenError,
    InvalidMoveError,
    RulesError,
)
from app.rules.game import Game, Outcome, Result, Termination
from app.rules.moves import Move
from app.rules.position import Piece, Position
from app.rules.variants import ENGLISH, POOL, English, Pool, Variant, get_variant

__all__ = [
    "ENGLISH",
    "POOL",
    "AmbiguousMoveError",
    "CaptureRequiredError",
    "Color",
    "English",
    "Game",
    "GameOverError",
    "IllegalMoveError",
    "InvalidFenError",
    "InvalidMoveError",
    "Move",
    "Outcome",
    "Piece",
    "Pool",
    "Position",
    "Result",
    "RulesError",
    "Square",
    "Termination",
    "Variant",
    "get_variant",
]
