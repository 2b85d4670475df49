"""One game (JSON and PDN) and the bulk export: contents, formats, and the PDN round trip."""

from __future__ import annotations

import json

import httpx
import pytest
from draughts import Board
from draughts import Move as DraughtsMove
from draughts.PDN import PDNReader
from fastapi import FastAPI

from app.archive import service as archive
from app.rules import Game
from app.rules.pdn import read_games
from tests.support.archive_data import add_game, at

PROBLEM_FEN = "W:W27,19,K13:BK30,12,5"


@pytest.fixture
async def games(app: FastAPI) -> dict[str, int]:
    async with app.state.db.session() as session:
        ids = {
            "timed": await add_game(
                session,
                black="alice",
                white="bob",
                started_at=at("2026-01-05", 3600),
                plies=41,
                result="0-1",
                termination="resignation",
                room="english-blitz",
                rated=True,
                seed=11,
            ),
            "untimed": await add_game(
                session,
                black="bob",
                white="carol",
                started_at=at("2026-01-06"),
                plies=60,
                result="1/2-1/2",
                termination="agreement",
                clock=None,
                seed=12,
            ),
            "pool": await add_game(
                session,
                black="carol",
                white="alice",
                variant="pool",
                started_at=at("2026-01-07"),
                plies=33,
                result="1-0",
                termination="resignation",
                room="pool",
                seed=13,
            ),
            "setup": await add_game(
                session,
                black="alice",
                white="carol",
                started_at=at("2026-01-08"),
                start_fen=PROBLEM_FEN,
                plies=6,
                result="0-1",
                termination="resignation",
                clock=None,
                seed=14,
            ),
            "live": await add_game(
                session,
                black="dave",
                white="alice",
                started_at=at("2026-01-09"),
                plies=9,
                status="playing",
                seed=15,
            ),
        }
        await session.commit()
    return ids


async def test_a_game_shows_players_tags_moves_clocks_and_result(
    client: httpx.AsyncClient, games: dict[str, int]
) -> None:
    response = await client.get(f"/api/games/{games['timed']}")
    assert response.status_code == 200
    game = response.json()
    assert (game["black"], game["white"], game["result"]) == ("alice", "bob", "0-1")
    assert game["termination"] == "resignation"
    assert len(game["moves"]) == game["ply_count"] == 41
    first = game["moves"][0]
    assert first["ply"] == 1
    assert first["clock_ms"] == 299_000  # 300 s, 4 s spent, 3 s added
    assert first["played_at"].startswith("2026-01-05T01:00:05")
    assert first["fen_after"] is None
    assert game["tags"] == {}


async def test_positions_replay_every_ply(client: httpx.AsyncClient, games: dict[str, int]) -> None:
    for name in ("timed", "pool", "setup"):
        game = (await client.get(f"/api/games/{games[name]}?positions=true")).json()
        replay = Game(game["variant"], start_fen=game["start_fen"])
        assert game["start_position"] == replay.fen()
        for move in game["moves"]:
            replay.play(move["move"])
            assert move["fen_after"] == replay.fen()


async def test_an_unknown_game_is_a_404(client: httpx.AsyncClient, games: dict[str, int]) -> None:
    for path in ("/api/games/999999", "/api/games/999999.pdn"):
        response = await client.get(path)
        assert response.status_code == 404
        assert response.json() == {"error": "not_found", "message": "no game 999999"}
    response = await client.get("/api/games/abc")
    assert response.status_code == 422
    assert response.json()["error"] == "bad_request"


async def test_pdn_has_the_standard_tags_clock_comments_and_result(
    client: httpx.AsyncClient, games: dict[str, int]
) -> None:
    response = await client.get(f"/api/games/{games['timed']}.pdn")
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("application/x-pdn")
    text = response.text
    head = text.split("\n\n")[0].splitlines()
    assert head[:9] == [
        '[Event "Rated english game, English blitz 5+3"]',
        f'[Site "http://testserver/api/games/{games["timed"]}"]',
        '[Date "2026.01.05"]',
        '[Round "-"]',
        '[Black "alice"]',
        '[White "bob"]',
        '[Result "0-1"]',
        '[GameType "21"]',
        '[TimeControl "300+3"]',
    ]
    assert '[Termination "resignation"]' in head
    assert "1. " in text and "{[%clock 0:04:59]}" in text
    assert text.rstrip().endswith("0-1")


async def test_pdn_of_pool_and_set_up_games(
    client: httpx.AsyncClient, games: dict[str, int]
) -> None:
    pool = (await client.get(f"/api/games/{games['pool']}.pdn")).text
    assert '[GameType "23"]' in pool
    assert "FEN" not in pool
    setup = (await client.get(f"/api/games/{games['setup']}.pdn")).text
    assert '[GameType "21"]' in setup
    (fen,) = [line for line in setup.splitlines() if line.startswith("[FEN ")]
    assert Game("english", fen.split('"')[1]).fen() == Game("english", PROBLEM_FEN).fen()
    assert "%clock" not in setup


