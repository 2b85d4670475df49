"""The search's own move generation finds exactly the rules' moves."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from app.engine.movegen import (
    can_step,
    english_captures,
    flying_capturers,
    jumpers,
    king_slides,
    pool_captures,
    quiet_moves,
)
from app.rules.board import FULL
from app.rules.variants import ENGLISH, POOL, _flying_capture_exists, _short_jumpers

boards = st.tuples(st.integers(0, FULL), st.integers(0, FULL), st.integers(0, FULL), st.booleans())


def split(occupied: int, mine_mask: int, king_mask: int) -> tuple[int, int, int, int]:
    """(men, kings, opponent's pieces, empty squares) from three random masks."""
    mine = occupied & mine_mask
    kings = mine & king_mask
    return mine ^ kings, kings, occupied ^ mine, FULL ^ occupied


@settings(max_examples=3000, deadline=None)
@given(board=boards, sparse=st.integers(0, FULL))
def test_english_moves_are_the_rules_moves(board: tuple[int, int, int, bool], sparse: int) -> None:
    occupied, mine_mask, king_mask, black = board
    men, kings, opp, empty = split(occupied & (sparse | mine_mask), mine_mask, king_mask)
    down, up = (men | kings, kings) if black else (kings, men | kings)
    jumping = jumpers(down, up, opp, empty)
    assert jumping == _short_jumpers(down, up, opp, empty)
    captures = english_captures(jumping, men, kings, opp, empty, black) if jumping else []
    assert sorted(captures) == sorted(ENGLISH._captures(men, kings, opp, empty, black))
    steps = ENGLISH._steps(men, kings, empty, black)
    assert sorted(quiet_moves(down, up, empty)) == sorted(steps)
    assert can_step(down, up, empty) == bool(steps)


@settings(max_examples=1000, deadline=None)
@given(board=boards)
def test_pool_men_steps_are_the_rules_steps(board: tuple[int, int, int, bool]) -> None:
    occupied, mine_mask, king_mask, black = board
    men, _, _, empty = split(occupied, mine_mask, king_mask)
    found = quiet_moves(men, 0, empty) if black else quiet_moves(0, men, empty)
    assert sorted(found) == sorted(POOL._steps(men, 0, empty, black))


@settings(max_examples=3000, deadline=None)
@given(board=boards, sparse=st.integers(0, FULL))
def test_pool_captures_are_the_rules_captures(
    board: tuple[int, int, int, bool], sparse: int
) -> None:
    occupied, mine_mask, king_mask, black = board
    men, kings, opp, empty = split(occupied & (sparse | mine_mask), mine_mask, king_mask)
    flying = flying_capturers(kings, opp, empty)
    for i in range(32):
        if kings >> i & 1:
            assert bool(flying >> i & 1) == _flying_capture_exists(1 << i, opp, empty)
    assert flying & ~kings == 0
    jumping = jumpers(men, men, opp, empty)
    # The same moves in the same order: the search's move ordering starts from it.
    assert pool_captures(jumping, flying, opp, empty) == POOL._captures(
        men, kings, opp, empty, black
    )
    assert king_slides(kings, empty) == POOL._steps(0, kings, empty, black)
