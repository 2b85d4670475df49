"""The inbox: notices of a challenge, of a correspondence game's start, moves, end and time
alarm, and of a tournament about to start; each pushed to its owner's open pages once stored,
kept in the database, counted unread until read. Live games give none."""

from __future__ import annotations

import asyncio
from typing import Any

from app.correspondence.service import SWEEP_SECONDS
from app.notify import inbox as notices
from tests.support.server import Served
from tests.support.ws import Client, connect, member_token, start_game

DAY = 86_400


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


async def inbox(server: Served, token: str, **params: Any) -> dict[str, Any]:
    async with server.http() as http:
        response = await http.get("/api/notifications", params=params, headers=bearer(token))
    assert response.status_code == 200, response.text
    shown: dict[str, Any] = response.json()
    return shown


async def notice(client: Client, kind: str) -> dict[str, Any]:
    """The first notice of `kind` pushed to `client` and not yet looked at (a push may come
    before or after the move event that `Match.play` reads past)."""
    taken: set[int] = client.__dict__.setdefault("notices_taken", set())
    while True:
        for message in client.seen:
            pushed = message.get("notification")
            mine = message["type"] == "notification" and pushed["kind"] == kind
            if mine and pushed["id"] not in taken:
                taken.add(pushed["id"])
                return dict(pushed)
        await client.expect("notification")


async def alarm(server: Served, client: Client) -> dict[str, Any]:
    """The next time alarm pushed to `client`: the server's sweep runs every 30 s of its clock,
    which moves on by that much whenever a moment passes without it (the sweep may have been
    running when the test moved the clock, and then sleeps from after it)."""
    while True:
        try:
            return await asyncio.wait_for(notice(client, "time_alarm"), 0.3)
        except TimeoutError:
            server.clock.advance(SWEEP_SECONDS + 1)


async def test_a_challenge_is_in_the_inbox_until_read(server: Served) -> None:
    tokens = [await member_token(server.url, name) for name in ("inka", "ivo")]
    async with connect(server.url, tokens[0]) as inka, connect(server.url, tokens[1]) as ivo:
        await inka.send(type="challenge", user="ivo", clock={"days": 3})
        pushed = await notice(ivo, "challenge")
        assert pushed["data"]["from"] == "inka" and pushed["read"] is False
        assert pushed["text"] == "inka challenges you."
    shown = await inbox(server, tokens[1])
    assert shown["unread"] == 1
    assert [n["id"] for n in shown["data"]] == [pushed["id"]]
    assert shown["data"][0]["data"]["clock"]["days"] == 3
    async with server.http() as http:
        read = await http.post("/api/notifications/read", json={}, headers=bearer(tokens[1]))
        assert read.json() == {"unread": 0}
        refused = await http.get("/api/notifications", params={"limit": 0})
        assert refused.status_code == 401
    shown = await inbox(server, tokens[1])
    assert shown["unread"] == 0 and shown["data"][0]["read"] is True
    assert (await inbox(server, tokens[0]))["data"] == []  # the challenger is told nothing


async def test_a_correspondence_game_tells_each_player_of_its_turns(server: Served) -> None:
    tokens = [await member_token(server.url, name) for name in ("pia", "pol")]
    async with connect(server.url, tokens[0]) as pia, connect(server.url, tokens[1]) as pol:
        match = await start_game(pia, pol, clock={"days": 2})
        for client, opponent in ((pia, "pol"), (pol, "pia")):
            started = await notice(client, "game_started")
            assert started["data"]["opponent"] == opponent and started["data"]["days"] == 2
        await match.play("11-15")
        mine = await notice(pol, "your_move")
        assert mine["data"] == {
            "game": match.id,
            "table": match.table["id"],
            "opponent": "pia",
            "ply": 1,
            "days": 2,
        }
        await match.play("22-18")
        await notice(pia, "your_move")
        await pol.send(type="resign", game=match.id)
        for client in (pia, pol):
            ended = await notice(client, "game_ended")
            assert (ended["data"]["result"], ended["data"]["termination"]) == (
                "1-0",
                "resignation",
            )
    kinds = [n["kind"] for n in (await inbox(server, tokens[1]))["data"]]
    assert kinds == ["game_ended", "your_move", "game_started"]  # newest first
    second = (await inbox(server, tokens[1]))["data"][1]["id"]
    page = await inbox(server, tokens[1], limit=1, before=second)
    assert [n["kind"] for n in page["data"]] == ["game_started"]


