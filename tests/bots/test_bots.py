"""The bot API on a real server: upgrading an account, the game stream's lines, moves and
decisions over REST, the event stream (keep-alive, games and challenges on connect), and the
example bot of docs/bots.md, run as it is, playing a whole game against itself.
Every test runs on SQLite and on PostgreSQL."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest

from app.bots import streams
from tests.support.server import Served
from tests.support.ws import guest, guest_token
from tests.support.ws import member_token as register
from tests.tables.test_private_tables import start_private

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "docs" / "examples" / "random_bot.py"


def auth(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


async def bot(http: httpx.AsyncClient, name: str) -> str:
    token = await register(str(http.base_url), name)
    response = await http.post("/api/bot/account/upgrade", headers=auth(token))
    assert response.status_code == 200, response.text
    return token


@asynccontextmanager
async def ndjson(
    http: httpx.AsyncClient, path: str, token: str
) -> AsyncIterator[AsyncIterator[dict[str, Any] | None]]:
    """The stream's lines as JSON objects, None for a keep-alive (empty) line."""
    async with http.stream("GET", path, headers=auth(token), timeout=None) as response:
        assert response.status_code == 200
        assert response.headers["content-type"] == "application/x-ndjson"

        async def lines() -> AsyncIterator[dict[str, Any] | None]:
            async for line in response.aiter_lines():
                yield json.loads(line) if line else None

        yield lines()


async def next_line(lines: AsyncIterator[dict[str, Any] | None]) -> dict[str, Any] | None:
    return await asyncio.wait_for(anext(lines), 10)


async def next_event(lines: AsyncIterator[dict[str, Any] | None]) -> dict[str, Any]:
    while True:
        line = await next_line(lines)
        if line is not None:
            return line


async def start(http: httpx.AsyncClient, black: str, white: str, **options: Any) -> int:
    """`black` challenges `white` (a bot's name is its registration), who accepts."""
    me = (await http.get("/api/auth/me", headers=auth(white))).json()["name"]
    made = await http.post(
        f"/api/challenge/{me}", json={"colour": "black"} | options, headers=auth(black)
    )
    assert made.status_code == 200, made.text
    accepted = await http.post(f"/api/challenge/{made.json()['id']}/accept", headers=auth(white))
    assert accepted.status_code == 200, accepted.text
    game: int = accepted.json()["challenge"]["game"]
    return game


async def test_upgrading_to_a_bot(server: Served) -> None:
    async with server.http() as http, guest(server.url) as g:
        guest_tok = await guest_token(server.url)
        refused = await http.post("/api/bot/account/upgrade", headers=auth(guest_tok))
        assert (refused.status_code, refused.json()["error"]) == (400, "bot_needs_account")
        human = await register(server.url, "human")
        other = await register(server.url, "other")
        game = await start(http, human, other)
        played = await http.post("/api/bot/account/upgrade", headers=auth(human))
        assert (played.status_code, played.json()["error"]) == (400, "bot_has_games")
        # The bot API is for bots only.
        denied = await http.post(f"/api/bot/game/{game}/resign", headers=auth(human))
        assert (denied.status_code, denied.json()["error"]) == (403, "not_a_bot")
        assert (await http.post("/api/bot/account/upgrade")).status_code == 401
        assert g.welcome["user"] is not None


