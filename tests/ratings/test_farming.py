"""Farming a rating with helper accounts at other addresses (issue 45), and the rules against it
(docs/ratings.md, "Fair play").

The outside review's runs: a farmed account at one address, ten helpers at two others (so the
shared-address rule never meets them: they share addresses with each other, not with the
farmer), each helper resigning at its first move. Through plain rated tables it took a new
rating from 1500 to 2254 in 20 games, through rated Swisses to 2163 in 10. A rating now gains at
most `RATED_LINKED_GAIN_PER_DAY` (100) a day from such games, on every path (they all end
through `ratings.apply`); a player beating strangers at other addresses in full games climbs as
before. The review queue sees a farmer who first lost to four opponents, and shows a review's
figures as they are when a moderator reads it.

The server tests register and connect each account from its own loopback address; the
service tests store games and addresses directly and call `ratings.apply` as an ending does.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import AsyncExitStack, asynccontextmanager
from datetime import datetime, timedelta
from typing import Any

import httpx
import pytest

from app.accounts import addresses_store
from app.accounts import service as accounts
from app.config import Settings
from app.db.engine import Database
from app.db.models import Game as GameRow
from app.db.models import User
from app.ratings import DEFAULT, display, rate_game
from app.ratings import service as ratings
from app.ratings import store as stored_ratings
from app.rules import Game, Result, get_variant
from app.status import GameStatus
from app.timeutil import utcnow
from tests.conftest import make_settings
from tests.support.admin_client import ADMIN_NAME, ADMIN_PASSWORD, log_in
from tests.support.inproc import served_here
from tests.support.server import Served, http_client
from tests.support.ws import MEMBER_PASSWORD, Client, Match, connect

FARMER = "127.0.0.2"
HELPER_ADDRESSES = ("127.0.0.3", "127.0.0.4")
ALLOWANCE = 100  # the shipped RATED_LINKED_GAIN_PER_DAY


def rules(db_url: str, **overrides: Any) -> Settings:
    """The shipped fair-play rules (the suite's settings turn them off), at a script's pace."""
    shipped = {
        "rated_shared_address_days": 30.0,
        "rated_games_per_pair_per_day": 3,
        "rated_linked_gain_per_day": float(ALLOWANCE),
        "rated_short_game_plies": 20,
        "rating_review_rise": 300.0,
        "rating_review_max_opponents": 3,
    }
    return make_settings(
        database_url=db_url, ws_messages_per_second=1000.0, **(shipped | overrides)
    )


def full_game(plies: int) -> list[str]:
    """A legal opening of `plies` plies (each side's first legal move in turn): a full game's
    worth of moves, not a resignation at once."""
    game, moves = Game(get_variant("english")), []
    for _ in range(plies):
        move = game.legal_move_texts()[0]
        game.play(move)
        moves.append(move)
    assert game.outcome() is None
    return moves


# --- the server: tables, Swisses, the review queue ------------------------------------------


async def register(base_url: str, name: str, address: str) -> str:
    """An account signed up from `address`; its token."""
    async with http_client(base_url, address) as http:
        response = await http.post(
            "/api/auth/register", json={"name": name, "password": MEMBER_PASSWORD}
        )
        response.raise_for_status()
        token: str = response.json()["access_token"]
        return token


@asynccontextmanager
async def people(
    base_url: str, accounts_at: Sequence[tuple[str, str]]
) -> AsyncIterator[list[tuple[Client, str]]]:
    """Each (name, address): an account signed up and connected from its address, with its
    token."""
    async with AsyncExitStack() as stack:
        found = []
        for name, address in accounts_at:
            token = await register(base_url, name, address)
            client = await stack.enter_async_context(connect(base_url, token, source=address))
            found.append((client, token))
        yield found


def farm_crew(helpers: int = 10) -> list[tuple[str, str]]:
    """The farmer at its address, and `helpers` helpers split between two other addresses."""
    crew = [("farmer", FARMER)]
    return crew + [(f"helper{i}", HELPER_ADDRESSES[i % 2]) for i in range(helpers)]


async def table_game(
    winner: Client, loser: Client, moves: Sequence[str], room: str = "english-blitz"
) -> dict[str, Any]:
    """A game at a rated table `winner` opens as Black: `moves` played, then `loser` resigns.
    Its `game_ended`."""
    await winner.send(type="open", room=room, colour="black", rated=True)
    while (reply := await winner.recv())["type"] not in ("table", "error"):
        pass
    assert reply["type"] == "table", reply
    table = reply["table"]
    await loser.send(type="sit", table=table["id"])
    game = (await winner.expect("game_started"))["game"]
    await loser.expect("game_started")
    assert game["rated"] is True  # no address shared, the pair's games of the day not spent
    match = Match(table, game, black=winner, white=loser, ply=game["ply"], turn=game["turn"])
    await match.play(*moves)
    await loser.send(type="resign", game=match.id)
    ended = await winner.expect("game_ended", game=match.id)
    assert ended["result"] == "1-0" and ended["rating_change"] is not None, ended
    await loser.expect("game_ended", game=match.id)
    for player in (loser, winner):  # each stands up (the table closes)
        await player.send(type="leave", table=table["id"])
        await player.send(type="unwatch", table=table["id"])
        await player.send(type="ping")
        await player.expect("pong")
    errors = [m for c in (winner, loser) for m in c.seen if m["type"] == "error"]
    assert not errors, errors
    return ended


async def rating_of(base_url: str, name: str, category: str) -> tuple[int, int]:
    """(rating, rated games) in English `category`; (1500, 0) before any."""
    async with http_client(base_url) as http:
        body = (await http.get(f"/api/players/{name}")).json()
    for rating in body["ratings"]:
        if (rating["variant"], rating["category"]) == ("english", category):
            return rating["rating"], rating["games"]
    return 1500, 0


async def test_ten_helpers_at_two_addresses_lift_a_table_rating_by_100_at_most(
    db_url: str,
) -> None:
    """The review's table run: 20 rated blitz games, each helper resigning at ply 2 (two games
    each, within the pair's three a day). Every game is rated, and the farmer gains 100."""
    async with served_here(rules(db_url)) as server, people(server.url, farm_crew()) as crew:
        farmer, helpers = crew[0][0], [client for client, _ in crew[1:]]
        for number in range(20):
            await table_game(farmer, helpers[number % len(helpers)], ("11-15", "22-18"))
        rating, games = await rating_of(server.url, "farmer", "blitz")
    assert games == 20
    assert rating <= 1500 + ALLOWANCE


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


async def get(http: httpx.AsyncClient, tournament_id: int) -> dict[str, Any]:
    response = await http.get(f"/api/tournaments/{tournament_id}")
    assert response.status_code == 200, response.text
    shown: dict[str, Any] = response.json()
    return shown


async def entered(http: httpx.AsyncClient, tokens: list[str], **fields: Any) -> dict[str, Any]:
    """A tournament created by the first of `tokens` to start in ten minutes, joined by all of
    them, then moved to start now (as tests/tournaments/test_tournaments.py enters one)."""
    body = {"name": "Club night", "clock": {"base": 60, "increment": 0}} | fields
    made = await http.post(
        "/api/tournaments", json=body | {"starts_in": 600}, headers=bearer(tokens[0])
    )
    assert made.status_code == 201, made.text
    tournament_id = made.json()["id"]
    for token in tokens:
        joined = await http.post(f"/api/tournaments/{tournament_id}/join", headers=bearer(token))
        assert joined.status_code == 200, joined.text
    moved = await http.put(
        f"/api/tournaments/{tournament_id}", json=body | {"starts_in": 0}, headers=bearer(tokens[0])
    )
    assert moved.status_code == 200, moved.text
    return await get(http, tournament_id)


async def next_game(client: Client, **fields: Any) -> dict[str, Any]:
    """The player's next `your_game`, with its table watched (its events come then)."""
    notice = await client.expect("your_game", **fields)
    await client.send(type="watch", table=notice["table"])
    await client.expect("table")
    return notice


async def until(
    http: httpx.AsyncClient,
    tournament_id: int,
    done: Callable[[dict[str, Any]], bool],
    what: str,
) -> dict[str, Any]:
    """The tournament once `done(shown)` holds (the director steps every second)."""
    for _ in range(100):
        shown = await get(http, tournament_id)
        if done(shown):
            return shown
        await asyncio.sleep(0.1)
    raise AssertionError(f"{what}: {shown}")


async def test_ten_helpers_at_two_addresses_lift_a_rating_through_swisses_by_100_at_most(
    db_url: str,
) -> None:
    """The review's Swiss run: four rated Swisses of the farmer and three of its helpers, three
    rounds each, every helper resigning at ply 2 against the farmer (their games among
    themselves resigned at once). Twelve rated wins for the farmer; it gains 100."""
    farmer_wins = 0
    async with served_here(rules(db_url)) as server, people(server.url, farm_crew()) as crew:
        by_name = {client.welcome["user"]["name"]: client for client, _ in crew}
        farmer = by_name["farmer"]
        async with server.http() as http:
            for swiss in range(4):
                helpers = [crew[1 + (3 * swiss + i) % 10] for i in range(3)]
                made = await entered(
                    http,
                    [token for _, token in [crew[0], *helpers]],
                    kind="swiss",
                    rounds=3,
                    rated=True,
                    name=f"Farm {swiss}",
                )
                for number in (1, 2, 3):
                    shown = await until(
                        http,
                        made["id"],
                        lambda t, n=number: t["round"] == n and len(t["playing"]) == 2,
                        f"round {number}",
                    )
                    for game in shown["playing"]:
                        black, white = by_name[game["black"]], by_name[game["white"]]
                        for client in (black, white):
                            await next_game(client, game=game["id"])
                        if farmer in (black, white):
                            helper = white if black is farmer else black
                            match = Match({"id": 0}, {"id": game["id"]}, black=black, white=white)
                            await match.play("11-15", "22-18")
                            await helper.send(type="resign", game=game["id"])
                            ended = await farmer.expect("game_ended", game=game["id"])
                            assert ended["rating_change"] is not None, ended  # rated
                            await helper.expect("game_ended", game=game["id"])
                            farmer_wins += 1
                        else:
                            await black.send(type="resign", game=game["id"])
                            for client in (black, white):
                                await client.expect("game_ended", game=game["id"])
                finished = await until(
                    http, made["id"], lambda t: t["status"] == "finished", "the end"
                )
                assert len(finished["rounds_played"]) == 3
        rating, games = await rating_of(server.url, "farmer", "bullet")
    assert farmer_wins == games == 12
    assert rating <= 1500 + ALLOWANCE


async def test_a_player_beating_strangers_in_full_games_climbs_as_before(db_url: str) -> None:
    """An ordinary new player: four rated wins, each against another stranger at an address of
    their own, each a full game (24 plies before the resignation). Nothing is withheld: the
    rating is Glicko-2's, far above 1600."""
    strangers = [(f"stranger{i}", f"127.0.0.{3 + i}") for i in range(4)]
    moves = full_game(24)
    async with (
        served_here(rules(db_url)) as server,
        people(server.url, [("olivia", FARMER), *strangers]) as crew,
    ):
        olivia = crew[0][0]
        expected = DEFAULT
        for stranger, _ in crew[1:]:
            ended = await table_game(olivia, stranger, moves)
            change, _ = rate_game(expected, DEFAULT, 1.0)
            expected = change.after
            assert ended["rating_change"]["black"]["after"] == display(expected.rating)
        rating, games = await rating_of(server.url, "olivia", "blitz")
        assert (rating, games) == (display(expected.rating), 4)
        assert rating > 1800


async def open_reviews(server: Served) -> list[dict[str, Any]]:
    """The open reviews as a moderator reads them (the administrator made if need be)."""
    async with server.app.state.db.session() as session:
        if await accounts.find_user(session, ADMIN_NAME) is None:
            await accounts.create_admin(session, ADMIN_NAME, ADMIN_PASSWORD)
    async with server.http() as http:
        token = (await log_in(http, ADMIN_NAME, ADMIN_PASSWORD)).json()["access_token"]
        response = await http.get("/api/admin/reviews", headers=bearer(token))
    assert response.status_code == 200, response.text
    queued: list[dict[str, Any]] = response.json()["data"]
    return queued


async def test_a_review_shows_the_figures_of_when_it_is_read(db_url: str) -> None:
    """The farmer's gains are withheld, so it is queued; the review a moderator reads has the
    rating and the week's figures as they are then, not as they were when it was queued."""
    async with served_here(rules(db_url)) as server, people(server.url, farm_crew(4)) as crew:
        farmer, helpers = crew[0][0], [client for client, _ in crew[1:]]
        for number in range(4):
            await table_game(farmer, helpers[number], ("11-15", "22-18"))
        first = await open_reviews(server)
        assert [(r["name"], r["variant"], r["category"]) for r in first] == [
            ("farmer", "english", "blitz")
        ]
        rating, games = await rating_of(server.url, "farmer", "blitz")
        figures = first[0]["figures"]
        assert (figures["rating"], figures["games"], figures["week_games"]) == (rating, games, 4)
        assert figures["day_linked_gain"] == rating - 1500 == ALLOWANCE
        assert figures["week_climb"] == ALLOWANCE and figures["week_opponents"] == 4
        assert figures["week_withheld"] > 0
        for number in range(4):
            await table_game(farmer, helpers[number], ("11-15", "22-18"))
        later = await open_reviews(server)
        assert [r["id"] for r in later] == [first[0]["id"]]
        assert later[0]["reason"] == first[0]["reason"]  # why it was queued
        now = later[0]["figures"]
        assert (now["games"], now["week_games"]) == (8, 8)
        assert now["week_withheld"] > figures["week_withheld"]


# --- the service: the rules one by one ---------------------------------------------------------


@pytest.fixture
async def db(db_url: str) -> AsyncIterator[Database]:
    database = Database(db_url)
    try:
        yield database
    finally:
        await database.dispose()


async def accounts_at(db: Database, *addresses: str, at: datetime) -> list[int]:
    """A registered account per address (each having used only that one), their ids."""
    async with db.session() as session:
        users = [
            User(name=f"u{n}-{address}", kind="registered") for n, address in enumerate(addresses)
        ]
        session.add_all(users)
        await session.flush()
        for user, address in zip(users, addresses, strict=True):
            await addresses_store.note(session, user.id, address, at)
        await session.commit()
        return [user.id for user in users]


async def rated_game(
    db: Database,
    settings: Settings,
    black: int,
    white: int,
    at: datetime,
    *,
    plies: int = 40,
    result: str = Result.BLACK_WINS,
) -> dict[str, Any]:
    """A rated blitz game between the two, ended at `at` after `plies` plies and rated as an
    ending rates it; its rating change."""
    async with db.session() as session:
        row = GameRow(
            variant="english",
            black_id=black,
            white_id=white,
            status=GameStatus.FINISHED,
            result=result,
            termination="resignation",
            rated=True,
            ply_count=plies,
            clock_base_s=180,
            clock_increment_s=2,
        )
        session.add(row)
        await session.flush()
        change = await ratings.apply(session, row, at, settings)
        await session.commit()
    assert change is not None
    return dict(change)


async def rating_now(db: Database, user_id: int) -> int:
    async with db.session() as session:
        user = await session.get(User, user_id)
        assert user is not None
        shown = await ratings.player_ratings(session, user.name)
    return shown[0].rating


async def test_helpers_sharing_addresses_count_as_one_source_even_in_full_games(
    db: Database, db_url: str
) -> None:
    """Full games (40 plies) against ten helpers at two addresses: the first game against each
    address's helpers rates freely, every later gain from them comes out of the day's
    allowance."""
    now = utcnow()
    settings = rules(db_url)
    farmer, *helpers = await accounts_at(db, FARMER, *(HELPER_ADDRESSES * 5), at=now)
    free = DEFAULT
    for number, helper in enumerate(helpers):
        change = await rated_game(db, settings, farmer, helper, now + timedelta(minutes=number))
        if number < 2:  # one helper of each address
            free = rate_game(free, DEFAULT, 1.0)[0].after
            assert change["black"]["after"] == display(free.rating)
    assert abs(await rating_now(db, farmer) - (free.rating + ALLOWANCE)) <= 1


async def test_short_games_count_against_the_allowance_whoever_the_opponent(
    db: Database, db_url: str
) -> None:
    """Four strangers at four addresses, each losing at ply 4: every gain is a short game's;
    the day's allowance is all the player keeps, the fourth win gains nothing. A day later
    there is another allowance."""
    now = utcnow()
    settings = rules(db_url)
    player, *strangers = await accounts_at(
        db, "10.0.0.1", "10.0.0.2", "10.0.0.3", "10.0.0.4", "10.0.0.5", at=now
    )
    for number, stranger in enumerate(strangers):
        change = await rated_game(
            db, settings, player, stranger, now + timedelta(minutes=number), plies=4
        )
    assert change["black"]["diff"] == 0
    assert await rating_now(db, player) == 1500 + ALLOWANCE
    change = await rated_game(
        db, settings, player, strangers[0], now + timedelta(days=1, minutes=4), plies=4
    )
    assert 0 < change["black"]["diff"] <= ALLOWANCE


async def test_a_farmer_who_first_loses_to_four_opponents_is_queued(
    db: Database, db_url: str
) -> None:
    """The allowance off: the farmer loses four full games to four strangers, then beats two
    helpers again and again. Its rating climbed far from its lowest point that week, its gains
    all won against two opponents: it is queued for a moderator."""
    now = utcnow()
    settings = rules(db_url, rated_linked_gain_per_day=1_000_000.0)
    farmer, *others = await accounts_at(
        db,
        "10.0.0.1",
        "10.0.0.2",
        "10.0.0.3",
        "10.0.0.4",
        "10.0.0.5",
        "10.0.1.1",
        "10.0.1.2",
        at=now,
    )
    strangers, helpers = others[:4], others[4:]
    at = now
    for stranger in strangers:
        at += timedelta(minutes=1)
        await rated_game(db, settings, farmer, stranger, at, result=Result.WHITE_WINS)
    for number in range(6):
        at += timedelta(minutes=1)
        await rated_game(db, settings, farmer, helpers[number % 2], at)
    async with db.session() as session:
        queued = await ratings_reviews(session)
    assert [(user_id, category) for user_id, category, _ in queued] == [(farmer, "blitz")]
    assert "2 opponent(s)" in queued[0][2]


async def ratings_reviews(session: Any) -> list[tuple[int, str, str]]:
    """(user id, category, reason) of the open reviews."""
    return [(row[1], row[4], row[5]) for row in await stored_ratings.reviews(session)]