async def test_a_live_game_gives_no_notice(server: Served) -> None:
    tokens = [await member_token(server.url, name) for name in ("lia", "leo")]
    async with connect(server.url, tokens[0]) as lia, connect(server.url, tokens[1]) as leo:
        match = await start_game(lia, leo, clock={"base": 300, "increment": 3})
        await match.play("11-15", "22-18")
        await leo.send(type="resign", game=match.id)
        await lia.expect("game_ended")
    for token in tokens:
        assert (await inbox(server, token)) == {"unread": 0, "data": []}


async def test_the_time_alarm_rings_once_per_move(server: Served) -> None:
    """A day per move: once 80 % of it is used, the player to move is told, once."""
    tokens = [await member_token(server.url, name) for name in ("ada", "abe")]
    async with connect(server.url, tokens[0]) as ada, connect(server.url, tokens[1]) as abe:
        match = await start_game(ada, abe, clock={"days": 1})
        await match.play("11-15", "22-18")
        server.clock.advance(0.7 * DAY)
        server.clock.advance(0.15 * DAY)  # 85 % used: the sweep (every 30 s) rings
        rung = await alarm(server, ada)
        assert rung["data"]["game"] == match.id and rung["data"]["ply"] == 2
        assert rung["data"]["opponent"] == "abe"
        server.clock.advance(0.1 * DAY)  # 95 %: no second alarm for this move
        await match.play("15x22")
        await notice(abe, "your_move")
        server.clock.advance(0.81 * DAY)
        second = await alarm(server, abe)
        assert second["data"]["ply"] == 3
    alarms = [n for n in (await inbox(server, tokens[0]))["data"] if n["kind"] == "time_alarm"]
    assert len(alarms) == 1


async def test_players_are_reminded_of_a_tournament_about_to_start(server: Served) -> None:
    token = await member_token(server.url, "tia")
    async with connect(server.url, token) as tia, server.http() as http:
        body = {
            "kind": "arena",
            "name": "Sunday arena",
            "minutes": 30,
            "clock": {"base": 60, "increment": 0},
            "starts_in": 900,
        }
        made = (await http.post("/api/tournaments", json=body, headers=bearer(token))).json()
        joined = await http.post(f"/api/tournaments/{made['id']}/join", headers=bearer(token))
        assert joined.status_code == 200
        server.clock.advance(600)  # five minutes before its start
        reminded = await notice(tia, "tournament_soon")
        assert reminded["data"]["tournament"] == made["id"]
        assert reminded["text"] == "The tournament Sunday arena starts soon."
    assert len((await inbox(server, token))["data"]) == 1


async def test_old_notices_are_pruned(server: Served) -> None:
    """Kept 90 days in the inbox; the pruning (every process, every minute) deletes older."""
    tokens = [await member_token(server.url, name) for name in ("old1", "old2")]
    async with connect(server.url, tokens[0]) as one, connect(server.url, tokens[1]) as two:
        await one.send(type="challenge", user="old2")
        await notice(two, "challenge")
    live = server.app.state.live
    server.clock.advance(89 * DAY)
    assert await notices.prune(live) == 0
    assert len((await inbox(server, tokens[1]))["data"]) == 1
    # (The server's own pruning runs too when the clock moves past its minute: either deletes.)
    server.clock.advance(2 * DAY)
    await notices.prune(live)
    assert (await inbox(server, tokens[1]))["data"] == []
