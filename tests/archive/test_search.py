"""`GET /api/games` and `/api/players/{name}/games`: every filter, paging, and bad input."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest
from fastapi import FastAPI

from tests.support.archive_data import add_game, at


@pytest.fixture
async def games(app: FastAPI) -> dict[str, int]:
    """Seven listed games between four players, covering every filter, and one aborted before
    it began, which no listing shows; ids by a short name."""
    async with app.state.db.session() as session:
        ids = {
            "blitz": await add_game(
                session,
                black="alice",
                white="bob",
                started_at=at("2026-01-05"),
                plies=30,
                result="1-0",
                termination="resignation",
                room="english-blitz",
                rated=True,
                seed=1,
            ),
            "casual": await add_game(
                session,
                black="bob",
                white="alice",
                started_at=at("2026-01-10"),
                plies=12,
                result="0-1",
                termination="timeout",
                room="english-casual",
                clock=None,
                seed=2,
            ),
            "pool_draw": await add_game(
                session,
                black="alice",
                white="carol",
                variant="pool",
                started_at=at("2026-02-01"),
                plies=40,
                result="1/2-1/2",
                termination="agreement",
                room="pool",
                rated=True,
                seed=3,
            ),
            "live": await add_game(
                session,
                black="carol",
                white="bob",
                variant="pool",
                started_at=at("2026-02-03"),
                plies=7,
                status="playing",
                room="pool",
                seed=4,
            ),
            "bob_loses": await add_game(
                session,
                black="dave",
                white="bob",
                started_at=at("2026-02-05"),
                plies=20,
                result="1-0",
                termination="resignation",
                seed=5,
            ),
            # An administrator's abort: listed (it may have had moves; this one had none).
            "aborted": await add_game(
                session,
                black="alice",
                white="dave",
                started_at=at("2026-02-06"),
                plies=0,
                status="aborted",
                termination="admin",
                seed=6,
            ),
            # Aborted before it began (the Abort button, a first move not made in time).
            "never_began": await add_game(
                session,
                black="dave",
                white="alice",
                started_at=at("2026-02-06", 60),
                plies=0,
                status="aborted",
                termination="aborted",
                seed=8,
            ),
            "short": await add_game(
                session,
                black="carol",
                white="alice",
                started_at=at("2026-02-07"),
                plies=4,
                result="1-0",
                termination="resignation",
                seed=7,
            ),
        }
        await session.commit()
    return ids


async def ids_of(client: httpx.AsyncClient, path: str = "/api/games", **params: Any) -> list[int]:
    response = await client.get(path, params={"limit": 100, **params})
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["count"] == len(body["data"])
    return [game["id"] for game in body["data"]]


async def test_without_filters_every_game_is_listed_newest_first(
    client: httpx.AsyncClient, games: dict[str, int]
) -> None:
    newest_first = ["short", "aborted", "bob_loses", "live", "pool_draw", "casual", "blitz"]
    assert await ids_of(client) == [games[name] for name in newest_first]
    assert await ids_of(client, order="asc") == [games[name] for name in reversed(newest_first)]


@pytest.mark.parametrize(
    ("params", "expected"),
    [
        ({"player": "bob"}, ["bob_loses", "live", "casual", "blitz"]),
        ({"player": "alice", "opponent": "bob"}, ["casual", "blitz"]),
        ({"player": "alice", "colour": "black"}, ["aborted", "pool_draw", "blitz"]),
        ({"player": "alice", "colour": "white"}, ["short", "casual"]),
        ({"player": "bob", "opponent": "carol", "colour": "white"}, ["live"]),
        ({"variant": "pool"}, ["live", "pool_draw"]),
        ({"result": "1-0"}, ["short", "bob_loses", "blitz"]),
        ({"result": "1/2-1/2"}, ["pool_draw"]),
        ({"result": "*"}, ["aborted", "live"]),
        ({"player": "alice", "result": "win"}, ["casual", "blitz"]),
        ({"player": "alice", "result": "loss"}, ["short"]),
        ({"player": "alice", "result": "draw"}, ["pool_draw"]),
        ({"player": "bob", "result": "loss"}, ["bob_loses", "casual", "blitz"]),
        ({"termination": "resignation"}, ["short", "bob_loses", "blitz"]),
        ({"termination": "timeout"}, ["casual"]),
        ({"room": "pool"}, ["live", "pool_draw"]),
        ({"room": "english-blitz"}, ["blitz"]),
        ({"rated": "true"}, ["pool_draw", "blitz"]),
        ({"rated": "false", "player": "carol"}, ["short", "live"]),
        ({"since": "2026-02-03"}, ["short", "aborted", "bob_loses", "live"]),
        ({"until": "2026-01-10"}, ["casual", "blitz"]),
        ({"since": "2026-01-06", "until": "2026-02-01"}, ["pool_draw", "casual"]),
        ({"min_plies": 20}, ["bob_loses", "pool_draw", "blitz"]),
        ({"status": "playing"}, ["live"]),
        ({"status": "aborted"}, ["aborted"]),
        ({"player": "dave", "variant": "english", "min_plies": 1}, ["bob_loses"]),
    ],
)
async def test_each_filter_selects_exactly_its_games(
    client: httpx.AsyncClient,
    games: dict[str, int],
    params: dict[str, Any],
    expected: list[str],
) -> None:
    assert await ids_of(client, **params) == [games[name] for name in expected]


async def test_a_game_aborted_before_it_began_is_listed_nowhere(
    client: httpx.AsyncClient, games: dict[str, int]
) -> None:
    """Kept, and found by its id, but in no listing, export or count (as lichess)."""
    for params in [{}, {"status": "aborted"}, {"termination": "aborted"}, {"result": "*"}]:
        for path in ("/api/games", "/api/players/dave/games", "/api/players/alice/games"):
            assert games["never_began"] not in await ids_of(client, path, **params)
    export = await client.get("/api/games/export", params={"player": "dave", "format": "ndjson"})
    exported = [json.loads(line)["id"] for line in export.text.splitlines()]
    assert exported == [games["aborted"], games["bob_loses"]]
    profile = (await client.get("/api/players/dave")).json()
    assert (profile["games"], profile["variants"]["english"]["games"]) == (2, 2)
    found = (await client.get(f"/api/games/{games['never_began']}")).json()
    assert (found["status"], found["termination"]) == ("aborted", "aborted")


async def test_a_players_games_take_the_same_filters(
    client: httpx.AsyncClient, games: dict[str, int]
) -> None:
    path = "/api/players/alice/games"
    assert await ids_of(client, path) == await ids_of(client, player="alice")
    assert await ids_of(client, path, result="win", colour="white") == [games["casual"]]
    response = await client.get("/api/players/nobody/games")
    assert response.status_code == 404
    assert response.json()["error"] == "not_found"


async def test_a_game_in_progress_is_listed_as_playing(
    client: httpx.AsyncClient, games: dict[str, int]
) -> None:
    listed = (await client.get("/api/games", params={"status": "playing"})).json()["data"]
    assert [(g["id"], g["status"], g["result"]) for g in listed] == [
        (games["live"], "playing", "*")
    ]
    assert listed[0]["ply_count"] == 7
    assert listed[0]["finished_at"] is None
    detail = (await client.get(f"/api/games/{games['live']}")).json()
    assert len(detail["moves"]) == 7


async def test_a_listed_game_shows_players_room_and_clock(
    client: httpx.AsyncClient, games: dict[str, int]
) -> None:
    (game,) = (await client.get("/api/games", params={"room": "english-blitz"})).json()["data"]
    assert game["black"] == "alice"
    assert game["white"] == "bob"
    assert game["room"] == "english-blitz"
    assert game["clock"] == {"base_s": 300, "increment_s": 3}
    assert game["result"] == "1-0"
    assert game["termination"] == "resignation"
    assert game["started_at"].startswith("2026-01-05T00:00:00")


async def test_paging_skips_and_repeats_nothing_while_games_arrive(app: FastAPI) -> None:
    """Walk erin's history 4 games a page while new games start between the requests: the walk
    returns exactly the games that existed when it began, each once, in order (several of them
    share a start time, so the order falls back on the id)."""
    async with app.state.db.session() as session:
        existing = [
            await add_game(
                session,
                black="erin" if i % 2 else "frank",
                white="frank" if i % 2 else "erin",
                started_at=at("2026-03-01", 60 * (i // 3)),
                plies=2,
                seed=i,
            )
            for i in range(23)
        ]
        await session.commit()
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as client:
        seen: list[int] = []
        cursor = None
        arrivals = 0
        while True:
            params: dict[str, Any] = {"player": "erin", "limit": 4}
            if cursor is not None:
                params["cursor"] = cursor
            body = (await client.get("/api/games", params=params)).json()
            seen += [game["id"] for game in body["data"]]
            assert body["count"] == 23 + arrivals
            cursor = body["next_cursor"]
            if cursor is None:
                break
            async with app.state.db.session() as session:
                for _ in range(2):
                    await add_game(
                        session, black="erin", white="gina", started_at=at("2026-03-02"), plies=2
                    )
                    arrivals += 1
                await session.commit()
    assert seen == sorted(existing, key=lambda i: (existing.index(i) // 3, i), reverse=True)
    assert len(set(seen)) == len(seen) == 23


async def test_oldest_first_paging_reaches_the_games_that_arrived(
    client: httpx.AsyncClient, app: FastAPI, games: dict[str, int]
) -> None:
    first = (await client.get("/api/games", params={"order": "asc", "limit": 5})).json()
    async with app.state.db.session() as session:
        late = await add_game(session, black="alice", white="bob", started_at=at("2026-04-01"))
        await session.commit()
    rest = (
        await client.get(
            "/api/games", params={"order": "asc", "limit": 5, "cursor": first["next_cursor"]}
        )
    ).json()
    assert rest["next_cursor"] is None
    walked = [g["id"] for g in first["data"] + rest["data"]]
    listed = [game_id for name, game_id in games.items() if name != "never_began"]
    assert walked == listed + [late]


async def test_count_can_be_left_out(client: httpx.AsyncClient, games: dict[str, int]) -> None:
    body = (await client.get("/api/games", params={"count": "false", "limit": 2})).json()
    assert body["count"] is None
    assert len(body["data"]) == 2
    assert body["next_cursor"] is not None


@pytest.mark.parametrize(
    ("params", "status", "error", "words"),
    [
        ({"variant": "international"}, 422, "bad_request", "variant"),
        ({"since": "2026-13-01"}, 422, "bad_request", "since"),
        ({"until": "yesterday"}, 422, "bad_request", "until"),
        ({"since": "2026-02-01", "until": "2026-01-01"}, 400, "bad_request", "since"),
        ({"limit": 0}, 422, "bad_request", "limit"),
        ({"limit": 101}, 422, "bad_request", "limit"),
        ({"min_plies": -1}, 422, "bad_request", "min_plies"),
        ({"result": "2-0"}, 422, "bad_request", "result"),
        ({"termination": "boredom"}, 422, "bad_request", "termination"),
        ({"colour": "red", "player": "alice"}, 422, "bad_request", "colour"),
        ({"rated": "perhaps"}, 422, "bad_request", "rated"),
        ({"cursor": "not-a-cursor"}, 400, "bad_cursor", "cursor"),
        ({"cursor": "ZGVzY3x4fDE"}, 400, "bad_cursor", "cursor"),
        (
            {"cursor": "ZGVzY3wyMDI2LTAxLTAxVDAwOjAwOjAwKzAwOjAwfDk5OTk5OTk5OTk5OTk5OTk5OTk5"},
            400,
            "bad_cursor",
            "cursor",
        ),
        ({"player": "al\x00ice"}, 422, "bad_request", "player"),
        ({"colour": "black"}, 400, "bad_request", "player"),
        ({"opponent": "bob"}, 400, "bad_request", "player"),
        ({"result": "win"}, 400, "bad_request", "player"),
        ({"player": "nobody"}, 404, "not_found", "nobody"),
        ({"player": "alice", "opponent": "nobody"}, 404, "not_found", "nobody"),
        ({"room": "no-such-room"}, 404, "not_found", "no-such-room"),
    ],
)
async def test_bad_input_gets_a_clear_json_error(
    client: httpx.AsyncClient,
    games: dict[str, int],
    params: dict[str, Any],
    status: int,
    error: str,
    words: str,
) -> None:
    response = await client.get("/api/games", params=params)
    assert response.status_code == status
    body = response.json()
    assert body["error"] == error
    assert words in body["message"]


async def test_a_cursor_only_continues_the_order_it_came_from(
    client: httpx.AsyncClient, games: dict[str, int]
) -> None:
    desc = (await client.get("/api/games", params={"limit": 2})).json()
    response = await client.get(
        "/api/games", params={"limit": 2, "order": "asc", "cursor": desc["next_cursor"]}
    )
    assert response.status_code == 400
    assert response.json()["error"] == "bad_cursor"


async def test_extreme_but_valid_input_is_answered(
    client: httpx.AsyncClient, games: dict[str, int]
) -> None:
    assert len(await ids_of(client, since="0001-01-01", until="9999-12-31")) == len(games) - 1
    for path in ("/api/games/9223372036854775807", "/api/players/" + "x" * 64):
        assert (await client.get(path)).status_code == 404
    for path in ("/api/games/9223372036854775808", "/api/games/0", "/api/players/%00"):
        response = await client.get(path)
        assert response.status_code == 422
        assert response.json()["error"] == "bad_request"