@pytest.mark.parametrize("name", ["timed", "untimed", "pool", "setup", "live"])
async def test_pdn_round_trip_through_our_reader(
    client: httpx.AsyncClient, games: dict[str, int], name: str
) -> None:
    stored = (await client.get(f"/api/games/{games[name]}")).json()
    (record,) = read_games((await client.get(f"/api/games/{games[name]}.pdn")).text)
    assert record.error is None
    assert record.moves == [m["move"] for m in stored["moves"]]
    assert record.result == stored["result"]
    assert record.variant().name == stored["variant"]
    replayed = record.game()
    assert replayed.ply == stored["ply_count"]


@pytest.mark.parametrize("name", ["untimed", "timed"])
async def test_pdn_round_trip_through_pydraughts(
    client: httpx.AsyncClient, games: dict[str, int], name: str
) -> None:
    """An independent reader (pydraughts, English rules) finds the same legal moves and result,
    clock comments included."""
    stored = (await client.get(f"/api/games/{games[name]}")).json()
    pdn = (await client.get(f"/api/games/{games[name]}.pdn")).text
    (game,) = PDNReader(pdn_text=pdn).games
    assert game.variant == "english"
    assert game.game_ending == stored["result"]
    assert game.moves == [m["move"] for m in stored["moves"]]
    board = Board(variant="english")
    for text in game.moves:
        path = [int(square) for square in text.replace("x", "-").split("-")]
        assert path in [m.steps_move for m in board.legal_moves()], text
        board.push(DraughtsMove(board, steps_move=path))


async def test_export_streams_pdn_by_default(
    client: httpx.AsyncClient, games: dict[str, int]
) -> None:
    response = await client.get("/api/games/export")
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("application/x-pdn")
    records = list(read_games(response.text))
    assert [r.tags["Site"].rsplit("/", 1)[1] for r in records] == [
        str(games[n]) for n in ("live", "setup", "pool", "untimed", "timed")
    ]
    assert all(r.error is None for r in records)
    assert [r.result for r in records] == ["*", "0-1", "1-0", "1/2-1/2", "0-1"]


async def test_export_as_ndjson_by_accept_header_with_filters(
    client: httpx.AsyncClient, games: dict[str, int]
) -> None:
    response = await client.get(
        "/api/games/export",
        params={"player": "alice", "order": "asc"},
        headers={"Accept": "application/x-ndjson"},
    )
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("application/x-ndjson")
    lines = [json.loads(line) for line in response.text.splitlines()]
    assert [g["id"] for g in lines] == [games[n] for n in ("timed", "pool", "setup", "live")]
    timed = lines[0]
    detail = (await client.get(f"/api/games/{games['timed']}")).json()
    assert timed["moves"] == [m["move"] for m in detail["moves"]]
    assert timed["clocks_ms"] == [m["clock_ms"] for m in detail["moves"]]
    assert (timed["black"], timed["white"], timed["result"]) == ("alice", "bob", "0-1")
    assert lines[2]["clocks_ms"] is None
    assert lines[3]["status"] == "playing"


async def test_export_stops_at_max_and_takes_format_parameter(
    client: httpx.AsyncClient, games: dict[str, int]
) -> None:
    response = await client.get("/api/games/export", params={"max": 2, "format": "ndjson"})
    assert [json.loads(x)["id"] for x in response.text.splitlines()] == [
        games["live"],
        games["setup"],
    ]


async def test_export_refuses_what_it_cannot_produce(
    client: httpx.AsyncClient, games: dict[str, int]
) -> None:
    response = await client.get("/api/games/export", headers={"Accept": "application/xml"})
    assert response.status_code == 406
    assert response.json()["error"] == "not_acceptable"
    response = await client.get("/api/games/export", params={"variant": "chess"})
    assert response.status_code == 422
    response = await client.get("/api/games/export", params={"player": "nobody"})
    assert response.status_code == 404
    assert response.json()["message"] == "no player named 'nobody'"


async def test_export_crosses_batch_boundaries(app: FastAPI) -> None:
    """More games than one read batch: every game comes out once, in order."""
    async with app.state.db.session() as session:
        ids = [
            await add_game(session, black="x", white="y", started_at=at("2026-05-01", i), plies=3)
            for i in range(7)
        ]
        await session.commit()
        resolved = await archive.resolve_filter(session, archive.GameFilter(player="x"))
        exported = [
            r.id async for r in archive.iter_games(session, resolved, order="asc", batch_size=3)
        ]
    assert exported == ids


async def test_the_openapi_documents_the_archive(client: httpx.AsyncClient) -> None:
    spec = (await client.get("/openapi.json")).json()
    paths = spec["paths"]
    for path in (
        "/api/games",
        "/api/games/export",
        "/api/games/{game_id}",
        "/api/games/{game_id}.pdn",
        "/api/players/{name}",
        "/api/players/{name}/games",
    ):
        assert path in paths
    export = paths["/api/games/export"]["get"]["responses"]["200"]["content"]
    assert {"application/x-pdn", "application/x-ndjson"} <= export.keys()
    params = {p["name"] for p in paths["/api/games"]["get"]["parameters"]}
    assert {"player", "variant", "result", "since", "until", "cursor", "limit"} <= params
