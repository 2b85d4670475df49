"""Administration against a real server: each action reaches real connected websocket clients,
is stored with its audit entry, and shows in the archive."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
from sqlalchemy import text
from websockets.exceptions import ConnectionClosed

from app.config import Settings
from tests.conftest import PrivateRedis, make_settings
from tests.support.admin_client import ADMIN_NAME, admin_client, log_in, ok, rooms_by_slug
from tests.support.server import Served, cluster, serve
from tests.support.ws import (
    Client,
    connect,
    guest,
    guest_token,
    open_socket,
    start_game,
    subprotocols,
)

PASSWORD = "plays-dirty-2026"


@pytest.fixture
def settings(db_url: str) -> Settings:
    return make_settings(database_url=db_url)


@pytest.fixture
async def admin(server: Served) -> AsyncIterator[httpx.AsyncClient]:
    async with admin_client(server.app, server.url) as client:
        yield client


async def seated(client: Client, table_id: int, players: list[int]) -> dict[str, Any]:
    """The next update of the table that shows exactly these players seated."""
    while True:
        update = await client.expect("table_update", table=table_id)
        if [p["id"] for p in update["state"]["players"]] == players:
            return update


async def closed_by_server(client: Client) -> tuple[int, str]:
    """Read until the server closes the socket; its close code and reason."""
    with pytest.raises(ConnectionClosed) as closed:
        while True:
            await client.recv()
    frame = closed.value.rcvd
    assert frame is not None
    return frame.code, frame.reason


async def test_closing_a_room_ends_its_games_and_tells_everyone(
    server: Served, admin: httpx.AsyncClient
) -> None:
    casual = (await rooms_by_slug(admin))["english-casual"]
    async with (
        guest(server.url) as a,
        guest(server.url) as b,
        guest(server.url) as watcher,
        connect(server.url) as lobby,
    ):
        match = await start_game(a, b)
        await match.play("11-15")
        await watcher.send(type="watch", table=match.table["id"])
        await watcher.expect("table")
        await lobby.send(type="subscribe_lobby")
        await lobby.expect("lobby")
        room = (await rooms_by_slug(admin))["english-casual"]
        assert (room["tables"], room["players"], room["spectators"]) == (1, 2, 1)

        entry = ok(
            await admin.post(
                f"/api/admin/rooms/{casual['id']}/close",
                json={"reason": "server maintenance", "result": "1/2-1/2"},
            )
        )
        assert (entry["action"], entry["actor"], entry["note"]) == (
            "room.close",
            ADMIN_NAME,
            "server maintenance",
        )
        assert entry["details"]["games"] == [match.id]
        assert entry["details"]["tables"] == [match.table["id"]]

        for client in (a, b, watcher):
            ended = await client.expect("game_ended", game=match.id)
            assert (ended["result"], ended["termination"], ended["reason"]) == (
                "1/2-1/2",
                "admin",
                "server maintenance",
            )
            closed = await client.expect("table_closed", table=match.table["id"])
            assert closed["reason"] == "server maintenance"
        assert (await lobby.expect("lobby_table_removed"))["table"] == match.table["id"]
        assert (await lobby.expect("room_closed"))["room"] == casual["id"]

        await a.send(type="open", room="english-casual")
        assert (await a.error())["code"] == "room_closed"
        await a.send(type="move", game=match.id, move="22-18", ply=1)
        assert (await a.error())["code"] == "game_over"

    game = ok(await admin.get(f"/api/games/{match.id}"))
    assert (game["status"], game["result"], game["termination"]) == (
        "finished",
        "1/2-1/2",
        "admin",
    )
    room = (await rooms_by_slug(admin))["english-casual"]
    assert (room["open"], room["tables"]) == (False, 0)
    assert room["closed_at"] is not None
    again = await admin.post(f"/api/admin/rooms/{casual['id']}/close", json={"reason": "twice"})
    assert (again.status_code, again.json()["error"]) == (409, "room_closed")

    reopened = ok(await admin.patch(f"/api/admin/rooms/{casual['id']}", json={"open": True}))
    assert (reopened["open"], reopened["closed_at"]) == (True, None)
    async with guest(server.url) as c:
        await c.send(type="open", room="english-casual")
        assert (await c.expect("table"))["table"]["room"] == casual["id"]


async def test_an_adjudicated_game_ends_with_the_stated_result_and_reason(
    server: Served, admin: httpx.AsyncClient
) -> None:
    async with guest(server.url) as a, guest(server.url) as b:
        match = await start_game(a, b, clock={"base": 300, "increment": 2})
        await match.play("11-15", "23-19")
        entry = ok(
            await admin.post(
                f"/api/admin/games/{match.id}/adjudicate",
                json={"result": "0-1", "reason": "Black consulted an engine"},
            )
        )
        assert (entry["action"], entry["target_type"], entry["target_id"]) == (
            "game.adjudicate",
            "game",
            str(match.id),
        )
        assert entry["details"] == {"result": "0-1", "table": match.table["id"], "ply": 2}
        for client in (a, b):
            ended = await client.expect("game_ended", game=match.id)
            assert ended["result"] == "0-1"
            assert ended["winner"] == "white"
            assert ended["termination"] == "admin"
            assert ended["reason"] == "Black consulted an engine"
        await a.send(type="move", game=match.id, move="8-11", ply=2)
        assert (await a.error())["code"] == "game_over"
        # The players stay seated and may play again.
        await a.send(type="rematch", table=match.table["id"])
        await b.send(type="rematch", table=match.table["id"])
        assert (await a.expect("game_started"))["game"]["id"] != match.id

    game = ok(await admin.get(f"/api/games/{match.id}"))
    assert (game["status"], game["result"], game["termination"]) == ("finished", "0-1", "admin")
    assert [m["move"] for m in game["moves"]] == ["11-15", "23-19"]
    for action, body in (
        ("adjudicate", {"result": "1-0", "reason": "late"}),
        ("abort", {"reason": "late"}),
    ):
        late = await admin.post(f"/api/admin/games/{match.id}/{action}", json=body)
        assert (late.status_code, late.json()["error"]) == (409, "game_over")


async def test_an_aborted_game_and_a_closed_table(server: Served, admin: httpx.AsyncClient) -> None:
    async with guest(server.url) as a, guest(server.url) as b, connect(server.url) as lobby:
        await lobby.send(type="subscribe_lobby")
        await lobby.expect("lobby")
        match = await start_game(a, b)
        ok(await admin.post(f"/api/admin/games/{match.id}/abort", json={"reason": "test game"}))
        for client in (a, b):
            ended = await client.expect("game_ended", game=match.id)
            assert (ended["result"], ended["termination"], ended["winner"]) == ("*", "admin", None)

        tables = ok(await admin.get("/api/admin/tables"))["data"]
        assert [(t["id"], t["status"], t["room_slug"]) for t in tables] == [
            (match.table["id"], "finished", "english-casual")
        ]
        entry = ok(
            await admin.post(
                f"/api/admin/tables/{match.table['id']}/close", json={"reason": "closing time"}
            )
        )
        assert (entry["action"], entry["details"]["games"]) == ("table.close", [])
        for client in (a, b):
            closed = await client.expect("table_closed", table=match.table["id"])
            assert closed["reason"] == "closing time"
        assert (await lobby.expect("lobby_table_removed"))["table"] == match.table["id"]
        await b.send(type="rematch", table=match.table["id"])
        assert (await b.error())["code"] == "not_a_player"

    assert ok(await admin.get(f"/api/games/{match.id}"))["status"] == "aborted"
    assert ok(await admin.get("/api/admin/tables"))["data"] == []
    again = await admin.post(f"/api/admin/tables/{match.table['id']}/close", json={"reason": "x"})
    assert (again.status_code, again.json()["error"]) == (409, "table_closed")
    kick = await admin.post(
        f"/api/admin/users/{b.user_id}/kick", json={"reason": "x", "table": match.table["id"]}
    )
    assert (kick.status_code, kick.json()["error"]) == (409, "table_closed")


async def test_kicking_a_player_from_a_table_ends_their_game_and_frees_the_seat(
    server: Served, admin: httpx.AsyncClient
) -> None:
    async with guest(server.url) as a, guest(server.url) as b, guest(server.url) as c:
        match = await start_game(a, b)
        table_id = match.table["id"]
        await match.play("11-15")
        entry = ok(
            await admin.post(
                f"/api/admin/users/{a.user_id}/kick",
                json={"reason": "abusive chat", "table": table_id, "result": "0-1"},
            )
        )
        assert entry["details"]["games"] == [match.id]
        kicked = await a.expect("kicked")
        assert (kicked["table"], kicked["reason"]) == (table_id, "abusive chat")
        ended = await b.expect("game_ended", game=match.id)
        assert (ended["result"], ended["termination"], ended["reason"]) == (
            "0-1",
            "admin",
            "abusive chat",
        )
        await seated(b, table_id, [b.user_id])
        # The kicked player no longer follows the table; the freed seat is taken at once.
        await c.send(type="sit", table=table_id)
        started = await b.expect("game_started")
        assert {started["game"]["black"]["id"], started["game"]["white"]["id"]} == {
            b.user_id,
            c.user_id,
        }
        tables = ok(await admin.get("/api/admin/tables"))["data"]
        assert [(t["id"], t["status"], t["spectators"]) for t in tables] == [
            (table_id, "playing", 0)
        ]


async def test_kicking_a_user_from_a_room_and_off_the_server(
    server: Served, admin: httpx.AsyncClient
) -> None:
    blitz = (await rooms_by_slug(admin))["english-blitz"]
    token = await guest_token(server.url)
    async with connect(server.url, token) as a, guest(server.url) as b:
        await a.send(type="open", room="english-blitz")
        table = (await a.expect("table"))["table"]
        await b.send(type="watch", table=table["id"])
        await b.expect("table")
        ok(
            await admin.post(
                f"/api/admin/users/{a.user_id}/kick",
                json={"reason": "spamming the room", "room": blitz["id"]},
            )
        )
        assert (await a.expect("kicked"))["reason"] == "spamming the room"
        closed = await b.expect("table_closed", table=table["id"])
        assert closed["reason"] == "everyone left"

        ok(await admin.post(f"/api/admin/users/{a.user_id}/kick", json={"reason": "reconnect"}))
        kicked = await a.expect("kicked")
        assert (kicked["table"], kicked["reason"]) == (None, "reconnect")
        assert await closed_by_server(a) == (1008, "reconnect")
    # A kick does not keep anyone out.
    async with connect(server.url, token) as again:
        assert again.welcome["user"]["id"] == a.user_id

    audit = ok(await admin.get("/api/admin/audit", params={"action": "user.kick"}))["data"]
    assert [(e["details"]["room"], e["note"]) for e in audit] == [
        (None, "reconnect"),
        (blitz["id"], "spamming the room"),
    ]


async def test_a_ban_closes_live_sockets_and_refuses_login_and_connect(
    server: Served, admin: httpx.AsyncClient
) -> None:
    async with server.http() as http:
        registered = ok(
            await http.post("/api/auth/register", json={"name": "mallory", "password": PASSWORD})
        )
    token, user_id = registered["access_token"], registered["user"]["id"]
    async with connect(server.url, token) as first, connect(server.url, token) as second:
        listed = ok(await admin.get("/api/admin/users", params={"q": "MALL"}))
        assert [(u["name"], u["connected"], u["banned"]) for u in listed["data"]] == [
            ("mallory", True, False)
        ]
        entry = ok(await admin.post(f"/api/admin/users/{user_id}/ban", json={"reason": "cheating"}))
        assert (entry["action"], entry["target_id"]) == ("user.ban", str(user_id))
        for client in (first, second):
            error = await client.error()
            assert (error["code"], error["message"]) == ("unauthorized", "banned: cheating")
            assert await closed_by_server(client) == (1008, "banned: cheating")

    async with server.http() as http:
        refused = await log_in(http, "mallory", PASSWORD)
        assert (refused.status_code, refused.json()["error"]) == (403, "banned")
        assert "cheating" in refused.json()["message"]
        old = await http.get("/api/auth/me", headers={"Authorization": f"Bearer {token}"})
        assert old.status_code == 401
    async with open_socket(server.url, subprotocols(token)) as ws:
        assert json.loads(await ws.recv())["code"] == "unauthorized"
        with pytest.raises(ConnectionClosed):
            await ws.recv()
        assert ws.close_code == 1008

    banned = ok(await admin.get("/api/admin/users", params={"banned": "true"}))["data"]
    assert [(u["name"], u["ban_reason"]) for u in banned] == [("mallory", "cheating")]
    twice = await admin.post(f"/api/admin/users/{user_id}/ban", json={"reason": "again"})
    assert (twice.status_code, twice.json()["error"]) == (409, "already_banned")
    ok(await admin.post(f"/api/admin/users/{user_id}/unban", json={"reason": "appeal upheld"}))
    async with server.http() as http:
        assert (await log_in(http, "mallory", PASSWORD)).status_code == 200

    audit = ok(
        await admin.get(
            "/api/admin/audit",
            params={"actor": ADMIN_NAME, "action": "user.", "target_id": str(user_id)},
        )
    )
    assert [(e["action"], e["note"]) for e in audit["data"]] == [
        ("user.unban", "appeal upheld"),
        ("user.ban", "cheating"),
    ]


async def test_the_audit_log_names_its_users_and_the_computer_is_never_banned(
    server: Served, admin: httpx.AsyncClient
) -> None:
    """An entry about a user names them (`target_name`, beside the id), as one about a room
    names the room; the computer's accounts (kind `ai`) cannot be banned: `ai_account`."""
    async with server.http() as http:
        registered = ok(
            await http.post("/api/auth/register", json={"name": "trudy", "password": PASSWORD})
        )
    user_id = registered["user"]["id"]
    ok(await admin.post(f"/api/admin/users/{user_id}/ban", json={"reason": "spam"}))
    casual = (await rooms_by_slug(admin))["english-casual"]
    ok(await admin.post(f"/api/admin/rooms/{casual['id']}/close", json={"reason": "quiet"}))
    computer = ok(await admin.get("/api/admin/users", params={"kind": "ai"}))["data"]
    assert len(computer) == 8
    for account in computer[:2]:
        refused = await admin.post(f"/api/admin/users/{account['id']}/ban", json={"reason": "x"})
        assert (refused.status_code, refused.json()["error"]) == (409, "ai_account")
        assert account["name"] in refused.json()["message"]
    banned = ok(await admin.get("/api/admin/users", params={"banned": "true"}))["data"]
    assert [u["name"] for u in banned] == ["trudy"]
    audit = ok(await admin.get("/api/admin/audit"))["data"]
    assert [(e["action"], e["target_id"], e["target_name"], e["note"]) for e in audit] == [
        ("room.close", str(casual["id"]), "English casual", "quiet"),
        ("user.ban", str(user_id), "trudy", "spam"),
    ]


