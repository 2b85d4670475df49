"""English move generation agrees with pydraughts on positions from random playouts."""

from __future__ import annotations

import random

import pytest
from draughts import Board
from draughts import Move as DraughtsMove

from app.rules import Game, Termination


def pydraughts_moves(board: Board) -> list[str]:
    return sorted(
        ("x" if move.captures else "-").join(map(str, move.steps_move))
        for move in board.legal_moves()
    )


@pytest.mark.thorough
def test_english_legal_moves_match_pydraughts_on_random_playouts() -> None:
    rng = random.Random(2026)
    positions = 0
    while positions < 2000:
        game = Game("english")
        board = Board(variant="english")
        while game.outcome() is None:
            ours = sorted(str(move) for move in game.legal_moves())
            assert ours == pydraughts_moves(board), game.fen()
            positions += 1
            move = rng.choice(game.legal_moves())
            game.play(move)
            board.push(DraughtsMove(board, steps_move=list(move.path)))
        outcome = game.outcome()
        if outcome is not None and outcome.termination is Termination.NO_MOVES:
            assert pydraughts_moves(board) == [], game.fen()
    assert positions >= 2000
