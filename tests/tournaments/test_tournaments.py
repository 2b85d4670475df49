"""Tournaments on a real server, over REST and real websockets: the contract (create, read,
list, join, withdraw, cancel) and its refusals; an arena paired in waves and scored; a Swiss
paired round by round with a bye; a round robin; a ballot match; the tournament's rules at the
board (no takebacks, no early draw offers in a Swiss) and in the archive. Every test runs on
SQLite and on PostgreSQL."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.conftest import make_settings
from tests.support.admin_client import admin_client, ok
from tests.support.server import Served, ServerProcess
from tests.support.ws import Client, connect, guest_token, member_token

WAIT_SECONDS = 10.0


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


async def create(http: httpx.AsyncClient, token: str, **fields: Any) -> dict[str, Any]:
    body = {"name": "Club night", "clock": {"base": 60, "increment": 0}} | fields
    response = await http.post("/api/tournaments", json=body, headers=bearer(token))
    assert response.status_code == 201, response.text
    made: dict[str, Any] = response.json()
    return made


async def entered(http: httpx.AsyncClient, tokens: list[str], **fields: Any) -> dict[str, Any]:
    """A tournament created by the first of `tokens` to start in ten minutes, joined by all of
    them, then moved to start now: however slow the joins, nobody finds it started (a Swiss
    with one player at its start is cancelled; a round robin is joined only before it)."""
    made = await create(http, tokens[0], **fields, starts_in=600)
    for token in tokens:
        assert (await join(http, token, made["id"])).status_code == 200
    body = {"name": "Club night", "clock": {"base": 60, "increment": 0}} | fields
    moved = await http.put(
        f"/api/tournaments/{made['id']}", json=body | {"starts_in": 0}, headers=bearer(tokens[0])
    )
    assert moved.status_code == 200, moved.text
    return made


async def get(http: httpx.AsyncClient, tournament_id: int) -> dict[str, Any]:
    response = await http.get(f"/api/tournaments/{tournament_id}")
    assert response.status_code == 200, response.text
    shown: dict[str, Any] = response.json()
    return shown


async def join(http: httpx.AsyncClient, token: str, tournament_id: int) -> httpx.Response:
    return await http.post(f"/api/tournaments/{tournament_id}/join", headers=bearer(token))


async def until(
    http: httpx.AsyncClient, tournament_id: int, done: Any, what: str
) -> dict[str, Any]:
    """The tournament once `done(shown)` holds (the director steps every second)."""
    give_up = asyncio.get_running_loop().time() + WAIT_SECONDS
    while True:
        shown = await get(http, tournament_id)
        if done(shown):
            return shown
        assert asyncio.get_running_loop().time() < give_up, f"{what}: {shown}"
        await asyncio.sleep(0.1)


@contextlib.asynccontextmanager
async def players(server: Served, names: list[str]) -> AsyncIterator[list[tuple[Client, str]]]:
    """Registered players, each with a socket open and their token."""
    async with contextlib.AsyncExitStack() as stack:
        found = []
        for name in names:
            token = await member_token(server.url, name)
            found.append((await stack.enter_async_context(connect(server.url, token)), token))
        yield found


async def resign_all(clients: list[Client], started: list[dict[str, Any]]) -> None:
    """Each game of `started` (`your_game` notices, one per player) resigned by its Black."""
    for client, notice in zip(clients, started, strict=True):
        if notice["colour"] == "black":
            await client.send(type="resign", game=notice["game"])
    for client, notice in zip(clients, started, strict=True):
        await client.expect("game_ended", game=notice["game"])


async def next_game(client: Client, **fields: Any) -> dict[str, Any]:
    """The player's next `your_game`, with its table watched (its events come then)."""
    notice = await client.expect("your_game", **fields)
    await client.send(type="watch", table=notice["table"])
    await client.expect("table")
    return notice


async def open_games(clients: list[Client], started: list[dict[str, Any]]) -> None:
    """Each game of `started`: Black plays 11-15, White 22-18."""
    for ply, colour, move in ((0, "black", "11-15"), (1, "white", "22-18")):
        for client, notice in zip(clients, started, strict=True):
            if notice["colour"] == colour:
                await client.send(type="move", game=notice["game"], move=move, ply=ply)
        for client, notice in zip(clients, started, strict=True):
            await client.expect("move", game=notice["game"], ply=ply + 1)