async def test_rooms_are_created_renamed_and_configured(
    server: Served, admin: httpx.AsyncClient
) -> None:
    created = await admin.post(
        "/api/admin/rooms",
        json={
            "slug": "pool-rapid",
            "name": "Pool rapid",
            "variant": "pool",
            "clock": {"base": 600, "increment": 5},
            "table_limit": 1,
            "reason": "players asked for it",
        },
    )
    assert created.status_code == 201, created.text
    room = created.json()
    assert (room["variant"], room["clock"], room["open"], room["listed"]) == (
        "pool",
        {"base": 600, "increment": 5},
        True,
        True,
    )
    taken = await admin.post(
        "/api/admin/rooms", json={"slug": "pool-rapid", "name": "Again", "variant": "pool"}
    )
    assert (taken.status_code, taken.json()["error"]) == (409, "slug_taken")

    async def lobby_rooms() -> dict[str, dict[str, Any]]:
        async with connect(server.url) as lobby:
            await lobby.send(type="subscribe_lobby")
            return {r["slug"]: r for r in (await lobby.expect("lobby"))["rooms"]}

    assert (await lobby_rooms())["pool-rapid"]["clock"] == {"base": 600, "increment": 5}
    async with guest(server.url) as a, guest(server.url) as b:
        await a.send(type="open", room="pool-rapid")
        table = (await a.expect("table"))["table"]
        assert (table["variant"], table["clock"]) == ("pool", {"base": 600, "increment": 5})
        await b.send(type="open", room="pool-rapid")
        assert (await b.error())["code"] == "room_closed"  # the table limit is 1

        path = f"/api/admin/rooms/{room['id']}"
        renamed = ok(await admin.patch(path, json={"name": "Pool rapid 10+5"}))
        assert (renamed["name"], renamed["tables"], renamed["players"]) == ("Pool rapid 10+5", 1, 1)
        ok(await admin.patch(path, json={"table_limit": 2, "clock": None, "listed": False}))
        await b.send(type="open", room="pool-rapid")
        assert (await b.expect("table"))["table"]["clock"] is None
        assert "pool-rapid" not in await lobby_rooms()
        ok(await admin.patch(path, json={"open": False, "reason": "tournament only"}))
        await b.send(type="open", room=room["id"])
        assert (await b.error())["code"] == "room_closed"
        # Closed to new tables, the room's tables and games go on.
        assert (
            len(ok(await admin.get("/api/admin/tables", params={"room": room["id"]}))["data"]) == 2
        )

    audit = ok(await admin.get("/api/admin/audit", params={"target_type": "room"}))["data"]
    assert [(e["action"], e["note"]) for e in audit] == [
        ("room.configure", "tournament only"),
        ("room.configure", None),
        ("room.rename", None),
        ("room.create", "players asked for it"),
    ]
    assert audit[0]["details"] == {"changed": {"is_open": [True, False]}}
    assert audit[1]["details"]["changed"]["clock_base_s"] == [600, None]


