"""Evaluations as winning chances, labels and accuracy (app/analysis/chances.py)."""

from __future__ import annotations

import pytest

from app.analysis import chances
from app.analysis.chances import Eval, from_score, label, over, wdl
from app.rules import Color


def test_a_search_score_is_read_from_blacks_side() -> None:
    assert from_score(120, Color.BLACK) == Eval(120)
    assert from_score(120, Color.WHITE) == Eval(-120)
    assert from_score(-35, Color.WHITE) == Eval(35)
    # A forced win 5 plies away for the side to move: three of the winner's moves.
    assert from_score(30_000 - 5, Color.WHITE) == Eval(win_in=3, black_wins=False)
    assert from_score(-(30_000 - 4), Color.WHITE) == Eval(win_in=2, black_wins=True)
    assert over(Color.WHITE) == Eval(win_in=0, black_wins=False)
    assert over(None) == Eval(0)


@pytest.mark.parametrize(
    ("value", "text"),
    [(Eval(35), "+35"), (Eval(-120), "-120"), (Eval(0), "0"), (Eval(win_in=3), "#3")]
    + [(Eval(win_in=2, black_wins=False), "#-2"), (over(Color.BLACK), "#0")],
)
def test_an_evaluation_reads_as_checkers_analyse_prints_it(value: Eval, text: str) -> None:
    assert value.text() == text


def test_chances_run_from_white_winning_to_black_winning() -> None:
    assert chances.chances(0) == 0
    assert chances.chances(100) == pytest.approx(-chances.chances(-100))
    assert 0 < chances.chances(100) < chances.chances(300) < 1
    assert chances.chances(1_000_000) == pytest.approx(1.0)
    assert Eval(win_in=4).chances() == 1.0 and Eval(win_in=4, black_wins=False).chances() == -1
    assert Eval(200).for_side(Color.WHITE) == -Eval(200).for_side(Color.BLACK)


@pytest.mark.parametrize(
    ("before", "after", "expected"),
    [
        (0.0, -0.05, None),
        (0.0, -0.1, "inaccuracy"),
        (0.2, 0.0, "mistake"),
        (0.5, 0.2, "blunder"),
        (1.0, -1.0, "blunder"),
        (-0.5, -0.2, None),  # better than it was: no cost
    ],
)
def test_a_move_is_labelled_by_the_fall_of_its_movers_chances(
    before: float, after: float, expected: str | None
) -> None:
    assert label(before, after) == expected


def test_accuracy_is_full_for_moves_that_lose_nothing_and_falls_with_each_loss() -> None:
    assert chances.accuracy([(0.1, 0.1), (0.0, 0.05)]) == pytest.approx(100.0, abs=0.5)
    sloppy = chances.accuracy([(0.1, 0.0), (0.0, -0.1)])
    poor = chances.accuracy([(0.5, -0.5), (0.0, -0.1)])
    assert sloppy is not None and poor is not None and 0 <= poor < sloppy < 100
    assert chances.accuracy([]) is None


def test_win_draw_and_loss_add_up_and_follow_the_evaluation() -> None:
    for cp in (-900, -150, 0, 40, 300):
        w, d, lo = wdl(Eval(cp))
        assert w + d + lo == 1000 and min(w, d, lo) >= 0
    level = wdl(Eval(0))
    assert level[0] == level[2] and level[1] > level[0]  # checkers is drawish
    assert wdl(Eval(300))[0] > wdl(Eval(100))[0] > wdl(Eval(-100))[0]
    assert wdl(Eval(win_in=3, black_wins=False)) == (0, 0, 1000)
