"""A game analysed (app/analysis/game.py): the labels of known blunders (a shot missed, a man
given away), a master game mostly unlabelled, the best move never labelled, the end of a game,
the progress, and `checkers analyse`'s lines."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from app.analysis import analyse, limits
from app.analysis.chances import Eval
from app.rules import Color, Game, IllegalMoveError
from app.rules.pdn import read_games

DATA = Path(__file__).resolve().parents[1] / "data"
BUDGET = limits(20_000)  # a tenth of a second a position: the labels below hold from here on

# Beginner's problems (tests/data/beginner.pdn): White to play and win with one shot.
SHOTS = [
    ("W:W19,27,31:B5,12,17", "19-16"),
    ("W:W18,26,30:B10,11,19", "18-14"),
    ("W:W19,23,26,32:B10,12,14,27", "19-15"),
]


@pytest.mark.parametrize(("fen", "shot"), SHOTS)
def test_a_shot_missed_is_a_blunder_and_the_shot_costs_nothing(fen: str, shot: str) -> None:
    for move in Game("english", fen).legal_move_texts():
        analysis = analyse("english", [move], fen, BUDGET)
        assert analysis.start.value.win_in is not None  # White wins by force
        (ply,) = analysis.plies
        assert (ply.best, ply.mover) == (shot, Color.WHITE)
        assert ply.label == (None if move == shot else "blunder"), ply.line()


def test_a_man_given_away_for_nothing_is_a_blunder() -> None:
    # After 11-15 23-19 8-11 22-17, 12-16 lets White take a man (19x12) for nothing.
    opening = ["11-15", "23-19", "8-11", "22-17"]
    analysis = analyse("english", [*opening, "12-16", "19x12"], None, BUDGET)
    given = analysis.plies[4]
    assert (given.move, given.mover, given.label) == ("12-16", Color.BLACK, "blunder")
    assert given.value.cp <= -60  # White is a man up, less what Black has in return
    assert analysis.plies[5].label is None  # taking it is right
    assert [p.label for p in analysis.plies[:4]] == [None] * 4


def test_a_master_game_is_mostly_unlabelled() -> None:
    with (DATA / "OCA_2.0.pdn").open() as handle:
        record = next(read_games(handle))
    analysis = analyse("english", record.moves, record.fen, BUDGET)
    assert len(analysis.plies) == len(record.moves) == 44
    costly = [p for p in analysis.plies if p.label in ("mistake", "blunder")]
    assert len(costly) <= 4, [p.line() for p in costly]
    for colour in (Color.BLACK, Color.WHITE):
        accuracy = analysis.accuracy(colour)
        assert accuracy is not None and 70 <= accuracy <= 100


def test_a_game_that_ends_is_valued_as_won() -> None:
    # Black to move has one capture left, after which White has no move.
    analysis = analyse("english", ["5x14"], "B:W9:B5", BUDGET)
    (ply,) = analysis.plies
    assert ply.value == Eval(win_in=0, black_wins=True) and ply.value.text() == "#0"
    assert ply.best == "5x14" and ply.label is None


def test_progress_counts_every_position_and_an_illegal_move_is_refused() -> None:
    seen: list[tuple[int, int]] = []
    analyse("english", ["11-15", "23-19"], None, BUDGET, progress=lambda *a: seen.append(a))
    assert seen == [(1, 3), (2, 3), (3, 3)]
    with pytest.raises(IllegalMoveError):
        analyse("english", ["11-15", "11-15"], None, BUDGET)


def test_the_budget_is_bounded() -> None:
    assert limits().nodes == 100_000
    assert limits(movetime_ms=200).movetime_ms == 200
    for bad in ({"nodes": 10}, {"nodes": 10**9}, {"movetime_ms": 0}):
        with pytest.raises(ValueError, match="must be"):
            limits(**bad)


def test_checkers_analyse_prints_a_line_a_ply_and_the_accuracy(tmp_path: Path) -> None:
    game = tmp_path / "game.pdn"
    game.write_text('[Event "A man given away"]\n1. 11-15 23-19 2. 8-11 22-17 3. 12-16 19x12 *\n')
    done = subprocess.run(
        [sys.executable, "-m", "app.cli", "analyse", str(game), "--nodes", "20000"],
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert len(lines) == 7
    fields = [line.split() for line in lines[:6]]
    assert [f[0] for f in fields] == ["1", "2", "3", "4", "5", "6"]
    assert [f[1] for f in fields] == ["11-15", "23-19", "8-11", "22-17", "12-16", "19x12"]
    assert fields[4][4] == "blunder" and fields[5][3] == "19x12"
    assert lines[6].startswith("accuracy black=") and " white=" in lines[6]
    refused = subprocess.run(
        [sys.executable, "-m", "app.cli", "analyse", str(game), "--nodes", "5"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert refused.returncode == 2 and "nodes must be" in refused.stderr
