"""``checkers best``: its last line is a legal move in the notation of ``checkers moves``; bad
arguments are a one-line error with exit status 2."""

from __future__ import annotations

import subprocess
import sys

import pytest

MIDDLE = "B:W18,24,27,28,K10,K15:B12,16,20,K22,K25,K29"
POOL_CAPTURE = "W:WK32,25:B18,10,15,11"  # a flying king with two ways to take three


def checkers(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "app.cli", *args],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def legal_moves(variant: str, fen: str | None) -> list[str]:
    run = checkers("moves", "--variant", variant, *(["--fen", fen] if fen else []))
    assert run.returncode == 0
    return run.stdout.split()


@pytest.mark.parametrize(
    ("variant", "fen", "strength"),
    [
        ("english", None, ["--level", "8"]),
        ("english", MIDDLE, ["--level", "1"]),
        ("english", MIDDLE, ["--movetime", "100"]),
        ("pool", None, ["--level", "3"]),
        ("pool", POOL_CAPTURE, ["--level", "6"]),
        ("english", "W:W9:B5", []),  # a single legal move
    ],
)
def test_the_last_line_is_a_legal_move(variant: str, fen: str | None, strength: list[str]) -> None:
    run = checkers("best", "--variant", variant, *(["--fen", fen] if fen else []), *strength)
    assert run.returncode == 0, run.stderr
    lines = run.stdout.splitlines()
    assert lines[-1] in legal_moves(variant, fen)
    assert all(line.startswith("info ") for line in lines[:-1])


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--level", "9"], "level must be 1 to 8"),
        (["--level", "0"], "level must be 1 to 8"),
        (["--level", "two"], "invalid int value"),
        (["--movetime", "0"], "--movetime must be 1 to"),
        (["--level", "3", "--movetime", "100"], "not allowed with argument"),
        (["--variant", "chess"], "unknown variant 'chess'"),
        (["--fen", "B:W33:B1"], "invalid FEN"),
        (["--fen", "W:W29:B22,25"], "no legal move"),
    ],
)
def test_bad_arguments_are_a_one_line_error(args: list[str], message: str) -> None:
    run = checkers("best", *args)
    assert run.returncode == 2
    assert run.stdout == ""
    assert run.stderr.count("\n") == 1 and message in run.stderr


@pytest.mark.parametrize(("level", "depth"), [(5, 6), (6, 8)])
def test_a_level_searches_as_the_server_plays_it(level: int, depth: int) -> None:
    """Its depth cap too, not only its movetime: the CLI plays the level the server plays."""
    run = checkers("best", "--fen", MIDDLE, "--level", str(level))
    assert run.returncode == 0, run.stderr
    info = run.stdout.splitlines()[-2].split()
    assert 1 <= int(info[info.index("depth") + 1]) <= depth  # never past the level's cap