async def test_the_audit_log_pages_and_filters(server: Served, admin: httpx.AsyncClient) -> None:
    async with server.http() as http:
        user_id = ok(await http.post("/api/auth/guest"))["user"]["id"]
    for n in range(5):
        ok(await admin.post(f"/api/admin/users/{user_id}/kick", json={"reason": f"#{n}"}))
    first = ok(await admin.get("/api/admin/audit", params={"limit": 3}))
    assert [e["note"] for e in first["data"]] == ["#4", "#3", "#2"]
    rest = ok(
        await admin.get("/api/admin/audit", params={"limit": 3, "cursor": first["next_cursor"]})
    )
    assert [e["note"] for e in rest["data"]] == ["#1", "#0"]
    assert rest["next_cursor"] is None
    since = first["data"][0]["at"]
    assert [
        e["note"] for e in ok(await admin.get("/api/admin/audit", params={"since": since}))["data"]
    ] == ["#4"]
    assert ok(await admin.get("/api/admin/audit", params={"actor": "nobody"}))["data"] == []
    assert ok(await admin.get("/api/admin/audit", params={"action": "room."}))["data"] == []


async def test_status_reports_health_and_load(server: Served, admin: httpx.AsyncClient) -> None:
    async with guest(server.url) as a, guest(server.url) as b, connect(server.url):
        match = await start_game(a, b)
        await match.play("11-15", "23-19", "8-11")
        status = ok(await admin.get("/api/admin/status"))
    assert (status["status"], status["database"], status["broker"]) == ("ok", "ok", "ok")
    assert (status["broker_kind"], status["processes"]) == ("memory", 1)
    assert (status["connections"], status["connected_users"]) == (3, 2)
    assert (status["live_games"], status["open_tables"]) == (1, 1)
    assert status["moves_last_minute"] >= 3


