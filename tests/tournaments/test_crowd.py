"""A 30-player arena played to the end by bots over real websockets, the players split between
two server processes sharing a PostgreSQL database and a Redis broker: each process runs the
director, and the arena is paired as if there were one (nobody in two games at once, no
immediate rematch), every game is scored once, and it ends when its time is up and its last
game has ended."""

from __future__ import annotations

import asyncio
import contextlib
import json
import random
from collections import defaultdict
from typing import Any

import pytest

from tests.support.server import Served
from tests.support.ws import Client, connect, member_token

PLAYERS = 30
PLAY_SECONDS = 8.0
WAVES = 3
WAIT_SECONDS = 20.0


class Bot:
    """Plays every game it is given with random legal moves, as fast as the server answers."""

    def __init__(self, client: Client, seed: int) -> None:
        self.client = client
        self.rng = random.Random(seed)
        self.games: list[int] = []
        self.playing: set[int] = set()
        self.overlaps = 0
        self.colours: dict[int, str] = {}

    async def run(self) -> None:
        while True:
            message = await self.client.ws.recv()
            event = json.loads(message)
            kind = event.get("type")
            if kind == "your_game":
                if self.playing:
                    self.overlaps += 1  # a new game while one is in progress
                self.games.append(event["game"])
                self.playing.add(event["game"])
                await self.client.send(type="watch", table=event["table"])
            elif kind == "table":
                game = event.get("game")
                if game and game["id"] in self.playing:
                    black = game["black"]["id"] == self.client.user_id
                    self.colours[game["id"]] = "black" if black else "white"
                    await self._move(game["id"], game["ply"], game["turn"], game["legal_moves"])
            elif kind == "move" and event["game"] in self.playing:
                await self._move(event["game"], event["ply"], event["turn"], event["legal_moves"])
            elif kind == "game_ended":
                self.playing.discard(event["game"])

    async def _move(self, game_id: int, ply: int, turn: str, legal: list[str]) -> None:
        if self.colours.get(game_id) == turn and legal:
            await self.client.send(type="move", game=game_id, move=self.rng.choice(legal), ply=ply)


async def test_thirty_bots_play_an_arena_to_the_end_on_two_processes(
    two_servers: list[Served], db_url: str
) -> None:
    if not db_url.startswith("postgresql"):
        pytest.skip("several server processes share a database on PostgreSQL")
    one, two = two_servers
    async with contextlib.AsyncExitStack() as stack:
        bots: list[Bot] = []
        tokens: list[str] = []
        for number in range(PLAYERS):
            server = (one, two)[number % 2]
            token = await member_token(server.url, f"crowd{number:02d}")
            client = await stack.enter_async_context(connect(server.url, token))
            bots.append(Bot(client, number))
            tokens.append(token)
        http = await stack.enter_async_context(one.http())
        made = await http.post(
            "/api/tournaments",
            json={"kind": "arena", "name": "Crowd", "minutes": 1, "starts_in": 0}
            | {"clock": {"base": 60, "increment": 1}},
            headers={"Authorization": f"Bearer {tokens[0]}"},
        )
        assert made.status_code == 201, made.text
        arena_id = made.json()["id"]
        for token in tokens:
            joined = await http.post(
                f"/api/tournaments/{arena_id}/join", headers={"Authorization": f"Bearer {token}"}
            )
            assert joined.status_code == 200, joined.text
        runners = [asyncio.create_task(bot.run()) for bot in bots]
        try:
            # Real time plays the games; the clock (both processes share it) is moved on by
            # the waiting time of a wave (16 s at 1+1) between waves, a few times.
            for _ in range(WAVES):
                await asyncio.sleep(PLAY_SECONDS / WAVES)
                one.clock.advance(17)
            # Time is up: no more pairings; the flags of the games in progress fall on the way.
            one.clock.advance(121)
            give_up = asyncio.get_running_loop().time() + WAIT_SECONDS
            while True:
                shown = (await http.get(f"/api/tournaments/{arena_id}")).json()
                if shown["status"] == "finished":
                    break
                assert asyncio.get_running_loop().time() < give_up, shown
                await asyncio.sleep(0.2)
        finally:
            for task in runners:
                task.cancel()
            await asyncio.gather(*runners, return_exceptions=True)
    standings = shown["standings"]
    assert len(standings) == PLAYERS
    assert [row["rank"] for row in standings] == list(range(1, PLAYERS + 1))
    assert all(bot.overlaps == 0 for bot in bots), [bot.overlaps for bot in bots]
    # Every game the bots were given is the tournament's, and each counted once.
    async with one.http() as http:
        games: dict[int, dict[str, Any]] = {}
        for game_id in {g for bot in bots for g in bot.games}:
            games[game_id] = (await http.get(f"/api/games/{game_id}")).json()
    assert len(games) > PLAYERS // 2  # the first wave (15 games), and more as games ended
    assert all(g["tournament"] == arena_id and g["status"] != "playing" for g in games.values())
    counted = [g for g in games.values() if g["status"] == "finished"]
    assert sum(row["games"] for row in standings) == 2 * len(counted)
    # Nobody was paired with the opponent of their previous game at once.
    history: dict[str, list[tuple[str, str]]] = defaultdict(list)
    for game in sorted(games.values(), key=lambda g: (g["started_at"], g["id"])):
        history[game["black"]].append((game["started_at"], game["white"]))
        history[game["white"]].append((game["started_at"], game["black"]))
    for name, played in history.items():
        opponents = [opponent for _, opponent in played]
        repeats = [a for a, b in zip(opponents, opponents[1:], strict=False) if a == b]
        assert not repeats, (name, opponents)
    # Each sheet adds up to its score.
    assert all(sum(row["sheet"]) == row["score"] for row in standings)