async def test_a_tournament_is_created_read_listed_and_refuses_bad_settings(
    server: Served,
) -> None:
    token = await member_token(server.url, "organiser")
    async with server.http() as http:
        made = await create(http, token, kind="swiss", rounds=3, starts_in=600)
        assert made["status"] == "created" and made["standings"] == []
        assert (made["kind"], made["rounds"], made["draw_after_move"]) == ("swiss", 3, 30)
        assert 599 <= made["starts_in"] <= 600
        assert (await get(http, made["id"]))["name"] == "Club night"
        listed = (await http.get("/api/tournaments")).json()
        assert [t["id"] for t in listed["upcoming"]] == [made["id"]]
        assert made["created_by_name"] == listed["upcoming"][0]["created_by_name"] == "organiser"
        assert listed["upcoming"][0]["players"] == 0
        assert listed["running"] == [] and listed["finished"] == []
        for bad in (
            {"kind": "arena"},  # no minutes
            {"kind": "swiss"},  # no rounds
            {"kind": "arena", "minutes": 10, "ballot": "3-move"},
            {"kind": "swiss", "rounds": 3, "variant": "pool", "ballot": "3-move"},
            {"kind": "arena", "minutes": 10, "clock": {"base": 5, "increment": 0}},
            {"kind": "knockout", "minutes": 10},
        ):
            body = {"name": "Bad", "clock": {"base": 60, "increment": 0}} | bad
            refused = await http.post("/api/tournaments", json=body, headers=bearer(token))
            assert refused.status_code in (400, 422), (bad, refused.text)
        anonymous = await http.post("/api/tournaments", json={"kind": "arena"})
        assert anonymous.status_code == 401
        assert (await http.get("/api/tournaments/999999")).status_code == 404


async def test_joining_withdrawing_and_cancelling_are_refused_when_they_make_no_sense(
    server: Served,
) -> None:
    owner, other = (
        await member_token(server.url, "hostess"),
        await member_token(server.url, "visitor7"),
    )
    visitor = await guest_token(server.url)
    async with server.http() as http:
        rated = await create(http, owner, kind="arena", minutes=10, rated=True, starts_in=600)
        assert (await join(http, visitor, rated["id"])).json()["error"] == "rated_needs_account"
        assert (await join(http, other, rated["id"])).status_code == 200
        twice = await join(http, other, rated["id"])
        assert (twice.status_code, twice.json()["error"]) == (409, "conflict")
        path = f"/api/tournaments/{rated['id']}"
        not_in = await http.post(f"{path}/withdraw", headers=bearer(owner))
        assert not_in.status_code == 409
        assert (await http.post(f"{path}/cancel", headers=bearer(other))).status_code == 403
        edited = await http.put(
            path,
            json={"kind": "arena", "name": "Renamed", "minutes": 5, "clock": {"base": 60}},
            headers=bearer(owner),
        )
        assert edited.status_code == 200 and edited.json()["name"] == "Renamed"
        too_long = await http.post(
            f"{path}/cancel", json={"reason": "x" * 201}, headers=bearer(owner)
        )
        assert too_long.status_code == 422  # nothing changed
        cancelled = ok(
            await http.post(f"{path}/cancel", json={"reason": "  rain  "}, headers=bearer(owner))
        )
        assert (cancelled["status"], cancelled["cancel_reason"]) == ("cancelled", "rain")
        assert (await get(http, rated["id"]))["cancel_reason"] == "rain"
        late = await join(http, owner, rated["id"])
        assert (late.status_code, late.json()["error"]) == (409, "conflict")
        # A player may create a few at a time, not more.
        for number in range(3):
            await create(http, other, kind="arena", minutes=10, starts_in=600, name=f"T{number}")
        limited = await http.post(
            "/api/tournaments",
            json={"kind": "arena", "name": "T4", "minutes": 10, "clock": {"base": 60}},
            headers=bearer(other),
        )
        assert (limited.status_code, limited.json()["error"]) == (429, "rate_limited")
        recurring = await http.post(
            "/api/tournaments",
            json={"kind": "arena", "name": "Hourly", "minutes": 10, "clock": {"base": 60}}
            | {"every_minutes": 60},
            headers=bearer(owner),
        )
        assert recurring.status_code == 403  # administrators only


