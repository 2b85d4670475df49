"""The engine's search: every move it returns is legal, levels weaken it honestly, repetition
on the search path is a draw, bad input is a clear error."""

from __future__ import annotations

import pickle
import random
import time
from dataclasses import replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from app.engine import LEVELS, Limits, SearchResult, level_limits, search, search_position
from app.engine.evaluate import (
    KING_VALUE,
    LAZY_MARGIN,
    MAN,
    make_evaluator,
    make_positional,
    material,
)
from app.rules import Game, InvalidFenError, Position, get_variant


def random_position(variant: str, seed: int, plies: int) -> tuple[Position, list[Position]]:
    """A position reached by random play (with the positions before it), never a finished one."""
    rng = random.Random(seed)
    game = Game(variant)
    history: list[Position] = []
    for _ in range(plies):
        moves = game.legal_moves()
        if not moves:
            break
        before = game.position
        game.play(rng.choice(moves))
        if game.outcome() is not None:
            game = Game(variant, before.fen())
            break
        history.append(before)
    return game.position, history


def assert_legal_line(position: Position, result: SearchResult) -> None:
    assert result.move in position.legal_move_texts()
    assert result.pv[0] == result.move
    for text in result.pv:  # the principal variation is a playable line
        assert text in position.legal_move_texts()
        position = position.play(text)


@settings(max_examples=60, deadline=None)
@given(
    variant=st.sampled_from(["english", "pool"]),
    seed=st.integers(0, 10**6),
    plies=st.integers(0, 90),
    level=st.sampled_from(sorted(LEVELS)),
)
def test_every_move_returned_is_legal(variant: str, seed: int, plies: int, level: int) -> None:
    position, history = random_position(variant, seed, plies)
    if not position.has_legal_moves():
        return
    # The level's own settings, bounded by nodes instead of time so the test is the same on any
    # machine.
    limits = replace(
        level_limits(level, seed=seed), movetime_ms=None, nodes=LEVELS[level].nodes or 3_000
    )
    result = search_position(position, limits, history)
    assert_legal_line(position, result)


def test_search_takes_and_returns_picklable_values() -> None:
    limits = Limits(nodes=2_000, seed=1)
    result = search("B:W18,24,27,28,K10,K15:B12,16,20,K22,K25,K29", "english", limits)
    assert pickle.loads(pickle.dumps(limits)) == limits
    assert pickle.loads(pickle.dumps(result)) == result
    assert result.depth >= 1 and result.nodes > 0 and not result.book


