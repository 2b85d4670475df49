"""Invariants over positions from random playouts of both variants: notation and FEN agree
with move generation."""

from __future__ import annotations

import random

import pytest

from app.rules import AmbiguousMoveError, Game, Position, RulesError, get_variant


def playout_positions(variant: str, games: int, seed: int) -> list[Position]:
    """Every position of a few random games (positions are immutable, so they can be kept)."""
    rng = random.Random(seed)
    positions = []
    for _ in range(games):
        game = Game(variant)
        while game.outcome() is None and game.ply < 150:
            positions.append(game.position)
            game.play(rng.choice(game.legal_moves()))
    return positions


@pytest.mark.parametrize("variant", ["english", "pool"])
def test_every_legal_move_reads_back_from_its_text(variant: str) -> None:
    for position in playout_positions(variant, games=12, seed=11):
        moves = position.legal_moves()
        assert len({str(m) for m in moves}) == len(moves)
        for move in moves:
            assert position.parse_move(str(move)) == move
            short = f"{move.start}{'x' if move.is_capture else '-'}{move.end}"
            try:
                assert position.parse_move(short) == move
            except AmbiguousMoveError as refused:
                assert str(move) in refused.paths


@pytest.mark.parametrize("variant", ["english", "pool"])
def test_fen_round_trips_and_repeats_the_same_moves(variant: str) -> None:
    rules = get_variant(variant)
    for position in playout_positions(variant, games=12, seed=12):
        copy = rules.position(position.fen())
        assert copy == position and copy.fen() == position.fen()
        assert copy.legal_moves() == position.legal_moves()


@pytest.mark.parametrize("variant", ["english", "pool"])
def test_a_refused_move_leaves_the_game_unchanged(variant: str) -> None:
    rng = random.Random(13)
    for _ in range(6):
        game = Game(variant)
        while game.outcome() is None and game.ply < 150:
            legal = {str(m) for m in game.legal_moves()}
            before = (game.fen(), list(game.moves), game.quiet_plies, game.outcome())
            for _ in range(3):
                text = f"{rng.randint(1, 32)}{rng.choice('-x')}{rng.randint(1, 32)}"
                if text in legal:
                    continue
                try:
                    game.play(text)
                except RulesError:
                    pass
                else:  # a short form or an x-step of a legal move: take it back
                    game = Game.replay(variant, before[1])
                assert (game.fen(), game.moves, game.quiet_plies, game.outcome()) == before
            game.play(rng.choice(game.legal_moves()))
