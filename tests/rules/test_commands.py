"""The ``checkers`` rules commands, run as a real process: outputs other tools parse."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

DATA = Path(__file__).parent.parent / "data"
QUIRKS = DATA / "quirks" / "strict_reader.pdn"


def checkers(*args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "app.cli", *args],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_perft_prints_the_leaf_count_last() -> None:
    run = checkers("perft", "5")
    assert run.returncode == 0 and run.stdout.splitlines()[-1] == "7361"
    pool = checkers("perft", "--variant", "pool", "5")
    assert pool.stdout.splitlines()[-1] == "7482"


def test_perft_divide_lists_first_moves_then_the_total() -> None:
    run = checkers("perft", "--divide", "--fen", "B:W21-32:B1-12", "3")
    lines = run.stdout.splitlines()
    assert lines[-1] == "302"
    assert lines[:-1][0] == "10-14 40" and len(lines) == 8


def test_moves_prints_full_paths_sorted_as_strings() -> None:
    run = checkers("moves")
    assert run.stdout.split() == ["10-14", "10-15", "11-15", "11-16", "12-16", "9-13", "9-14"]
    ambiguous = checkers("moves", "--fen", "W:W30:B10,11,17,18,25,26")
    assert ambiguous.stdout == "30x21x14x7\n30x23x14x7\n"
    assert checkers("moves", "--fen", "W:W29:B22,25").stdout == ""


def test_moves_batch_prints_one_line_per_position() -> None:
    stdin = "B:W15,22:B11\nW:W29:B22,25\nB:W32:BK18\n"
    run = checkers("moves", "--variant", "pool", "--batch", stdin=stdin)
    assert run.returncode == 0
    lines = run.stdout.split("\n")
    assert lines[0] == "11x18x25" and lines[1] == ""
    assert lines[2].split() == sorted(lines[2].split()) and len(lines[2].split()) == 12


def test_bad_fen_or_argument_is_a_one_line_error_with_status_2() -> None:
    cases = (
        ["moves", "--fen", "Z:W1"],
        ["perft", "--variant", "chess", "1"],
        ["perft", "-1"],
        ["perft", "31"],
        ["perft", "99999999999999999999"],  # overflowed the recursion before
        ["perft", "--fen", "B:W1-33", "1"],
        ["moves", "--fen", ""],
        ["moves", "--fen", "B:W5:B5"],
        ["perft"],
        ["perft", "deep"],
        ["replay", "/nonexistent/games.pdn"],
        # Files are checked before any game is reported: no partial output, status 2.
        ["replay", str(DATA / "goulds.pdn"), "/nonexistent/games.pdn"],
        ["replay", str(DATA / "goulds.pdn"), str(DATA)],
    )
    for args in cases:
        run = checkers(*args)
        assert run.returncode == 2, args
        assert run.stdout == "" and len(run.stderr.strip().splitlines()) == 1, run.stderr


def test_replay_checks_every_game_and_summarises() -> None:
    files = [str(DATA / "OCA_2.0.pdn"), str(DATA / "inferno.pdn"), str(DATA / "goulds.pdn")]
    run = checkers("replay", *files)
    assert run.returncode == 0
    assert (
        run.stdout.splitlines()[-1]
        == "games=373 moves=5586 illegal=0 unreadable=0 past_draw=0 warnings=0"
    )


def test_replay_reports_illegal_and_unreadable_games(tmp_path: Path) -> None:
    pdn = tmp_path / "mixed.pdn"
    pdn.write_text(
        '[Event "Bad move"]\n1. 11-15 23-19 2. 15-11 *\n\n'
        '[Event "Good"]\n1. 11-15 23-19 *\n\n'
        '[Event "Other game"]\n[GameType "25"]\n1. 11-15 *\n'
    )
    run = checkers("replay", str(pdn), str(DATA / "DUTCH96H.pdn"))
    assert run.returncode == 1
    lines = run.stdout.splitlines()
    assert lines[0].startswith(f"{pdn}: game 1 [Bad move]: illegal at ply 3 '15-11'")
    assert "game 3 [Other game]: unreadable: GameType '25'" in lines[1]
    assert lines[-1] == "games=16 moves=4 illegal=1 unreadable=14 past_draw=0 warnings=0"


def test_moves_batch_turns_undecodable_stdin_into_a_bad_fen_error() -> None:
    run = subprocess.run(
        [sys.executable, "-m", "app.cli", "moves", "--batch"],
        input=b"B:W15,22:B11\n\xff\xfe\n",
        capture_output=True,
        timeout=60,
        check=False,
        env={**os.environ, "PYTHONIOENCODING": "utf-8:strict"},
    )
    assert run.returncode == 2 and run.stdout == b"11x18x25\n"
    assert run.stderr.decode().count("\n") == 1 and "stdin line 2" in run.stderr.decode()


def test_replay_reads_files_with_a_byte_order_mark_and_crlf(tmp_path: Path) -> None:
    pdn = tmp_path / "bom.pdn"
    pdn.write_bytes(b'\xef\xbb\xbf[Event "BOM"]\r\n1. 11-15 23-19 *\r\n')
    run = checkers("replay", str(pdn))
    assert (
        run.returncode == 0
        and run.stdout == "games=1 moves=2 illegal=0 unreadable=0 past_draw=0 warnings=0\n"
    )


def test_replay_reads_real_records_as_they_are_and_warns() -> None:
    """A short capture the next moves make clear, a remark glued to a move, a game played on
    past an automatic draw (claim rules): each is kept, with a warning naming game and line."""
    run = checkers("replay", str(QUIRKS))
    assert run.returncode == 0, run.stdout
    lines = run.stdout.splitlines()
    assert lines[-1] == "games=3 moves=29 illegal=0 unreadable=0 past_draw=1 warnings=3"
    short, glued, past = lines[:-1]
    assert short.startswith(f"{QUIRKS}: game 1 [Short capture, two paths] line 5: warning: ")
    assert "'10x26'" in short and "10x17x26" in short
    assert glued.startswith(f"{QUIRKS}: game 2 [Remark glued to a move] line 12: warning: ")
    assert "line 16" in glued and "8-11" in glued and "Redoverstepped" in glued
    assert past.startswith(f"{QUIRKS}: game 3 [Played on past a fivefold repetition] line 18: ")
    assert "repetition at ply 16" in past