def test_a_cpu_time_budget_is_counted_on_the_process_clock(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A measurement on a busy machine counts the movetime in CPU time: the search reads the
    process's clock, not the wall clock (here a process clock that runs a second per reading)."""
    readings = iter(range(1_000_000))
    monkeypatch.setattr(time, "process_time", lambda: float(next(readings)))
    position, history = random_position("english", 5, 20)
    on_cpu = search_position(position, Limits(movetime_ms=1_500, cpu_time=True), history)
    assert_legal_line(position, on_cpu)
    # Stopped at its second budget check (every 1,024 nodes), past 1.5 "seconds", and timed by
    # the same clock: whole readings.
    assert on_cpu.nodes <= 2_048 and on_cpu.millis % 1_000 == 0
    on_wall = search_position(position, Limits(movetime_ms=1_500, depth=6), history)
    assert on_wall.depth == 6  # the wall clock was left alone


@pytest.mark.parametrize("level", [1, 2, 3, 4])
def test_weak_levels_stop_at_their_node_cap(level: int) -> None:
    cap = LEVELS[level].nodes
    assert cap is not None
    limits = replace(level_limits(level, seed=3), movetime_ms=None)
    position, _ = random_position("english", 11, 30)
    assert search_position(position, limits).nodes <= cap


def test_weak_levels_vary_their_moves_and_strong_search_does_not() -> None:
    position, _ = random_position("english", 5, 20)
    weak = {
        search_position(position, replace(level_limits(1, seed=s), movetime_ms=None)).move
        for s in range(30)
    }
    strong = {search_position(position, Limits(depth=5, seed=s)).move for s in range(3)}
    assert len(weak) >= 2 and len(strong) == 1


def test_level_numbers_outside_one_to_eight_are_refused() -> None:
    for bad in (0, 9, -1):
        with pytest.raises(ValueError, match="level must be 1 to 8"):
            level_limits(bad)
    assert [level_limits(n).movetime_ms for n in range(1, 9)] == [
        50,
        100,
        150,
        200,
        300,
        400,
        500,
        1000,
    ]
    assert [level_limits(n).nodes for n in range(1, 5)] == [50, 120, 400, 1_200]
    assert all(level_limits(n).book and not level_limits(n).simple for n in range(5, 9))
    assert [level_limits(n).depth for n in range(5, 9)] == [6, 8, 10, None]


def test_going_back_to_an_earlier_position_is_a_draw_to_the_search() -> None:
    # Two black kings against one white king: every move keeps Black winning, so the move the
    # search likes best scores above a draw; once the position it leads to has already occurred
    # in the game, that move is a draw (repetition) and another must be chosen.
    english = get_variant("english")
    position = english.position("B:WK32:BK1,K3")
    limits = Limits(depth=6)
    first = search_position(position, limits)
    assert first.score > 0
    history = [position.play(first.move), position]
    again = search_position(position, limits, history)
    assert again.move != first.move and again.score > 0
    by_text = search(position.fen(), "english", limits, [p.fen() for p in history])
    assert by_text.move == again.move


def test_bad_input_is_a_clear_error() -> None:
    with pytest.raises(InvalidFenError):
        search("X:Wfoo", "english", Limits(nodes=100))
    with pytest.raises(ValueError, match="unknown variant"):
        search(None, "chess", Limits(nodes=100))
    with pytest.raises(ValueError, match="no legal move"):
        search("W:W29:B22,25", "english", Limits(nodes=100))


def _turned(mask: int) -> int:
    """The squares of ``mask`` with the board turned half a round (s -> 33 - s)."""
    return int(f"{mask:032b}"[::-1], 2)


@pytest.mark.parametrize("variant", ["english", "pool"])
@pytest.mark.parametrize("simple", [False, True])
def test_the_evaluation_is_the_same_for_both_colours(variant: str, simple: bool) -> None:
    evaluate = make_evaluator(variant, simple=simple)
    for seed in range(40):
        position, _ = random_position(variant, seed, 10 + seed)
        bm, bk, wm, wk = (
            position.black_men,
            position.black_kings,
            position.white_men,
            position.white_kings,
        )
        assert evaluate(bm, bk, wm, wk) == -evaluate(
            _turned(wm), _turned(wk), _turned(bm), _turned(bk)
        )


def _material(variant: str, bm: int, bk: int, wm: int, wk: int) -> int:
    """The evaluation's material term for Black, trading down included."""
    nbm, nbk, nwm, nwk = bm.bit_count(), bk.bit_count(), wm.bit_count(), wk.bit_count()
    lead = MAN * (nbm - nwm) + KING_VALUE[variant] * (nbk - nwk)
    shown = abs(lead) * (24 - nbm - nbk - nwm - nwk) // 48
    return lead + shown if lead > 0 else lead - shown if lead < 0 else 0


@pytest.mark.parametrize("variant", ["english", "pool"])
def test_the_positional_part_finishes_the_evaluation_from_its_material(variant: str) -> None:
    # The search's leaf loop does the lazy test itself and calls the positional part.
    evaluate, positional = make_evaluator(variant), make_positional(variant)
    for seed in range(40):
        position, _ = random_position(variant, seed, 10 + seed)
        bm, bk = position.black_men, position.black_kings
        wm, wk = position.white_men, position.white_kings
        lead = material(bm, bk, wm, wk, KING_VALUE[variant])
        assert lead == _material(variant, bm, bk, wm, wk)
        assert material(wm, wk, bm, bk, KING_VALUE[variant]) == -lead
        total = (bm | bk | wm | wk).bit_count()
        assert positional(bm, bk, wm, wk, lead, total) == evaluate(bm, bk, wm, wk)
        simple, simple_positional = (
            make_evaluator(variant, simple=True),
            make_positional(variant, simple=True),
        )
        assert simple_positional(bm, bk, wm, wk, lead, total) == simple(bm, bk, wm, wk)


@pytest.mark.parametrize("variant", ["english", "pool"])
def test_an_evaluation_far_outside_the_window_stops_at_the_material(variant: str) -> None:
    evaluate = make_evaluator(variant)
    for seed in range(40):
        position, _ = random_position(variant, seed, 10 + seed)
        pieces = (
            position.black_men,
            position.black_kings,
            position.white_men,
            position.white_kings,
        )
        exact = evaluate(*pieces)
        material = _material(variant, *pieces)
        # The material less than the margin from the window: the exact score.
        assert evaluate(*pieces, material + LAZY_MARGIN - 1, material + LAZY_MARGIN + 50) == exact
        assert evaluate(*pieces, material - LAZY_MARGIN - 50, material - LAZY_MARGIN + 1) == exact
        # The material the margin or more below the window: an upper bound, at or below it.
        lo = material + LAZY_MARGIN
        assert evaluate(*pieces, lo, lo + 50) == material + LAZY_MARGIN <= lo
        # The margin or more above it: a lower bound, at or above it.
        hi = material - LAZY_MARGIN
        assert evaluate(*pieces, hi - 50, hi) == material - LAZY_MARGIN >= hi