async def test_an_arena_pairs_in_waves_never_at_once_again_and_scores_its_games(
    server: Served,
) -> None:
    names = ["arena1", "arena2", "arena3", "arena4"]
    async with players(server, names) as found, server.http() as http:
        clients = [client for client, _ in found]
        made = await entered(http, [token for _, token in found], kind="arena", minutes=2)
        # The first wave pairs everyone at once.
        first = [await next_game(client) for client in clients]
        assert len({notice["game"] for notice in first}) == 2
        assert {notice["tournament"] for notice in first} == {made["id"]}
        game = ok(await http.get(f"/api/games/{first[0]['game']}"))
        assert game["tournament"] == made["id"]
        opponents = {c.user_id: n["opponent"]["id"] for c, n in zip(clients, first, strict=True)}
        await resign_all(clients, first)
        # All four wait again: the second wave pairs nobody with their last opponent.
        second = [await next_game(client) for client in clients]
        for client, notice in zip(clients, second, strict=True):
            assert notice["opponent"]["id"] != opponents[client.user_id]
        shown = await get(http, made["id"])
        assert shown["status"] == "started" and len(shown["playing"]) == 2
        scores = sorted(row["score"] for row in shown["standings"])
        assert scores == [0, 0, 2, 2]  # two wins of two points, two losses
        # Both sides move once, so the clocks run; then the arena's time runs out, the flags
        # of the games in progress fall on the way (60 s each), and the arena finishes.
        await open_games(clients, second)
        server.clock.advance(121)
        for client, notice in zip(clients, second, strict=True):
            ended = await client.expect("game_ended", game=notice["game"])
            assert ended["termination"] == "timeout", ended
        finished = await until(http, made["id"], lambda t: t["status"] == "finished", "end")
        assert len(finished["podium"]) == 3
        assert sum(row["games"] for row in finished["standings"]) == 8
        assert finished["standings"][0]["score"] >= finished["standings"][-1]["score"]


async def test_a_swiss_is_paired_round_by_round_with_a_bye_and_tiebreaks(server: Served) -> None:
    names = ["swiss1", "swiss2", "swiss3", "swiss4", "swiss5"]
    async with players(server, names) as found, server.http() as http:
        clients = {client.user_id: client for client, _ in found}
        made = await entered(http, [token for _, token in found], kind="swiss", rounds=2)
        met: set[frozenset[int]] = set()
        byes: set[str] = set()
        for number in (1, 2):
            shown = await until(
                http, made["id"], lambda t, n=number: t["round"] == n and t["playing"], "round"
            )
            assert len(shown["playing"]) == 2  # five players: two games and a bye
            started = {}
            for user_id, client in clients.items():
                name = client.welcome["user"]["name"]
                in_game = [g for g in shown["playing"] if name in (g["black"], g["white"])]
                if in_game:
                    started[user_id] = await next_game(client, game=in_game[0]["id"])
                else:
                    byes.add(client.welcome["user"]["name"])
            pairs = {frozenset({u, n["opponent"]["id"]}) for u, n in started.items()}
            assert len(pairs) == 2 and not pairs & met  # nobody meets twice
            met |= pairs
            await resign_all([clients[u] for u in started], list(started.values()))
        assert len(byes) == 2  # nobody gets a second bye while others have none
        finished = await until(http, made["id"], lambda t: t["status"] == "finished", "end")
        rows = finished["standings"]
        assert [row["rank"] for row in rows] == sorted(row["rank"] for row in rows)
        assert sum(row["score"] for row in rows) == 4 + 2  # four games won, two byes
        assert all("sonneborn_berger" in row and "buchholz" in row for row in rows)
        assert len(finished["rounds_played"]) == 2
        archived = ok(await http.get("/api/games", params={"tournament": made["id"]}))
        assert archived["count"] == 4
        assert {g["tournament"] for g in archived["data"]} == {made["id"]}
        other = ok(await http.get("/api/games", params={"tournament": made["id"] + 1}))
        assert other["count"] == 0


