"""Rated games over the websocket, on real servers: the ending stores both ratings once and
`game_ended` carries the change; casual and too-short games move nothing; guests cannot play
rated; an ending raced on two server processes rates the game once."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import replace
from typing import Any

import pytest
from prometheus_client import REGISTRY
from sqlalchemy import func, select

from app.db.engine import Database
from app.db.models import Rating, RatingChange
from app.play import cache as game_cache
from app.play import games
from app.rules import Game, get_variant
from tests.conftest import PrivateRedis, make_settings
from tests.support.server import Served, cluster, http_client
from tests.support.ws import Client, connect, guest, member_token, start_game

PASSWORD = "a fine long passphrase"
# A whole game from the standard start in which White gives its pieces away: Black's 41st ply
# leaves White without a move, so the game ends with a move (the move path's ending).
GIVEAWAY = [
    "9-14",
    "21-17",
    "14x21",
    "22-17",
    "6-9",
    "17-14",
    "9x18",
    "23x14",
    "10x17",
    "26-22",
    "17x26",
    "30x23",
    "21x30",
    "29-25",
    "30x21",
    "23-18",
    "7-10",
    "18-14",
    "10x17",
    "24-19",
    "5-9",
    "19-15",
    "11x18",
    "27-23",
    "18x27",
    "31x24",
    "9-14",
    "24-19",
    "8-11",
    "19-15",
    "11x18",
    "28-24",
    "4-8",
    "24-19",
    "8-11",
    "19-16",
    "12x19",
    "32-27",
    "3-8",
    "27-23",
    "19x26",
]


def test_the_giveaway_game_ends_with_blacks_last_move() -> None:
    game = Game(get_variant("english"))
    for move in GIVEAWAY:
        assert game.outcome() is None
        game.play(move)
    outcome = game.outcome()
    assert outcome is not None and outcome.result() == "1-0"


@asynccontextmanager
async def member(base_url: str, name: str) -> AsyncIterator[Client]:
    async with connect(base_url, await member_token(base_url, name, PASSWORD)) as client:
        yield client


async def player(base_url: str, name: str) -> dict[str, Any]:
    async with http_client(base_url) as http:
        response = await http.get(f"/api/players/{name}")
        response.raise_for_status()
        body: dict[str, Any] = response.json()
        return body


async def stored(db_url: str) -> tuple[list[tuple[int, str, str, int]], int]:
    db = Database(db_url)
    try:
        async with db.session() as session:
            rows = await session.execute(
                select(Rating.user_id, Rating.variant, Rating.category, Rating.games).order_by(
                    Rating.user_id, Rating.category
                )
            )
            changes = await session.scalar(select(func.count()).select_from(RatingChange))
            return [(r[0], r[1], r[2], r[3]) for r in rows], int(changes or 0)
    finally:
        await db.dispose()


async def test_a_rated_game_won_by_a_move_updates_both_ratings_once(
    server: Served, db_url: str
) -> None:
    async with member(server.url, "alice") as a, member(server.url, "bob") as b:
        match = await start_game(a, b, room="english-blitz", rated=True)
        assert match.table["rated"] is True
        await match.play(*GIVEAWAY[:-1])
        await a.send(type="move", game=match.id, move=GIVEAWAY[-1], ply=match.ply)
        for client in (a, b):
            ended = await client.expect("game_ended")
            assert (ended["result"], ended["termination"]) == ("1-0", "no_moves")
            assert ended["rating_change"] == {
                "black": {"before": 1500, "after": 1741, "diff": 241},
                "white": {"before": 1500, "after": 1258, "diff": -242},
            }
    assert await stored(db_url) == (
        [(a.user_id, "english", "blitz", 1), (b.user_id, "english", "blitz", 1)],
        2,
    )
    profile = await player(server.url, "alice")
    assert profile["ratings"] == [
        {
            "category": "blitz",
            "variant": "english",
            "rating": 1741,
            "rd": pytest.approx(396.69, abs=0.01),
            "volatility": pytest.approx(0.09, abs=0.0001),
            "games": 1,
            "provisional": True,
        }
    ]


async def test_a_resignation_in_a_rated_game_moves_the_ratings(server: Served, db_url: str) -> None:
    async with member(server.url, "carol") as a, member(server.url, "dave") as b:
        match = await start_game(a, b, clock={"base": 60, "increment": 0}, rated=True)
        await match.play("11-15", "22-18")
        await a.send(type="resign", game=match.id)
        ended = await b.expect("game_ended")
        assert ended["rating_change"]["white"] == {"before": 1500, "after": 1741, "diff": 241}
        assert ended["rating_change"]["black"]["diff"] == -242
    rows, changes = await stored(db_url)
    assert [(r[2], r[3]) for r in rows] == [("bullet", 1), ("bullet", 1)] and changes == 2


async def test_a_finished_games_snapshot_carries_its_rating_change(server: Served) -> None:
    async with member(server.url, "hana") as a, member(server.url, "ivan") as b:
        match = await start_game(a, b, room="english-blitz", rated=True)
        await match.play("11-15", "22-18")
        await a.send(type="resign", game=match.id)
        ended = await a.expect("game_ended")
        assert ended["rating_change"] is not None
        casual = await start_game(a, b)
        await casual.play("11-15", "22-18")
        await a.send(type="resign", game=casual.id)
        await a.expect("game_ended")
    # A reload: a fresh connection's snapshot of each table shows what `game_ended` said.
    async with guest(server.url) as spectator:
        await spectator.send(type="watch", table=match.table["id"])
        game = (await spectator.expect("table"))["game"]
        assert (game["id"], game["status"]) == (match.id, "finished")
        assert game["rating_change"] == ended["rating_change"]
        await spectator.send(type="watch", table=casual.table["id"])
        game = (await spectator.expect("table"))["game"]
        assert (game["id"], game["rating_change"]) == (casual.id, None)


async def test_casual_and_too_short_games_move_no_rating(server: Served, db_url: str) -> None:
    async with member(server.url, "erin") as a, member(server.url, "frank") as b:
        casual = await start_game(a, b)
        assert casual.table["rated"] is False
        await casual.play("11-15", "22-18")
        await a.send(type="resign", game=casual.id)
        assert (await b.expect("game_ended"))["rating_change"] is None
        short = await start_game(a, b, room="english-blitz", rated=True)
        await short.play("11-15")  # one ply
        await a.send(type="resign", game=short.id)
        ended = await b.expect("game_ended")
        assert ended["termination"] == "resignation" and ended["rating_change"] is None
    assert await stored(db_url) == ([], 0)
    assert (await player(server.url, "erin"))["ratings"] == []


@pytest.mark.server
async def test_rated_tables_are_for_registered_accounts_and_the_standard_start(
    server: Served,
) -> None:
    async with guest(server.url) as visitor, member(server.url, "grace") as host:
        await visitor.send(type="open", room="english-blitz", rated=True)
        assert (await visitor.error())["code"] == "rated_needs_account"
        await host.send(type="open", room="english-blitz", rated=True, start_fen="B:W21-32:B1-12")
        assert (await host.error())["code"] == "rated_from_position"
        await host.send(type="open", room="english-blitz", rated="yes")
        assert (await host.error())["code"] == "bad_message"
        await host.send(type="open", room="english-blitz", rated=True)
        table = (await host.expect("table"))["table"]
        await visitor.send(type="sit", table=table["id"])
        assert (await visitor.error())["code"] == "rated_needs_account"


@pytest.fixture
async def two_servers(db_url: str, private_redis: PrivateRedis) -> AsyncIterator[list[Served]]:
    settings = make_settings(database_url=db_url, redis_url=private_redis.url)
    async with cluster(settings) as servers:
        yield servers


async def test_endings_raced_on_two_servers_rate_the_game_once(
    two_servers: list[Served], db_url: str
) -> None:
    if not db_url.startswith("postgresql"):
        pytest.skip("several server processes share a database on PostgreSQL")
    one, two = two_servers
    async with member(one.url, "heidi") as a, member(two.url, "ivan") as b:
        match = await start_game(a, b, room="english-blitz", rated=True)
        await match.play("11-15", "22-18")
        # Both players end the game at once, each through their own server process: one
        # resignation is stored, the other is refused as too late.
        await asyncio.gather(
            a.send(type="resign", game=match.id), b.send(type="resign", game=match.id)
        )
        ended = [await c.expect("game_ended", game=match.id) for c in (a, b)]
        assert ended[0]["rating_change"] is not None
        assert ended[0]["rating_change"] == ended[1]["rating_change"]
        for client in (a, b):
            await client.send(type="ping")
            await client.expect("pong")
            assert sum(m["type"] == "game_ended" for m in client.seen) == 1
        # A resignation sent on one server as the flag falls on the other (whose timer serves
        # the clock: it stored the last move). Whichever is stored first ends the game.
        bullet = await start_game(a, b, clock={"base": 2, "increment": 0}, rated=True)
        last = await bullet.play("11-15", "22-18")
        deadline = (last["at"] + last["clocks"]["black"]) / 1000
        await asyncio.sleep(max(0.0, deadline - time.time()))
        await a.send(type="resign", game=bullet.id)
        ended = [await c.expect("game_ended", game=bullet.id) for c in (a, b)]
        assert ended[0]["termination"] in ("resignation", "timeout")
        assert ended[0]["rating_change"] == ended[1]["rating_change"] is not None
        for client in (a, b):
            await client.send(type="ping")
            await client.expect("pong")
            assert sum(m["type"] == "game_ended" for m in client.seen) == 2
    rows, changes = await stored(db_url)
    assert [(r[2], r[3]) for r in rows] == [
        ("blitz", 1),
        ("bullet", 1),
        ("blitz", 1),
        ("bullet", 1),
    ]
    assert changes == 4


async def test_a_game_started_on_one_server_is_served_by_the_other_without_reading_it(
    two_servers: list[Served], db_url: str
) -> None:
    """The process a game did not start on builds its copy from `game_started`: the first
    move there needs no query, and a rated game ended there by a move is rated."""
    if not db_url.startswith("postgresql"):
        pytest.skip("several server processes share a database on PostgreSQL")
    one, two = two_servers
    loaded_before = REGISTRY.get_sample_value("checkers_games_loaded_total") or 0.0
    async with member(one.url, "judy") as a, member(two.url, "karl") as b:
        # `b` sits down through the second server, which starts the game.
        match = await start_game(a, b, room="english-blitz", rated=True)
        live = one.app.state.live
        copy = live.games.get(match.id)
        assert copy is not None, "the first server did not take the game from its start event"
        stored = await game_cache.read(live, match.id)
        assert stored is not None and copy.table is not None and stored.table is not None
        now = time.time()
        assert games.game_payload(live, copy, now) == games.game_payload(live, stored, now)
        assert replace(copy.table, invite=None) == replace(stored.table, invite=None)
        await match.play(*GIVEAWAY[:-1])
        # The game-ending move, on the first server: rated from the table the event carried.
        await a.send(type="move", game=match.id, move=GIVEAWAY[-1], ply=match.ply)
        for client in (a, b):
            ended = await client.expect("game_ended")
            assert ended["rating_change"]["black"]["diff"] > 0
            update = await client.expect("table_update")
            assert update["state"]["status"] == "finished"
    assert (REGISTRY.get_sample_value("checkers_games_loaded_total") or 0.0) == loaded_before
