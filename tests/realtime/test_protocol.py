"""The protocol's edges: handshake, bad input, limits, the lobby, private tables and chat."""

from __future__ import annotations

import json

import pytest
import websockets
from websockets.exceptions import ConnectionClosed

from app.config import Settings
from tests.support.server import Served
from tests.support.ws import connect, guest, start_game, subprotocols


def ws_url(served: Served, query: str = "") -> str:
    return served.url.replace("http://", "ws://") + "/ws" + query


async def test_a_spectator_may_watch_but_not_act(server: Served) -> None:
    async with connect(server.url) as spectator:
        assert spectator.welcome["user"] is None and spectator.welcome["playing"] == []
        await spectator.send(type="open", room="english-casual")
        assert (await spectator.error())["code"] == "unauthorized"
        await spectator.send(type="ping", t=7)
        assert (await spectator.expect("pong"))["t"] == 7


async def test_a_bad_token_is_refused_with_1008(server: Served) -> None:
    async with websockets.connect(ws_url(server), subprotocols=subprotocols("forged")) as ws:
        error = json.loads(await ws.recv())
        assert (error["type"], error["code"]) == ("error", "unauthorized")
        with pytest.raises(ConnectionClosed) as closed:
            await ws.recv()
        assert closed.value.rcvd is not None and closed.value.rcvd.code == 1008


@pytest.mark.parametrize(
    ("frame", "says"),
    [
        ("not json", "not valid JSON"),
        ("[1, 2]", "object"),
        ('{"game": 1}', '"type"'),
        ('{"type": "teleport"}', "unknown message type 'teleport'"),
        ('{"type": "move", "game": 1, "ply": 0}', "move: Field required"),
        ('{"type": "move", "game": "one", "move": "11-15", "ply": 0}', "game"),
        ('{"type": "open", "room": "english-casual", "colour": "green", "ref": 9}', "colour"),
        ('{"type": "watch", "table": -3}', "table"),
    ],
)
async def test_malformed_messages_get_bad_message(server: Served, frame: str, says: str) -> None:
    async with guest(server.url) as client:
        await client.ws.send(frame)
        error = await client.error()
        assert error["code"] == "bad_message" and says in error["message"]
        await client.send(type="ping")
        await client.expect("pong")  # the connection is still usable


async def test_bad_table_parameters_are_refused(server: Served) -> None:
    async with guest(server.url) as client:
        await client.send(type="open", room="no-such-room")
        assert (await client.error())["code"] == "not_found"
        await client.send(type="open", room="english-casual", start_fen="B:W99:B1")
        assert (await client.error())["code"] == "invalid_fen"
        await client.send(type="open", room="english-casual", clock={"base": 0, "increment": 0})
        assert (await client.error())["code"] == "bad_message"
        await client.send(type="sit", table=12345)
        assert (await client.error())["code"] == "not_found"
        for _ in range(3):
            await client.send(type="open", room="english-casual")
            await client.expect("table")
        await client.send(type="open", room="english-casual")
        assert (await client.error())["code"] == "too_many_tables"


async def test_a_frame_over_the_limit_closes_with_1009(server: Served) -> None:
    async with guest(server.url) as client:
        await client.ws.send(json.dumps({"type": "chat", "table": 1, "text": "x" * 5000}))
        with pytest.raises(ConnectionClosed) as closed:
            await client.recv()
        assert closed.value.rcvd is not None and closed.value.rcvd.code == 1009


async def test_a_binary_frame_closes_with_1003(server: Served) -> None:
    async with guest(server.url) as client:
        await client.ws.send(b"\x00\x01")
        with pytest.raises(ConnectionClosed) as closed:
            await client.recv()
        assert closed.value.rcvd is not None and closed.value.rcvd.code == 1003


async def test_a_flood_is_rate_limited(server: Served) -> None:
    async with guest(server.url) as client:
        for n in range(60):
            await client.send(type="ping", t=n)
        replies = [await client.recv() for _ in range(60)]
        codes = {r.get("code") for r in replies if r["type"] == "error"}
        assert codes == {"rate_limited"}
        assert sum(r["type"] == "pong" for r in replies) >= 40


async def test_chat_reaches_the_table_within_limits(server: Served, settings: Settings) -> None:
    async with guest(server.url) as a, guest(server.url) as b, connect(server.url) as watcher:
        match = await start_game(a, b)
        table = match.table["id"]
        await watcher.send(type="watch", table=table)
        await watcher.expect("table")
        await a.send(type="chat", table=table, text="  good luck  ")
        said = await watcher.expect("chat")
        assert (said["text"], said["from"]["id"]) == ("good luck", a.user_id)
        await a.send(type="chat", table=table, text="x" * (settings.chat_max_length + 1))
        assert (await a.error())["code"] == "bad_message"
        await watcher.send(type="chat", table=table, text="hello")
        assert (await watcher.error())["code"] == "unauthorized"
        for _ in range(5):
            await b.send(type="chat", table=table, text="spam")
        await b.send(type="chat", table=table, text="spam")
        assert (await b.error())["code"] == "rate_limited"


async def test_the_lobby_lists_rooms_and_follows_public_tables(server: Served) -> None:
    async with guest(server.url) as a, guest(server.url) as b, connect(server.url) as lobby:
        await lobby.send(type="subscribe_lobby")
        rooms = (await lobby.expect("lobby"))["rooms"]
        assert {r["slug"] for r in rooms} >= {"english-casual", "english-blitz", "pool"}
        blitz = next(r for r in rooms if r["slug"] == "english-blitz")
        assert blitz["clock"] == {"base": 300, "increment": 3}

        await a.send(type="open", room="english-blitz")
        opened = (await a.expect("table"))["table"]
        assert opened["clock"] == {"base": 300, "increment": 3}
        listed = await lobby.expect("lobby_table")
        assert (listed["room"], listed["table"]["status"]) == (blitz["id"], "open")

        await a.send(type="open", room="english-blitz", private=True)
        private = (await a.expect("table"))["table"]
        assert private["invite"]

        await b.send(type="sit", table=opened["id"])
        playing = await lobby.expect("lobby_table")
        assert playing["table"]["status"] == "playing"
        assert {p["id"] for p in playing["table"]["players"]} == {a.user_id, b.user_id}

        await lobby.send(type="subscribe_lobby")
        tables = next(r for r in (await lobby.expect("lobby"))["rooms"] if r["id"] == blitz["id"])
        assert [t["id"] for t in tables["tables"]] == [opened["id"]]  # not the private one


async def test_a_private_table_needs_its_invite(server: Served) -> None:
    async with guest(server.url) as a, guest(server.url) as b, connect(server.url) as c:
        await a.send(type="open", room="english-casual", private=True, colour="white")
        table = (await a.expect("table"))["table"]
        await c.send(type="watch", table=table["id"])
        assert (await c.error())["code"] == "not_found"
        await b.send(type="sit", table=table["id"], invite="wrong")
        assert (await b.error())["code"] == "not_found"
        await b.send(type="sit", table=table["id"], invite=table["invite"])
        game = (await b.expect("game_started"))["game"]
        assert (game["black"]["id"], game["white"]["id"]) == (b.user_id, a.user_id)
        await c.send(type="watch", table=table["id"], invite=table["invite"])
        snapshot = await c.expect("table")
        assert snapshot["table"]["invite"] is None  # shown to its players only