async def test_a_round_robin_plays_every_pairing_once(server: Served) -> None:
    names = ["rr1", "rr2", "rr3"]
    async with players(server, names) as found, server.http() as http:
        clients = {client.welcome["user"]["name"]: client for client, _ in found}
        made = await entered(http, [token for _, token in found], kind="round_robin")
        pairs = set()
        for number in (1, 2, 3):
            shown = await until(
                http, made["id"], lambda t, n=number: t["round"] == n and t["playing"], "round"
            )
            assert shown["rounds"] == 3 and len(shown["playing"]) == 1
            game = shown["playing"][0]
            pairs.add(frozenset({game["black"], game["white"]}))
            black, white = clients[game["black"]], clients[game["white"]]
            await next_game(black, game=game["id"])
            await next_game(white, game=game["id"])
            await black.send(type="resign", game=game["id"])
            await black.expect("game_ended", game=game["id"])
        assert len(pairs) == 3
        finished = await until(http, made["id"], lambda t: t["status"] == "finished", "end")
        # Black resigned every game; the Berger table gives each player one game of each colour.
        assert [(row["score"], row["games"]) for row in finished["standings"]] == [(1, 2)] * 3


async def test_a_ballot_match_plays_one_opening_with_each_colour(server: Served) -> None:
    async with (
        players(server, ["ballot1", "ballot2"]) as found,
        server.http() as http,
    ):
        (one, token), (two, _) = found
        made = await entered(
            http, [token for _, token in found], kind="swiss", rounds=1, ballot="3-move"
        )
        first = await next_game(one)
        await next_game(two, game=first["game"])
        game = ok(await http.get(f"/api/games/{first['game']}"))
        assert game["start_fen"] is not None  # the opening's three moves are on the board
        shown = await get(http, made["id"])
        opening = shown["playing"][0]["opening"]
        assert len(opening.split()) == 3
        black = one if first["colour"] == "black" else two
        await black.send(type="resign", game=first["game"])
        await black.expect("game_ended", game=first["game"])
        second = await next_game(one)
        await next_game(two, game=second["game"])
        assert second["colour"] != first["colour"]  # colours reversed
        shown = await until(http, made["id"], lambda t: t["playing"], "second game")
        assert shown["playing"][0]["opening"] == opening
        pdn = await http.get(f"/api/games/{first['game']}.pdn")
        assert '[Event "Club night"]' in pdn.text and '[Round "1.1"]' in pdn.text
        black = one if second["colour"] == "black" else two
        await black.send(type="resign", game=second["game"])
        finished = await until(http, made["id"], lambda t: t["status"] == "finished", "end")
        assert [row["score"] for row in finished["standings"]] == [1, 1]  # a win each


async def test_a_swiss_game_takes_no_takeback_and_no_early_draw_offer(server: Served) -> None:
    async with (
        players(server, ["rules1", "rules2"]) as found,
        server.http() as http,
    ):
        (one, token), (two, _) = found
        await entered(http, [token for _, token in found], kind="swiss", rounds=1)
        notice = await next_game(one)
        await next_game(two, game=notice["game"])
        black = one if notice["colour"] == "black" else two
        await black.send(type="move", game=notice["game"], move="11-15", ply=0)
        await black.expect("move", ply=1)
        await black.send(type="draw_offer", game=notice["game"])
        refused = await black.error()
        assert refused["code"] == "too_early" and "move 30" in refused["message"]
        await black.send(type="takeback_offer", game=notice["game"])
        assert (await black.error())["code"] == "takebacks_off"


async def test_an_administrator_schedules_a_recurring_arena(server: Served) -> None:
    async with admin_client(server.app, server.url) as admin:
        made = ok(
            await admin.post(
                "/api/tournaments",
                json={"kind": "arena", "name": "Hourly blitz", "minutes": 30}
                | {"clock": {"base": 180, "increment": 2}, "every_minutes": 60},
            )
        )
        assert made["every_minutes"] == 60
        await until(admin, made["id"], lambda t: t["status"] == "started", "start")
        listed = ok(await admin.get("/api/tournaments"))
        nxt = [t for t in listed["upcoming"] if t["name"] == "Hourly blitz"]
        assert len(nxt) == 1 and nxt[0]["starts_at"] - made["starts_at"] == 3_600_000
        # The administrator's creating and cancelling are audited, with the reason.
        cancelled = ok(
            await admin.post(f"/api/tournaments/{nxt[0]['id']}/cancel", json={"reason": "holiday"})
        )
        assert cancelled["cancel_reason"] == "holiday"
        entries = ok(await admin.get("/api/admin/audit", params={"target_type": "tournament"}))
        found = [(e["action"], e["target_id"], e["note"]) for e in entries["data"]]
        assert ("tournament.create", str(made["id"]), None) in found
        assert ("tournament.cancel", str(nxt[0]["id"]), "holiday") in found