@pytest.mark.server
async def test_an_action_whose_audit_entry_cannot_be_written_changes_nothing(
    server: Served, admin: httpx.AsyncClient
) -> None:
    engine = server.app.state.db.engine
    postgres = engine.dialect.name == "postgresql"
    refuse = (
        [
            "CREATE FUNCTION refuse_audit() RETURNS trigger LANGUAGE plpgsql AS "
            "$$ BEGIN RAISE EXCEPTION 'audit log refused'; END $$",
            "CREATE TRIGGER refuse_audit BEFORE INSERT ON audit_log "
            "FOR EACH ROW EXECUTE FUNCTION refuse_audit()",
        ]
        if postgres
        else [
            "CREATE TRIGGER refuse_audit BEFORE INSERT ON audit_log "
            "BEGIN SELECT RAISE(ABORT, 'audit log refused'); END"
        ]
    )
    allow = ["DROP TRIGGER refuse_audit ON audit_log", "DROP FUNCTION refuse_audit()"]
    async with guest(server.url) as a, guest(server.url) as b:
        match = await start_game(a, b)
        async with engine.begin() as conn:
            for statement in refuse:
                await conn.execute(text(statement))
        try:
            failed = await admin.post(
                f"/api/admin/tables/{match.table['id']}/close", json={"reason": "refused"}
            )
        finally:
            async with engine.begin() as conn:
                for statement in allow if postgres else ["DROP TRIGGER refuse_audit"]:
                    await conn.execute(text(statement))
        assert failed.status_code == 500
        # The game goes on at the open table, as if nothing had been tried.
        event = await match.play("11-15")
        assert event["ply"] == 1
        tables = ok(await admin.get("/api/admin/tables"))["data"]
        assert [(t["id"], t["status"]) for t in tables] == [(match.table["id"], "playing")]
        assert ok(await admin.get("/api/admin/audit"))["data"] == []


