"""What administration relies on: ending a game or closing a table by decision, and the
`control` channel (kick, ban, room closed) acted on by every connection."""

from __future__ import annotations

import json

import pytest
from websockets.exceptions import ConnectionClosed

from tests.support.admin_client import admin_client, ok
from tests.support.server import Served
from tests.support.ws import connect, guest, start_game


async def test_an_administrator_ends_a_game_and_everyone_is_told(server: Served) -> None:
    async with (
        guest(server.url) as a,
        guest(server.url) as b,
        admin_client(server.app, server.url) as admin,
    ):
        match = await start_game(a, b)
        await match.play("11-15")
        adjudicate = f"/api/admin/games/{match.id}/adjudicate"
        ok(await admin.post(adjudicate, json={"result": "0-1", "reason": "engine use"}))
        for client in (a, b):
            ended = await client.expect("game_ended")
            assert (ended["result"], ended["termination"]) == ("0-1", "admin")
            assert ended["reason"] == "engine use"
        again = await admin.post(adjudicate, json={"result": "1-0", "reason": "twice"})
        assert (again.status_code, again.json()["error"]) == (409, "game_over")
        wrong = await admin.post(adjudicate, json={"result": "2-0", "reason": "no such result"})
        assert wrong.status_code == 422


async def test_closing_a_table_aborts_its_game(server: Served) -> None:
    async with (
        guest(server.url) as a,
        guest(server.url) as b,
        connect(server.url) as lobby,
        admin_client(server.app, server.url) as admin,
    ):
        match = await start_game(a, b)
        await lobby.send(type="subscribe_lobby")
        await lobby.expect("lobby")
        close = f"/api/admin/tables/{match.table['id']}/close"
        ok(await admin.post(close, json={"reason": "closed for repairs", "result": "*"}))
        ended = await a.expect("game_ended")
        assert (ended["result"], ended["termination"]) == ("*", "admin")
        closed = await b.expect("table_closed")
        assert closed["reason"] == "closed for repairs"
        assert (await lobby.expect("lobby_table_removed"))["table"] == match.table["id"]
        await a.send(type="sit", table=match.table["id"])
        assert (await a.error())["code"] == "not_found"


async def test_a_kick_sends_a_user_away_from_a_table(server: Served) -> None:
    async with guest(server.url) as a, guest(server.url) as b:
        await a.send(type="open", room="english-casual")
        table = (await a.expect("table"))["table"]
        await b.send(type="watch", table=table["id"])
        await b.expect("table")
        event = {
            "type": "kick",
            "user_id": a.user_id,
            "table_id": table["id"],
            "room_id": None,
            "reason": "rude",
        }
        await server.app.state.broker.publish("control", json.dumps(event))
        kicked = await a.expect("kicked")
        assert (kicked["table"], kicked["reason"]) == (table["id"], "rude")
        assert (await b.expect("table_closed"))["table"] == table["id"]


async def test_a_ban_closes_the_users_sockets_with_1008(server: Served) -> None:
    async with guest(server.url) as a, guest(server.url) as b:
        event = {"type": "ban", "user_id": a.user_id, "reason": "cheating"}
        await server.app.state.broker.publish("control", json.dumps(event))
        error = await a.error()
        assert (error["code"], error["message"]) == ("unauthorized", "cheating")
        with pytest.raises(ConnectionClosed) as closed:
            await a.recv()
        assert closed.value.rcvd is not None and closed.value.rcvd.code == 1008
        await b.send(type="ping")
        await b.expect("pong")


async def test_a_closed_room_is_announced_in_the_lobby(server: Served) -> None:
    async with connect(server.url) as lobby:
        await lobby.send(type="subscribe_lobby")
        await lobby.expect("lobby")
        await server.app.state.broker.publish(
            "control", json.dumps({"type": "room_closed", "room_id": 2})
        )
        assert (await lobby.expect("room_closed"))["room"] == 2