@pytest.mark.server
async def test_a_swiss_carries_on_after_its_server_is_killed(db_url: str, tmp_path: Path) -> None:
    """Everything a tournament is lives in the database: a server killed in the middle of a
    round (no shutdown) and started again pairs the next round from what is stored."""
    process = ServerProcess(make_settings(database_url=db_url), tmp_path)
    await process.start()
    try:
        tokens = [await member_token(process.url, f"durable{n}") for n in range(3)]
        async with process.http() as http:
            made = await entered(http, tokens, kind="swiss", rounds=2)
            first = await until(http, made["id"], lambda t: t["playing"], "round 1")
        await process.kill()
        await process.start()
        async with process.http() as http:
            again = await get(http, made["id"])
            assert (again["status"], again["round"]) == ("started", 1)
            assert again["playing"] == first["playing"]
            game = first["playing"][0]
            black = tokens[[f"durable{n}" for n in range(3)].index(game["black"])]
            async with connect(process.url, black) as client:
                await client.send(type="watch", table=game["table"])
                await client.expect("table")
                await client.send(type="resign", game=game["id"])
                await client.expect("game_ended", game=game["id"])
            # Round 2 is paired from what was stored before the kill and after the restart.
            second = await until(http, made["id"], lambda t: t["round"] == 2, "round 2")
            assert len(second["playing"]) == 1
            pair = {second["playing"][0]["black"], second["playing"][0]["white"]}
            assert pair != {game["black"], game["white"]}  # no rematch
    finally:
        await process.stop()


async def test_an_arena_player_goes_berserk_before_their_first_move(server: Served) -> None:
    async with (
        players(server, ["zerk1", "zerk2"]) as found,
        server.http() as http,
    ):
        made = await create(
            http, found[0][1], kind="arena", minutes=5, clock={"base": 60, "increment": 2}
        )
        for _, token in found:
            assert (await join(http, token, made["id"])).status_code == 200
        notices = [await next_game(client) for client, _ in found]
        game = notices[0]["game"]
        black, white = (
            (found[0][0], found[1][0])
            if notices[0]["colour"] == "black"
            else (found[1][0], found[0][0])
        )
        await black.send(type="berserk", game=game)
        went = await black.expect("berserk", game=game)
        assert (went["colour"], went["clocks"]) == ("black", {"black": 30_000, "white": 60_000})
        await white.expect("berserk", game=game)
        await black.send(type="berserk", game=game)
        assert (await black.error())["code"] == "conflict"  # once
        # A snapshot of the table names its tournament and who went berserk.
        await white.send(type="watch", table=notices[0]["table"])
        seen = await white.expect("table")
        assert seen["tournament"] == {"id": made["id"], "name": made["name"], "kind": "arena"} | {
            "round": None,
            "opening": None,
        }
        assert seen["game"]["berserk"] == {"black": True, "white": False}
        for ply, mover, move in ((0, black, "11-15"), (1, white, "22-18"), (2, black, "15x22")):
            await mover.send(type="move", game=game, move=move, ply=ply)
            moved = await white.expect("move", game=game, ply=ply + 1)
        # The berserk side's clock runs from half its time and gains no increment.
        assert moved["clocks"]["black"] <= 30_000 < moved["clocks"]["white"]
        await white.send(type="berserk", game=game)
        refused = await white.error()
        assert refused["code"] == "conflict" and "first move" in refused["message"]
        shown = ok(await http.get(f"/api/games/{game}"))
        assert shown["tournament"] == made["id"]
    async with players(server, ["zerk3", "zerk4"]) as found:
        async with server.http() as http:
            made = await create(http, found[0][1], kind="swiss", rounds=1)
            for _, token in found:
                assert (await join(http, token, made["id"])).status_code == 200
        notice = await next_game(found[0][0])
        await found[0][0].send(type="berserk", game=notice["game"])
        assert "arena" in (await found[0][0].error())["message"]  # not in a Swiss