@pytest.fixture
async def two_servers(db_url: str, private_redis: PrivateRedis) -> AsyncIterator[list[Served]]:
    settings = make_settings(database_url=db_url, redis_url=private_redis.url)
    async with cluster(settings) as servers:
        yield servers


async def test_actions_reach_clients_of_another_server_process(two_servers: list[Served]) -> None:
    one, two = two_servers
    async with (
        admin_client(one.app, one.url) as admin,
        guest(two.url) as a,
        guest(two.url) as b,
    ):
        match = await start_game(a, b)
        await match.play("11-15")
        ok(
            await admin.post(
                f"/api/admin/games/{match.id}/adjudicate",
                json={"result": "1-0", "reason": "White left the club"},
            )
        )
        for client in (a, b):
            ended = await client.expect("game_ended", game=match.id)
            assert (ended["result"], ended["termination"], ended["reason"]) == (
                "1-0",
                "admin",
                "White left the club",
            )
        # The other process's copy of the game is out of date: its next write finds out.
        await b.send(type="move", game=match.id, move="22-18", ply=1)
        assert (await b.error())["code"] == "game_over"

        ok(
            await admin.post(
                f"/api/admin/users/{a.user_id}/ban", json={"reason": "multi-accounting"}
            )
        )
        assert (await a.error())["message"] == "banned: multi-accounting"
        assert await closed_by_server(a) == (1008, "banned: multi-accounting")
        status = ok(await admin.get("/api/admin/status"))
        assert (status["broker_kind"], status["processes"]) == ("redis", 2)


