"""Refused moves explained to the player in plain words (the codes stay those of the rules):
what to play instead, never the position's FEN."""

from __future__ import annotations

from app.rules import (
    AmbiguousMoveError,
    CaptureRequiredError,
    Game,
    GameOverError,
    IllegalMoveError,
    InvalidMoveError,
    RulesError,
)

NOT_YOUR_TURN = "It is not your move."
STALE_PLY = "The position changed; your board is being updated."
GAME_OVER = "The game is over."
_COUNTS = {2: "two", 3: "three", 4: "four", 5: "five", 6: "six"}


def either(options: list[str]) -> str:
    """`a`, `a or b`, `a, b or c`."""
    if len(options) <= 1:
        return "".join(options)
    return ", ".join(options[:-1]) + " or " + options[-1]


def refusal(exc: RulesError, text: str, game: Game) -> str:
    """Why the rules refused `text` in `game` (still at the position it was refused in)."""
    move = " ".join(text.split())
    if isinstance(exc, CaptureRequiredError):
        return f"You must capture: {either(game.legal_move_texts())}."
    if isinstance(exc, AmbiguousMoveError):
        ways = _COUNTS.get(len(exc.paths), str(len(exc.paths)))
        return f"{move} can be played {ways} ways: write {either(list(exc.paths))}."
    if isinstance(exc, IllegalMoveError):
        return f"{move} is not a legal move here."
    if isinstance(exc, InvalidMoveError):
        return f"{move!r} is not a move: write one like 11-15, or 15x24 for a capture."
    if isinstance(exc, GameOverError):
        return GAME_OVER
    return "That move cannot be played here."