async def test_the_game_stream_moves_and_the_end(server: Served) -> None:
    async with server.http() as http:
        black, white = await bot(http, "blackbot"), await bot(http, "whitebot")
        game = await start(http, black, white, clock={"base": 300, "increment": 3}, rated=True)
        async with ndjson(http, f"/api/bot/game/stream/{game}", black) as lines:
            full = await next_event(lines)
            assert full["type"] == "gameFull"
            assert (full["id"], full["variant"], full["rated"]) == (game, "english", True)
            assert full["clock"] == {"initial": 300_000, "increment": 3000}
            assert full["black"]["name"] == "blackbot" and full["white"]["name"] == "whitebot"
            state = full["state"]
            assert (state["moves"], state["status"], state["turn"]) == ("", "started", "black")
            assert (state["btime"], state["wtime"]) == (300_000, 300_000)
            assert "11-15" in state["legal_moves"]
            moved = await http.post(f"/api/bot/game/{game}/move/9-14", headers=auth(black))
            assert moved.json() == {"ok": True}  # answered once stored: the stream has it
            state = await next_event(lines)
            assert (state["type"], state["moves"], state["turn"]) == ("gameState", "9-14", "white")
            assert isinstance(state["btime"], int) and state["binc"] == 3000
            wrong = await http.post(f"/api/bot/game/{game}/move/10-14", headers=auth(black))
            assert (wrong.status_code, wrong.json()["error"]) == (409, "not_your_turn")
            illegal = await http.post(f"/api/bot/game/{game}/move/1-99", headers=auth(white))
            assert illegal.status_code == 409
            await http.post(f"/api/bot/game/{game}/move/21-17", headers=auth(white))
            assert (await next_event(lines))["moves"] == "9-14 21-17"
            took = await http.post(f"/api/bot/game/{game}/move/14x21", headers=auth(black))
            assert took.status_code == 200, took.text
            assert (await next_event(lines))["moves"] == "9-14 21-17 14x21"  # the whole path
            offered = await http.post(f"/api/bot/game/{game}/draw/yes", headers=auth(white))
            assert offered.status_code == 200
            assert (await next_event(lines))["wdraw"] is True
            await http.post(f"/api/bot/game/{game}/draw/no", headers=auth(black))
            assert (await next_event(lines))["wdraw"] is False
            await http.post(f"/api/bot/game/{game}/resign", headers=auth(white))
            end = await next_event(lines)
            assert (end["status"], end["winner"]) == ("resignation", "black")
            with pytest.raises(StopAsyncIteration):  # the stream ends with the game
                await next_line(lines)
        missing = await http.get("/api/bot/game/stream/999999", headers=auth(black))
        assert (missing.status_code, missing.json()["error"]) == (404, "not_found")
        for bad in ("abc", "-1", "1.0", "99999999999999999999"):
            refused = await http.get(f"/api/bot/game/stream/{bad}", headers=auth(black))
            assert refused.status_code in (404, 422), bad
        for path in (f"/api/bot/game/stream/{game}", "/api/stream/event"):
            assert (await http.get(path)).status_code == 401


