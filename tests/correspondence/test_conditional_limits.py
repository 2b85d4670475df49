"""Storing conditional moves is rate-limited per user (issue 45): each store checks up to 30
lines of 30 plies against the rules, so a player may store `CONDITIONAL_SAVES_PER_MINUTE` times
at once and then one every 60 / that many seconds, across their games; beyond, 429
`rate_limited` with Retry-After, and nothing is stored. Reading them is not limited."""

from __future__ import annotations

import httpx
import pytest

from app.config import Settings
from tests.conftest import make_settings
from tests.support.server import Served
from tests.support.ws import connect, member_token, start_game

SAVES = 3  # a minute: one every 20 s once spent


@pytest.fixture
def settings(db_url: str) -> Settings:
    return make_settings(database_url=db_url, conditional_saves_per_minute=SAVES)


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


async def put(server: Served, token: str, game: int, lines: list[list[str]]) -> httpx.Response:
    async with server.http() as http:
        return await http.put(
            f"/api/games/{game}/conditional", json={"lines": lines}, headers=bearer(token)
        )


async def test_a_player_stores_conditional_moves_a_few_times_a_minute(server: Served) -> None:
    tokens = [await member_token(server.url, name) for name in ("cleo", "cyd")]
    async with connect(server.url, tokens[0]) as cleo, connect(server.url, tokens[1]) as cyd:
        match = await start_game(cleo, cyd, clock={"days": 3})
        await match.play("11-15")
        lines = [["22-18", "15x22"], ["23-19", "8-11"]] * 15  # 30 lines, each checked
        for _ in range(SAVES):
            assert (await put(server, tokens[0], match.id, lines)).status_code == 200
        refused = await put(server, tokens[0], match.id, [["22-18", "15x22"]])
        assert (refused.status_code, refused.json()["error"]) == (429, "rate_limited")
        assert 1 <= int(refused.headers["Retry-After"]) <= 60 // SAVES
        async with server.http() as http:  # nothing stored; reading is not limited
            for _ in range(SAVES + 1):
                shown = await http.get(
                    f"/api/games/{match.id}/conditional", headers=bearer(tokens[0])
                )
                assert shown.json()["lines"] == lines
        # The limit is the player's: the opponent's refusal is about the game, not the rate.
        theirs = await put(server, tokens[1], match.id, [["15-19", "24x15"]])
        assert (theirs.status_code, theirs.json()["error"]) == (409, "not_your_turn")
        # A store's worth drains in 60 / SAVES seconds.
        server.clock.advance(60 / SAVES)
        again = await put(server, tokens[0], match.id, [["22-18", "15x22"]])
        assert again.status_code == 200, again.text
        assert (await put(server, tokens[0], match.id, [])).status_code == 429
