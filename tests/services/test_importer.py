"""`checkers import`: real PDN collections into the archive, checked, reported, never twice."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[2]
# The English collections of tests/data (DUTCH96H.pdn is international draughts).
COLLECTIONS = [
    ROOT / "tests" / "data" / name
    for name in (
        "OCA_2.0.pdn",
        "Principles_of_Strategy.pdn",
        "beginner.pdn",
        "borderclassics.pdn",
        "goulds.pdn",
        "inferno.pdn",
    )
]
ENGLISH_GAMES = 630  # records in the six English collections


async def checkers_import(db_url: str, *files: Path) -> tuple[int, str]:
    """Run the real command; its exit status and everything it printed."""
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "app.cli",
        "import",
        "--database-url",
        db_url,
        *map(str, files),
        cwd=ROOT,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
    )
    output, _ = await process.communicate()
    assert process.returncode is not None
    return process.returncode, output.decode()


async def test_importing_the_english_collections_twice_stores_each_game_once(
    db_url: str, client: httpx.AsyncClient
) -> None:
    status, output = await checkers_import(db_url, *COLLECTIONS)
    assert status == 0, output
    assert f"imported {ENGLISH_GAMES}, already present 0, rejected 0" in output

    status, output = await checkers_import(db_url, *COLLECTIONS)
    assert status == 0, output
    assert f"imported 0, already present {ENGLISH_GAMES}, rejected 0" in output

    everything = (await client.get("/api/games", params={"limit": 1})).json()
    assert everything["count"] == ENGLISH_GAMES

    # A historical game: players by name, its date, its moves, checked and stored in full.
    wyllie = (await client.get("/api/players/Wyllie, J.")).json()
    assert wyllie["kind"] == "imported"
    page = (
        await client.get("/api/players/Wyllie, J./games", params={"opponent": "Moorhead, W."})
    ).json()
    (listed,) = page["data"]
    assert (listed["black"], listed["white"], listed["result"]) == (
        "Moorhead, W.",
        "Wyllie, J.",
        "0-1",
    )
    assert listed["source"] == "import"
    game = (await client.get(f"/api/games/{listed['id']}")).json()
    assert game["tags"]["Event"] == "Manchester 1841"
    assert game["tags"]["Site"] == "Manchester"
    assert game["ply_count"] == len(game["moves"]) == 44
    assert game["moves"][-1]["move"] == "26x17x10x1"
    pdn = (await client.get(f"/api/games/{listed['id']}.pdn")).text
    assert '[Event "Manchester 1841"]' in pdn
    assert '[Date "1841-??-??"]' in pdn

    # A problem: a set-up position with no moves keeps its FEN.
    problems = (await client.get("/api/games", params={"min_plies": 0, "limit": 100})).json()
    set_up = [g for g in problems["data"] if g["start_fen"] is not None]
    assert set_up and all(g["ply_count"] == 0 for g in set_up)


BAD_FILE = """[Event "Good"]
[Black "Ann"]
[White "Ben"]
[Result "1/2-1/2"]
1. 11-15 23-19 2. 8-11 22-17 1/2-1/2

[Event "Illegal"]
[Black "Ann"]
[White "Ben"]
[Result "1-0"]
1. 11-15 23-19 2. 15-14 1-0

[Event "Ignores a capture"]
[Black "Ann"]
[White "Ben"]
[Result "0-1"]
1. 11-15 22-18 2. 9-13 0-1

[Event "Wrong result"]
[Black "Ann"]
[White "Ben"]
[Result "1-0"]
[FEN "B:W18:B14"]
1. 14x23 0-1

[Event "White to move"]
[Black "Ann"]
[White "Ben"]
[Result "0-1"]
[FEN "W:W21,22:B5,6"]
1... 22-18 2. 6-10 2... 18-14 3. 10-15 0-1

[Event "Another game"]
[GameType "20"]
[Result "1-0"]
1. 32-28 19-23 1-0

[Event "Also good"]
[Black "Ben"]
[White "Ann"]
[Result "0-1"]
1. 9-14 22-18 0-1
"""


async def test_bad_games_are_reported_one_by_one_and_the_rest_stored(
    db_url: str, client: httpx.AsyncClient, tmp_path: Path
) -> None:
    path = tmp_path / "mixed.pdn"
    path.write_text(BAD_FILE)
    status, output = await checkers_import(db_url, path)
    assert status == 1
    assert "imported 2, already present 0, rejected 5" in output
    report = [line for line in output.splitlines() if line.startswith("rejected ")]
    assert len(report) == 5
    assert "game 2 (line 7)" in report[0] and "move 2. 15-14" in report[0]
    assert "game 3 (line 13)" in report[1] and "9-13" in report[1] and "capture" in report[1]
    assert "game 4 (line 19)" in report[2] and "result 0-1 contradicts" in report[2]
    assert "game 5 (line 26)" in report[3] and "move 3. 10-15" in report[3]
    assert "game 6 (line 33)" in report[4] and "GameType" in report[4]
    ann = (await client.get("/api/players/Ann")).json()
    assert ann["variants"]["english"] == {
        "games": 2,
        "wins": 1,  # as White in "Also good"
        "losses": 0,
        "draws": 1,
        "playing": 0,
    }


async def test_a_missing_file_is_reported_and_the_others_imported(
    db_url: str, client: httpx.AsyncClient, tmp_path: Path
) -> None:
    status, output = await checkers_import(db_url, tmp_path / "nothing.pdn", COLLECTIONS[0])
    assert status == 2
    assert "cannot read" in output and "nothing.pdn" in output
    assert "rejected 0" in output
    assert (await client.get("/api/games", params={"limit": 1})).json()["count"] > 0


async def test_names_survive_in_utf8_and_latin1_files(
    db_url: str, client: httpx.AsyncClient, tmp_path: Path
) -> None:
    record = (
        '[Event "{event}"]\n[Black "Müller"]\n[White "Ødegård"]\n[Result "1-0"]\n1. 11-15 1-0\n'
    )
    (tmp_path / "utf8.pdn").write_text(record.format(event="utf8"), encoding="utf-8")
    (tmp_path / "latin1.pdn").write_text(record.format(event="latin1"), encoding="latin-1")
    status, output = await checkers_import(db_url, tmp_path / "utf8.pdn", tmp_path / "latin1.pdn")
    assert status == 0, output
    page = (await client.get("/api/players/Müller/games")).json()
    assert {(g["black"], g["white"]) for g in page["data"]} == {("Müller", "Ødegård")}
    assert page["count"] == 2


async def test_an_unmigrated_database_is_a_clear_error(tmp_path: Path) -> None:
    status, output = await checkers_import(
        f"sqlite+aiosqlite:///{tmp_path / 'empty.db'}", COLLECTIONS[0]
    )
    assert status == 3
    assert "cannot use the database" in output and "checkers migrate" in output
    assert "Traceback" not in output