async def test_a_page_following_a_tournament_hears_each_change(server: Served) -> None:
    """`follow_tournament`: a notice at once, then one for each change: a player joining, a
    round paired, one game of the round ending while the other plays on (noticed by the
    director's next step); none after `unfollow_tournament`; no such tournament: `not_found`."""
    names = ["follow1", "follow2", "follow3", "follow4"]
    async with (
        players(server, names) as found,
        server.http() as http,
        connect(server.url) as page,  # a visitor, signed out
    ):
        made = await create(http, found[0][1], kind="swiss", rounds=2, starts_in=600)
        tournament = made["id"]
        await page.send(type="follow_tournament", tournament=tournament, ref="f")
        assert await page.expect("tournament") == {
            "type": "tournament",
            "id": tournament,
            "ref": "f",
        }
        assert (await join(http, found[0][1], tournament)).status_code == 200
        await page.expect("tournament", id=tournament)
        for _, token in found[1:]:
            assert (await join(http, token, tournament)).status_code == 200
        edited = await http.put(
            f"/api/tournaments/{tournament}",
            json={
                "name": "Club night",
                "kind": "swiss",
                "rounds": 2,
                "clock": {"base": 60, "increment": 0},
                "starts_in": 0,
            },
            headers=bearer(found[0][1]),
        )
        assert edited.status_code == 200, edited.text
        # Paired: the page reads two games in progress.
        shown = await until(http, tournament, lambda t: len(t["playing"]) == 2, "round 1")
        first = shown["playing"][0]
        clients = {client.welcome["user"]["name"]: client for client, _ in found}
        black = clients[first["black"]]
        notice = await next_game(black, game=first["id"])
        while True:  # the notices so far: joins, the edit, the start, the pairing
            try:
                await asyncio.wait_for(page.expect("tournament"), 1.5)
            except TimeoutError:
                break
        await black.send(type="resign", game=notice["game"])
        await black.expect("game_ended", game=notice["game"])
        await asyncio.wait_for(page.expect("tournament", id=tournament), WAIT_SECONDS)
        shown = await get(http, tournament)
        assert [g["id"] for g in shown["playing"]] == [shown["playing"][0]["id"]] != [first["id"]]
        assert [r["result"] for r in shown["rounds_played"][0] if r["result"] != "*"] == ["0-1"]

        await page.send(type="unfollow_tournament", tournament=tournament)
        assert (
            await join(http, await member_token(server.url, "follow5"), tournament)
        ).status_code == 200
        with contextlib.suppress(TimeoutError):
            extra = await asyncio.wait_for(page.expect("tournament"), 2.5)
            raise AssertionError(f"a notice after unfollowing: {extra}")
        await page.send(type="follow_tournament", tournament=tournament + 1000)
        assert (await page.error())["code"] == "not_found"


async def test_a_tournament_game_nobody_starts_is_lost_by_the_side_to_move(server: Served) -> None:
    """A first move not made in time: an ordinary game is aborted, a tournament game is lost by
    the side to move (it scores for the opponent), and an arena pauses that player."""
    async with (
        players(server, ["nostart1", "nostart2"]) as found,
        server.http() as http,
    ):
        made = await entered(http, [token for _, token in found], kind="arena", minutes=30)
        notices = [await next_game(client) for client, _ in found]
        black = found[0] if notices[0]["colour"] == "black" else found[1]
        white = found[1] if black is found[0] else found[0]
        game = notices[0]["game"]
        ended = await white[0].expect_advancing(server.clock, 5.0, "game_ended", game=game)
        assert (ended["termination"], ended["winner"], ended["result"]) == (
            "timeout",
            "white",
            "0-1",
        )
        assert ended["reason"] == "Black did not make a first move in time"
        shown = await until(
            http, made["id"], lambda t: any(r["score"] for r in t["standings"]), "scored"
        )
        rows = {row["name"]: row for row in shown["standings"]}
        white_name, black_name = (p[0].welcome["user"]["name"] for p in (white, black))
        assert (rows[white_name]["score"], rows[black_name]["score"]) == (2, 0)
        assert (rows[white_name]["active"], rows[black_name]["active"]) == (True, False)
        # Paused, not out: joining again brings them back.
        assert (await join(http, black[1], made["id"])).status_code == 200
