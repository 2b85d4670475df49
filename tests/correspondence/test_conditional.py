"""Conditional moves in correspondence games: stored while the opponent is to move, played at
once when the opponent's move begins a line (a line of several moves, move after move),
dropped when it no longer fits, seen by their owner only, refused when they break the rules."""

from __future__ import annotations

from typing import Any

import httpx

from tests.support.server import Served
from tests.support.ws import Client, connect, member_token, start_game


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


async def put(server: Served, token: str, game: int, lines: list[list[str]]) -> httpx.Response:
    async with server.http() as http:
        return await http.put(
            f"/api/games/{game}/conditional", json={"lines": lines}, headers=bearer(token)
        )


async def shown(server: Served, token: str, game: int) -> dict[str, Any]:
    async with server.http() as http:
        response = await http.get(f"/api/games/{game}/conditional", headers=bearer(token))
    assert response.status_code == 200, response.text
    found: dict[str, Any] = response.json()
    return found


async def move(client: Client, game: int, text: str, ply: int) -> None:
    await client.send(type="move", game=game, move=text, ply=ply)


async def test_a_line_is_played_move_after_move_and_the_rest_dropped(server: Served) -> None:
    tokens = [await member_token(server.url, name) for name in ("cora", "cato")]
    async with connect(server.url, tokens[0]) as cora, connect(server.url, tokens[1]) as cato:
        match = await start_game(cora, cato, clock={"days": 3})
        await match.play("11-15")
        lines = [["22-18", "15x22"], ["23-19", "8-11", "22-17", "9-13"], ["23-19", "9-14"]]
        stored = await put(server, tokens[0], match.id, lines)
        assert stored.status_code == 200, stored.text
        assert stored.json() == {"game": match.id, "ply": 1, "lines": lines}
        # The opponent sees none of it.
        assert (await shown(server, tokens[1], match.id))["lines"] == []
        await move(cato, match.id, "23-19", 1)
        # Cora's reply comes at once, as her own move: the first line that fits.
        reply = await cato.expect("move", ply=3)
        assert (reply["move"], reply["turn"]) == ("8-11", "white")
        assert await shown(server, tokens[0], match.id) == {
            "game": match.id,
            "ply": 3,
            "lines": [["22-17", "9-13"]],
        }
        await move(cato, match.id, "22-17", 3)
        assert (await cato.expect("move", ply=5))["move"] == "9-13"
        assert (await shown(server, tokens[0], match.id))["lines"] == []
        # A line the opponent's move leaves is dropped: nothing is played for her.
        await put(server, tokens[0], match.id, [["17-14", "10x17"]])
        await move(cato, match.id, "24-20", 5)
        moved = await cora.expect("move", ply=6)
        assert moved["turn"] == "black"
        assert (await shown(server, tokens[0], match.id))["lines"] == []
    assert not any("conditional" in str(m) for m in cato.seen)


async def test_conditional_moves_are_refused_when_they_cannot_be(server: Served) -> None:
    tokens = [await member_token(server.url, name) for name in ("dora", "dino", "dirk")]
    async with connect(server.url, tokens[0]) as dora, connect(server.url, tokens[1]) as dino:
        match = await start_game(dora, dino, clock={"days": 3})
        mine = await put(server, tokens[0], match.id, [["22-18", "15x22"]])
        assert (mine.status_code, mine.json()["error"]) == (409, "not_your_turn")
        await match.play("11-15")
        illegal = await put(server, tokens[0], match.id, [["22-18", "15x22"], ["22-18", "11-15"]])
        assert (illegal.status_code, illegal.json()["error"]) == (409, "illegal_move")
        assert illegal.json()["message"].startswith("line 2: 11-15")
        odd = await put(server, tokens[0], match.id, [["22-18", "15x22", "25x18"]])
        assert (odd.status_code, odd.json()["error"]) == (400, "bad_message")
        too_many = await put(server, tokens[0], match.id, [["22-18", "15x22"]] * 31)
        assert too_many.status_code == 422
        stranger = await put(server, tokens[2], match.id, [["22-18", "15x22"]])
        assert stranger.status_code == 404
        live = await start_game(dino, dora, clock={"base": 300, "increment": 3})
        await live.play("11-15")
        refused = await put(server, tokens[0], live.id, [["22-18", "15x22"]])
        assert (refused.status_code, refused.json()["error"]) == (400, "bad_message")
