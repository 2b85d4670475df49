"""`checkers import`: real PDN collections into the archive, checked, reported, never twice."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import httpx

from app.archive.importer import Importer, check_game
from app.db.engine import Database
from app.rules.pdn import MAX_TAG_LENGTH, PdnGame, read_games

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
# Records real collections contain that a strict reader refused.
QUIRKS = ROOT / "tests" / "data" / "quirks" / "strict_reader.pdn"


def quirk(event: str) -> PdnGame:
    """The record of tests/data/quirks/strict_reader.pdn with this Event."""
    with QUIRKS.open(encoding="utf-8") as stream:
        (record,) = (r for r in read_games(stream) if r.tags["Event"] == event)
    return record


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


def test_a_short_capture_is_read_as_the_path_the_record_goes_on_after() -> None:
    """`10x26` has two paths here (10x17x26, 10x19x26); only after the first is White's
    `23-19` two moves later legal, so the record is clear: that path, with a warning."""
    checked = check_game(quirk("Short capture, two paths"))
    assert checked.moves == ["10x17x26", "32-28", "1-6", "23-19", "6-9"]
    (warning,) = checked.warnings
    assert "'10x26'" in warning and "10x17x26" in warning and "10x19x26" in warning


def test_a_remark_glued_to_a_move_is_a_comment_and_the_move_is_kept() -> None:
    checked = check_game(quirk("Remark glued to a move"))
    assert checked.moves == ["11-15", "23-19", "8-11", "22-17"]
    assert checked.result == "0-1"
    (warning,) = checked.warnings
    assert "Redoverstepped" in warning and "line 16" in warning


def test_a_game_played_on_past_an_automatic_draw_keeps_its_moves_and_result() -> None:
    """Masters played under claim rules: the record stands, with a note where the server
    would have drawn (the fifth repetition, ply 16)."""
    checked = check_game(quirk("Played on past a fivefold repetition"))
    assert len(checked.moves) == 20 and checked.result == "1-0"
    assert checked.termination is None
    (warning,) = checked.warnings
    assert "repetition at ply 16" in warning


async def test_import_reports_warnings_and_stores_the_records(
    db_url: str, client: httpx.AsyncClient
) -> None:
    status, output = await checkers_import(db_url, QUIRKS)
    assert status == 0, output
    assert "imported 3, already present 0, rejected 0, warnings 3" in output
    warnings = [line for line in output.splitlines() if line.startswith("warning ")]
    assert len(warnings) == 3
    assert "game 1 (line 5)" in warnings[0] and "10x17x26" in warnings[0]
    assert "game 3 (line 18)" in warnings[2] and "ply 16" in warnings[2]
    page = (await client.get("/api/players/Ann/games", params={"limit": 10})).json()
    games = [(await client.get(f"/api/games/{g['id']}")).json() for g in page["data"]]
    (past,) = [g for g in games if g["tags"]["Event"].startswith("Played on past")]
    assert (past["result"], past["ply_count"]) == ("1-0", 20)
    # The archive's replay shows every position, also those after the draw was passed.
    shown = (await client.get(f"/api/games/{past['id']}", params={"positions": True})).json()
    assert shown["moves"][-1]["fen_after"] is not None
    (short,) = [g for g in games if g["tags"]["Event"].startswith("Short capture")]
    assert short["moves"][0]["move"] == "10x17x26"


async def test_an_oversized_tag_is_refused_at_import_and_cut_in_responses(
    db_url: str, client: httpx.AsyncClient, tmp_path: Path
) -> None:
    """A record with a huge tag (once 30 MB, taking 5 GB to read and served whole as JSON) is
    rejected with a clear reason while the rest of the file is stored; a game that holds a
    long tag already (imported before the bound) is shown with it cut."""
    path = tmp_path / "huge.pdn"
    huge = "x" * 2_000_000
    path.write_text(
        f'[Event "{huge}"]\n[Black "Ann"]\n1. 11-15 *\n\n'
        '[Event "fine"]\n[Black "Ann"]\n[White "Bob"]\n1. 11-15 22-18 *\n\n'
    )
    status, output = await checkers_import(db_url, path)
    assert status == 1, output
    assert "imported 1, already present 0, rejected 1" in output
    (rejected,) = [line for line in output.splitlines() if line.startswith("rejected ")]
    assert "line 1 is longer than 100000 characters" in rejected
    assert len(output) < 10_000
    # A game stored with a long tag before the bound existed.
    database = Database(db_url)
    try:
        importer = Importer(database.sessionmaker)
        record = next(read_games('[Event "old"]\n[Black "Ann"]\n[White "Cy"]\n1. 9-13 *\n'))
        checked = check_game(record)
        checked.tags = {"Event": "old", "Annotator": "y" * 100_000}
        await importer._store([checked])
    finally:
        await database.dispose()
    page = (await client.get("/api/players/Cy/games")).json()
    (game,) = page["data"]
    shown = await client.get(f"/api/games/{game['id']}")
    assert len(shown.content) < 20_000
    assert len(shown.json()["tags"]["Annotator"]) == MAX_TAG_LENGTH
    pdn = await client.get(f"/api/games/{game['id']}.pdn")
    assert pdn.status_code == 200 and len(pdn.content) < 5_000