async def test_the_event_stream_sends_what_waits_then_what_happens(
    server: Served, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(streams, "KEEP_ALIVE_SECONDS", 0.2)
    async with server.http() as http:
        a, b = await bot(http, "abot"), await bot(http, "bbot")
        playing = await start(http, a, b)
        waiting = await http.post("/api/challenge/abot", headers=auth(b))
        async with ndjson(http, "/api/stream/event", a) as lines:
            first = await next_event(lines)
            assert first["type"] == "gameStart"
            assert (first["game"]["id"], first["game"]["color"]) == (playing, "black")
            assert first["game"]["opponent"]["name"] == "bbot"
            second = await next_event(lines)
            assert (second["type"], second["challenge"]["id"]) == (
                "challenge",
                waiting.json()["id"],
            )
            assert await next_line(lines) is None  # keep-alive
            await http.post(f"/api/bot/game/{playing}/abort", headers=auth(b))
            finish = await next_event(lines)
            assert finish["type"] == "gameFinish"
            assert (finish["game"]["id"], finish["game"]["status"]) == (playing, "aborted")
            await http.post(f"/api/challenge/{waiting.json()['id']}/accept", headers=auth(a))
            started = await next_event(lines)
            assert started["type"] == "gameStart" and started["game"]["color"] in ("black", "white")
            made = await http.post("/api/challenge/bbot", headers=auth(a))
            await http.post(
                f"/api/challenge/{made.json()['id']}/decline",
                json={"reason": "tooFast"},
                headers=auth(b),
            )
            declined = await next_event(lines)
            assert declined["type"] == "challengeDeclined"
            assert declined["challenge"]["decline_reason"] == "tooFast"


async def test_the_documented_example_bot_plays_a_whole_game(real_server: Served) -> None:
    """The example runs as a program of its own, calling the server through the network."""
    server = real_server
    docs = (ROOT / "docs" / "bots.md").read_text()
    assert EXAMPLE.read_text() in docs  # the file run here is the one the docs show
    async with server.http() as http:
        one, two = await bot(http, "randomone"), await bot(http, "randomtwo")
        processes = []
        try:
            for token in (one, two):
                processes.append(
                    await asyncio.create_subprocess_exec(
                        sys.executable,
                        str(EXAMPLE),
                        env=os.environ | {"CHECKERS_URL": server.url, "CHECKERS_TOKEN": token},
                    )
                )
            async with ndjson(http, "/api/stream/event", one) as lines:
                made = await http.post("/api/challenge/randomtwo", headers=auth(one))
                assert made.status_code == 200
                while True:
                    event = await asyncio.wait_for(anext(lines), 120)
                    if event is not None and event["type"] == "gameFinish":
                        break
            game = (await http.get(f"/api/games/{event['game']['id']}")).json()
            assert game["status"] == "finished" and game["ply_count"] > 0
            assert {game["black"], game["white"]} == {"randomone", "randomtwo"}
            assert event["game"]["status"] == game["termination"]
        finally:
            for process in processes:
                if process.returncode is None:
                    process.kill()
                await process.wait()


async def test_streams_follow_a_game_played_on_another_server(
    two_servers: list[Served],
) -> None:
    one, two = two_servers
    async with (
        one.http() as on_one,
        two.http() as on_two,
    ):
        alpha, beta = await bot(on_one, "alpha"), await bot(on_two, "beta")
        async with ndjson(on_two, "/api/stream/event", beta) as beta_events:
            made = await on_one.post(
                "/api/challenge/beta", json={"colour": "white"}, headers=auth(alpha)
            )
            told = await next_event(beta_events)
            assert (told["type"], told["challenge"]["id"]) == ("challenge", made.json()["id"])
            await on_two.post(f"/api/challenge/{made.json()['id']}/accept", headers=auth(beta))
            started = await next_event(beta_events)
            assert (started["type"], started["game"]["color"]) == ("gameStart", "black")
            game = started["game"]["id"]
            async with ndjson(on_one, f"/api/bot/game/stream/{game}", alpha) as alpha_game:
                assert (await next_event(alpha_game))["type"] == "gameFull"
                await on_two.post(f"/api/bot/game/{game}/move/9-14", headers=auth(beta))
                assert (await next_event(alpha_game))["moves"] == "9-14"
                await on_one.post(f"/api/bot/game/{game}/move/21-17", headers=auth(alpha))
                assert (await next_event(alpha_game))["moves"] == "9-14 21-17"
                await on_two.post(f"/api/bot/game/{game}/resign", headers=auth(beta))
                assert (await next_event(alpha_game))["status"] == "resignation"
            finish = await next_event(beta_events)
            assert (finish["type"], finish["game"]["winner"]) == ("gameFinish", "white")


BOT_CALLS = ["move/22-18", "resign", "abort", "draw/yes", "draw/no", "claim-victory"]


async def test_a_private_game_is_answered_as_no_game_to_anyone_but_its_players(
    server: Served,
) -> None:
    """The bot API confirms no private game's id: to a bot or any other account that does not
    play it, every call and the game stream answer as for a game that does not exist."""
    async with guest(server.url) as a, guest(server.url) as b:
        match = await start_private(a, b)
        game, missing = match.id, match.id + 1000
        async with server.http() as http:
            callers = [await bot(http, "snoopbot"), await register(server.url, "snooper")]
            for token in callers:

                async def shown(target: int, path: str, token: str = token) -> tuple[int, Any]:
                    url = f"/api/bot/game/{path.format(target)}"
                    if path.startswith("stream"):
                        response = await http.get(url, headers=auth(token))
                    else:
                        response = await http.post(url, headers=auth(token))
                    body = response.json()
                    return response.status_code, json.loads(
                        json.dumps(body).replace(str(target), "N")
                    )

                for path in ["stream/{}", *(f"{{}}/{call}" for call in BOT_CALLS)]:
                    answer = await shown(game, path)
                    assert answer == await shown(missing, path), path
                    assert answer[0] == 404, (path, answer)
        await match.play("11-15")  # untouched
