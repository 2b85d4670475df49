"""Shared test tools for the rules: deterministic quiet play for draw-rule tests."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable

from app.rules import Game, Move


def quiet_walk(game: Game, plies: int, allow: Callable[[Game, Move], bool] | None = None) -> None:
    """Play ``plies`` non-capturing moves that leave the opponent no capture, preferring the
    least-seen resulting positions, so draw rules other than the one under test stay away."""
    seen: Counter[str] = Counter({game.fen(): 1})
    for _ in range(plies):
        assert game.outcome() is None, f"ended early: {game.outcome()} at ply {game.ply}"
        options = []
        for move in game.legal_moves():
            after = game.position.play(move)
            if move.is_capture or any(m.is_capture for m in after.legal_moves()):
                continue
            if allow is not None and not allow(game, move):
                continue
            options.append((seen[after.fen()], str(move), move))
        assert options, f"no quiet move in {game.fen()}"
        move = min(options, key=lambda option: option[:2])[2]
        game.play(move)
        seen[game.fen()] += 1


def king_move(game: Game, move: Move) -> bool:
    """Whether ``move`` is made by a king (for walks that must not move men)."""
    piece = game.position.piece_at(move.start)
    return piece is not None and piece.king