@pytest.mark.server
async def test_the_status_counts_the_load_of_every_process(
    db_url: str, private_redis: PrivateRedis
) -> None:
    settings = make_settings(
        database_url=db_url, redis_url=private_redis.url, heartbeat_seconds=0.2
    )
    async with (
        serve(settings) as one,
        serve(settings) as two,
        admin_client(one.app, one.url) as admin,
        guest(one.url) as a,
        guest(two.url) as b,
        connect(two.url),  # a spectator, signed in as nobody
    ):
        match = await start_game(a, b)
        await match.play("11-15", "23-19", "8-11")
        for _ in range(100):  # until a beat of the second process carries its clients
            status = ok(await admin.get("/api/admin/status"))
            if status["connections"] == 3 and status["moves_last_minute"] >= 3:
                break
            await asyncio.sleep(0.1)
        assert (status["processes"], status["connections"], status["connected_users"]) == (
            2,
            3,
            2,
        )
        assert status["moves_last_minute"] >= 3
    # A long interval: their beats are still fresh for it, only their marks of a clean stop
    # tell that they are gone.
    later = make_settings(database_url=db_url, redis_url=private_redis.url, heartbeat_seconds=60)
    async with serve(later) as three, admin_client(three.app, three.url) as admin:
        status = ok(await admin.get("/api/admin/status"))
        assert (status["processes"], status["connections"]) == (1, 0)
