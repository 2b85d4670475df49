"""`checkers puzzles generate` and `checkers puzzles check` (docs/puzzles.md), run as a user
runs them: puzzles found in a PDN file of problems and a self-play game, written once however
often the command runs, checked again; a broken puzzle is reported; bad arguments refused."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from pathlib import Path

from tests.conftest import migrated_sqlite

PROBLEMS = """[Event "Gould 51"]
[Setup "1"]
[FEN "W:W19,23,30:B10,12,26"]
1-0

[Event "Two ways to win a man"]
[Setup "1"]
[FEN "W:W19,18,17:B15,22,23"]
1-0

[Event "International"]
[GameType "20"]
1. 32-28 *
"""


def checkers(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "app.cli", "puzzles", *args],
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
    )


def test_puzzles_are_generated_once_and_checked(tmp_path: Path) -> None:
    problems = tmp_path / "problems.pdn"
    problems.write_text(PROBLEMS)
    out = tmp_path / "puzzles.jsonl"
    args = ["generate", "--pdn", str(problems), "--self-play", "1", "--seed", "7", "--quiet"]
    done = checkers(*args, "--out", str(out))
    assert done.returncode == 0, done.stderr
    records = [json.loads(line) for line in out.read_text().splitlines()]
    sources = [r["source"] for r in records]
    assert "problems.pdn #1, ply 0" in sources  # Gould's shot
    assert not any(s.startswith("problems.pdn #2") for s in sources)  # two ways: no puzzle
    assert all(r["variant"] == "english" for r in records)
    assert done.stdout.startswith("games 3 ")  # the international game is not read
    # Again: nothing new is written.
    again = checkers(*args, "--out", str(out))
    assert again.returncode == 0 and "puzzles added 0" in again.stdout
    assert len(out.read_text().splitlines()) == len(records)

    checked = checkers("check", str(out))
    assert checked.returncode == 0, checked.stdout
    assert checked.stdout.strip().endswith(f"puzzles {len(records)} failed 0")
    # A solution whose move is one of two good ones fails the check.
    broken = tmp_path / "broken.jsonl"
    bad = records[0] | {"fen": "W:W17,18,19:B15,22,23", "moves": ["18x11"], "key": "0" * 16}
    broken.write_text(json.dumps(bad) + "\n")
    failed = checkers("check", str(broken))
    assert failed.returncode == 1 and "about as good" in failed.stdout


def test_a_file_of_puzzles_is_loaded_into_the_database(tmp_path: Path) -> None:
    url = migrated_sqlite(tmp_path / "checkers.db")
    shipped_count = (
        sqlite3.connect(tmp_path / "checkers.db")
        .execute("SELECT count(*) FROM puzzles")
        .fetchone()[0]
    )
    own = tmp_path / "own.jsonl"
    record = {
        "variant": "english",
        "fen": "W:W18,27:B11,14,15",  # (not shipped: a club's own)
        "moves": ["18x9"],
        "themes": ["material", "one_move"],
        "rating": 1700,
        "source": "our club's game",
    }
    own.write_text(json.dumps(record) + "\n")
    for added in (1, 0):  # stored once
        done = checkers("load", str(own), "--database-url", url)
        assert done.returncode == 0, done.stderr
        assert done.stdout.strip() == f"puzzles 1 stored {added}"
    with sqlite3.connect(tmp_path / "checkers.db") as db:
        assert db.execute("SELECT count(*) FROM puzzles").fetchone()[0] == shipped_count + 1
        assert db.execute("SELECT source FROM puzzles WHERE fen = ?", (record["fen"],)).fetchall()
    broken = tmp_path / "broken.jsonl"
    broken.write_text('{"fen": "x"}\n')
    assert checkers("load", str(broken), "--database-url", url).returncode == 2


def test_bad_arguments_are_refused(tmp_path: Path) -> None:
    out = str(tmp_path / "out.jsonl")
    missing = checkers("generate", "--pdn", str(tmp_path / "none.pdn"), "--out", out)
    assert missing.returncode == 2 and "cannot read" in missing.stderr
    jobs = checkers("generate", "--jobs", "0", "--out", out)
    assert jobs.returncode == 2 and "--jobs" in jobs.stderr
    assert checkers("generate").returncode == 2  # --out is required
    unreadable = checkers("check", str(tmp_path / "none.jsonl"))
    assert unreadable.returncode == 2 and "no such file" in unreadable.stderr
    garbled = tmp_path / "garbled.jsonl"
    garbled.write_text("{not json\n")
    assert checkers("check", str(garbled)).returncode == 2
