"""Ratings that say how well people play: the farming run of an outside tester (one address,
one account and four helpers, rated blitz games the helpers resign at once) moves the farmed
rating by nothing, and each rule of the fair-play policy is seen doing its part in it.

Every client comes from 127.0.0.1, so the accounts share an address, as the tester's did."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from typing import Any

from app.accounts import service as accounts
from app.config import Settings
from tests.conftest import make_settings
from tests.support.admin_client import ADMIN_NAME, ADMIN_PASSWORD, log_in
from tests.support.inproc import served_here
from tests.support.server import http_client
from tests.support.ws import Client, Match, connect, member_token

HELPERS = 4


@asynccontextmanager
async def farm_accounts(base_url: str) -> AsyncIterator[tuple[Client, list[Client]]]:
    """The farmed account and its helpers, each connected."""
    async with AsyncExitStack() as stack:
        farmer = await stack.enter_async_context(
            connect(base_url, await member_token(base_url, "farmer"))
        )
        helpers = [
            await stack.enter_async_context(
                connect(base_url, await member_token(base_url, f"helper{i}"))
            )
            for i in range(HELPERS)
        ]
        yield farmer, helpers


async def farm(farmer: Client, helpers: list[Client], games: int) -> list[dict[str, Any]]:
    """`games` rated blitz games of the farmer as Black, the helpers in turn resigning after
    their first move; each game's `game_started` game."""
    started = []
    for number in range(games):
        helper = helpers[number % len(helpers)]
        await farmer.send(type="open", room="english-blitz", colour="black", rated=True)
        while (reply := await farmer.recv())["type"] not in ("table", "error"):
            pass
        assert reply["type"] == "table", (number, reply)
        table = reply["table"]
        await helper.send(type="sit", table=table["id"])
        game = (await farmer.expect("game_started"))["game"]
        await helper.expect("game_started")
        started.append(game)
        match = Match(table, game, black=farmer, white=helper, ply=game["ply"], turn=game["turn"])
        await match.play("11-15", "22-18")
        await helper.send(type="resign", game=match.id)
        ended = await farmer.expect("game_ended", game=match.id)
        assert ended["result"] == "1-0"
        await helper.expect("game_ended", game=match.id)
        for player in (helper, farmer):  # each stands up (the table closes), in this order
            await player.send(type="leave", table=table["id"])
            await player.send(type="unwatch", table=table["id"])  # as a page leaving it does
            await player.send(type="ping")
            await player.expect("pong")
        errors = [m for c in (farmer, helper) for m in c.seen if m["type"] == "error"]
        assert not errors, errors
    return started


async def blitz_rating(base_url: str, name: str) -> tuple[int, int]:
    """(rating, rated games) in English blitz; (1500, 0) before any."""
    async with http_client(base_url) as http:
        body = (await http.get(f"/api/players/{name}")).json()
    for rating in body["ratings"]:
        if (rating["variant"], rating["category"]) == ("english", "blitz"):
            return rating["rating"], rating["games"]
    return 1500, 0


def settings_for(db_url: str, **overrides: Any) -> Settings:
    # As fast as the tester's script: more messages a second than a person sends.
    # The shipped fair-play rules, which the other tests' settings turn off.
    rules = {"rated_shared_address_days": 30.0, "rated_games_per_pair_per_day": 3}
    return make_settings(
        database_url=db_url,
        registrations_per_address=HELPERS + 1,
        ws_messages_per_second=1000.0,
        **(rules | overrides),
    )


async def test_a_private_table_cannot_be_rated(db_url: str) -> None:
    async with (
        served_here(settings_for(db_url)) as server,
        farm_accounts(server.url) as (farmer, _),
    ):
        await farmer.send(type="open", room="english-blitz", rated=True, private=True)
        refused = await farmer.expect("error")
        assert refused["code"] == "rated_not_private"


async def test_the_farming_run_moves_no_rating(db_url: str) -> None:
    """The tester's run: 60 rated games against one's own accounts, from one address. Every
    game is casual (the accounts share the address): the farmed rating stays at 1500."""
    async with served_here(settings_for(db_url)) as server:
        async with farm_accounts(server.url) as (farmer, helpers):
            started = await farm(farmer, helpers, 60)
        assert {game["rated"] for game in started} == {False}
        assert await blitz_rating(server.url, "farmer") == (1500, 0)


async def test_a_pair_moves_ratings_a_few_times_a_day(db_url: str) -> None:
    """The address rule off: each pair's first three games a day are rated, no more."""
    settings = settings_for(db_url, rated_shared_address_days=0, rating_review_rise=10_000)
    async with served_here(settings) as server:
        async with farm_accounts(server.url) as (farmer, helpers):
            started = await farm(farmer, helpers, 20)
        rated = [game["rated"] for game in started]
        assert rated == [True] * 12 + [False] * 8  # four helpers, three games each
        assert (await blitz_rating(server.url, "farmer"))[1] == 12
        assert (await blitz_rating(server.url, "helper0"))[1] == 3


async def test_a_sharp_rise_against_few_opponents_is_queued_for_a_moderator(db_url: str) -> None:
    """The address and pair rules off: the farmed rating climbs, and the account is queued
    for review once it rose 300 points against at most three opponents; a moderator sees it
    and resolves it."""
    settings = settings_for(db_url, rated_shared_address_days=0, rated_games_per_pair_per_day=100)
    async with served_here(settings) as server:
        async with farm_accounts(server.url) as (farmer, helpers):
            await farm(farmer, helpers[:2], 12)
        rating, games = await blitz_rating(server.url, "farmer")
        assert games == 12 and rating >= 1800
        async with server.app.state.db.session() as session:
            await accounts.create_admin(session, ADMIN_NAME, ADMIN_PASSWORD)
        async with server.http() as http:
            token = (await log_in(http, ADMIN_NAME, ADMIN_PASSWORD)).json()["access_token"]
            admin = {"Authorization": f"Bearer {token}"}
            assert (await http.get("/api/admin/reviews")).status_code == 401
            queued = (await http.get("/api/admin/reviews", headers=admin)).json()["data"]
            assert [(r["name"], r["variant"], r["category"]) for r in queued] == [
                ("farmer", "english", "blitz")
            ]
            assert "2 opponent(s)" in queued[0]["reason"]
            done = await http.post(f"/api/admin/reviews/{queued[0]['id']}/resolve", headers=admin)
            assert done.status_code == 200, done.text
            assert (await http.get("/api/admin/reviews", headers=admin)).json()["data"] == []
