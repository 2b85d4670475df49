"""Faults heal by themselves: a broker outage, a crashed or restarted server process, a database
outage, a ban while the broker is down, players who close their pages. Each scenario runs real
servers (uvicorn, in this process or as child processes), real websocket clients, a private
Redis and the parametrised database."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from pathlib import Path
from typing import Any

import asyncpg
import pytest
from sqlalchemy import make_url
from websockets.exceptions import ConnectionClosed

from app.config import Settings
from app.tables.presence import SWITCH_SECONDS
from tests.conftest import PrivateRedis, make_settings
from tests.support.admin_client import admin_client, ok
from tests.support.server import Served, ServerProcess, serve
from tests.support.ws import Client, connect, guest, guest_token, start_game

pytestmark = pytest.mark.outage  # servers killed, Redis stopped: real time

GRACE = 1.0
SWITCH_WAIT = SWITCH_SECONDS + 1.5
HEAL_SECONDS = 10.0  # what the issue allows for a fault to heal


def versions(client: Client, table_id: int) -> list[int]:
    return [m["v"] for m in client.seen if m.get("table") == table_id and "v" in m]


async def wait_for_events(client: Client, kind: str, count: int, **fields: Any) -> None:
    """Read until `count` events of `kind` (with `fields`) have been seen in all."""
    deadline = time.monotonic() + HEAL_SECONDS
    while (
        sum(
            m["type"] == kind and all(m.get(k) == v for k, v in fields.items()) for m in client.seen
        )
        < count
    ):
        assert time.monotonic() < deadline, f"{kind} did not arrive"
        await client.recv()


async def test_a_broker_outage_loses_no_event_on_either_server(
    db_url: str, private_redis: PrivateRedis
) -> None:
    """Players on two processes; Redis goes away while they play and chat: every move is
    acknowledged, every event reaches everyone in order, and a client resuming on the other
    process gets exactly what it missed."""
    settings = make_settings(database_url=db_url, redis_url=private_redis.url)
    async with AsyncExitStack() as stack:
        one = await stack.enter_async_context(serve(settings))
        two = await stack.enter_async_context(serve(settings))
        a = await stack.enter_async_context(guest(one.url))
        b = await stack.enter_async_context(guest(two.url))
        watcher = await stack.enter_async_context(guest(two.url))
        match = await start_game(a, b)
        table_id = match.table["id"]
        await watcher.send(type="watch", table=table_id)
        await watcher.expect("table")

        await private_redis.stop()
        await match.play("11-15", "22-18", "15x22")  # each seen by both players
        await b.send(type="chat", table=table_id, text="the broker is down")
        await a.expect("chat")
        await private_redis.start()
        await match.play("25x18")

        for client in (a, b, watcher):
            await wait_for_events(client, "move", 4)
            seen = versions(client, table_id)
            assert seen == list(range(seen[0], seen[-1] + 1)), "events out of order or lost"
        moves = [m["move"] for m in watcher.seen if m["type"] == "move"]
        assert moves == ["11-15", "22-18", "15x22", "25x18"]

        # A client of process two resumes on process one from where it was.
        since = versions(watcher, table_id)[1]
        async with guest(one.url) as again:
            await again.send(type="watch", table=table_id, since=since, epoch="log")
            synced = await again.expect("synced")
            missed = again.seen[:-1]
            assert [m["v"] for m in missed] == list(range(since + 1, synced["v"] + 1))
            assert synced["v"] == versions(watcher, table_id)[-1]


async def test_a_ban_reaches_sockets_while_the_broker_is_down(
    db_url: str, private_redis: PrivateRedis
) -> None:
    settings = make_settings(database_url=db_url, redis_url=private_redis.url, sweep_seconds=0.5)
    async with serve(settings) as one, serve(settings) as two, guest(two.url) as mallory:
        async with admin_client(one.app, one.url) as admin:
            await private_redis.stop()
            ok(await admin.post(f"/api/admin/users/{mallory.user_id}/ban", json={"reason": "x"}))
        error = await mallory.error()
        assert (error["code"], error["message"]) == ("unauthorized", "banned: x")
        with pytest.raises(ConnectionClosed) as closed:
            while True:
                await mallory.recv()
        assert closed.value.rcvd is not None and closed.value.rcvd.code == 1008


def process_settings(db_url: str, **overrides: Any) -> Settings:
    return make_settings(
        database_url=db_url,
        disconnect_grace_seconds=GRACE,
        heartbeat_seconds=0.5,
        sweep_seconds=0.5,
        **overrides,
    )


@asynccontextmanager
async def processes(
    settings: Settings, tmp_path: Path, count: int
) -> AsyncIterator[list[ServerProcess]]:
    started = [ServerProcess(settings, tmp_path) for _ in range(count)]
    try:
        for process in started:
            await process.start()
        yield started
    finally:
        for process in started:
            await process.stop()


async def claim_when_allowed(client: Client, game_id: int) -> dict[str, Any]:
    away = await client.expect("player_away", game=game_id)
    await asyncio.sleep(max(0.0, away["claim_after"] / 1000 - time.time()) + 0.1)
    await client.send(type="claim_win", game=game_id)
    return await client.expect("game_ended", game=game_id)


async def test_the_players_of_a_crashed_server_are_away_and_can_be_claimed_against(
    db_url: str, private_redis: PrivateRedis, tmp_path: Path
) -> None:
    settings = process_settings(db_url, redis_url=private_redis.url)
    async with processes(settings, tmp_path, 2) as (one, two):
        token_a, token_b = await guest_token(one.url), await guest_token(two.url)
        async with connect(one.url, token_a) as a, connect(two.url, token_b) as b:
            match = await start_game(a, b)
            await match.play("11-15")
            await two.kill()  # b's server crashes; b never comes back
            ended = await claim_when_allowed(a, match.id)
            assert (ended["result"], ended["termination"]) == ("1-0", "abandoned")


async def test_a_player_who_never_comes_back_after_a_restart_can_be_claimed_against(
    db_url: str, tmp_path: Path
) -> None:
    settings = process_settings(db_url)
    async with processes(settings, tmp_path, 1) as (server,):
        token_a, token_b = await guest_token(server.url), await guest_token(server.url)
        async with connect(server.url, token_a) as a, connect(server.url, token_b) as b:
            match = await start_game(a, b)
            await match.play("11-15")
            await server.kill()
        await server.start()
        async with connect(server.url, token_a) as a:  # only Black comes back
            await a.send(type="watch", table=match.table["id"])
            await a.expect("table")
            ended = await claim_when_allowed(a, match.id)
            assert (ended["result"], ended["termination"]) == ("1-0", "abandoned")


async def test_a_stopping_server_sends_its_players_to_another_without_a_break(
    db_url: str, private_redis: PrivateRedis, tmp_path: Path
) -> None:
    """Deploy mode: on SIGTERM a process closes its sockets with 1012; the player reconnects to
    another process (as the balancer would send them), resumes from the version they had,
    with no snapshot, and the opponent never sees them away."""
    settings = process_settings(db_url, redis_url=private_redis.url)
    async with processes(settings, tmp_path, 2) as (one, two):
        token_a, token_b = await guest_token(one.url), await guest_token(two.url)
        async with connect(two.url, token_b) as b:
            async with connect(one.url, token_a) as a:
                match = await start_game(a, b, clock={"base": 300, "increment": 0})
                await match.play("11-15", "22-18")
                since = versions(a, match.table["id"])[-1]
                await one.stop()
                with pytest.raises(ConnectionClosed) as closed:
                    while True:
                        await a.recv()
                assert closed.value.rcvd is not None and closed.value.rcvd.code == 1012
            async with connect(two.url, token_a) as a:
                await a.send(type="watch", table=match.table["id"], since=since, epoch="log")
                assert (await a.expect("synced"))["v"] == since
                assert not [m for m in a.seen if m["type"] == "table"]
                match.black = a
                await match.play("15x22")
                await asyncio.sleep(SWITCH_WAIT)  # past the time a stopped process is given
                await match.play("25x18")
        assert not [m for m in b.seen if m["type"] in ("player_away", "player_back")]


async def test_players_who_close_their_pages_after_a_game_are_stood_up(server: Served) -> None:
    """Both players leave without `leave`, 0.3 s apart, at ten tables at once: every table
    closes once the grace period is over, and the room is empty again."""

    async def one_table() -> int:
        async with guest(server.url) as a:
            async with guest(server.url) as b:
                match = await start_game(a, b)
                await a.send(type="resign", game=match.id)
                await b.expect("game_ended")
                await a.expect("game_ended")
            await asyncio.sleep(0.3)
        table_id: int = match.table["id"]
        return table_id

    async with connect(server.url) as lobby:
        await lobby.send(type="subscribe_lobby")
        await lobby.expect("lobby")
        table_ids = set(await asyncio.gather(*(one_table() for _ in range(10))))
        settings = server.app.state.settings
        give_up = asyncio.get_running_loop().time() + 10
        while True:
            # Past the grace period and two sweeps, on the server's clock (again, should a
            # close be noted after the last advance).
            server.clock.advance(settings.disconnect_grace_seconds + 2 * settings.sweep_seconds)
            await asyncio.sleep(0.2)
            await lobby.send(type="subscribe_lobby")
            rooms = (await lobby.expect("lobby"))["rooms"]
            left = table_ids & {t["id"] for room in rooms for t in room["tables"]}
            if not left:
                break
            assert asyncio.get_running_loop().time() < give_up, f"tables {left} still listed"


async def test_a_player_who_left_during_a_game_is_stood_up_when_it_ends(server: Served) -> None:
    """White closes the page mid-game and Black wins by claim, then leaves: White's seat at the
    finished table is given up too, and the table closes."""
    async with guest(server.url) as a, connect(server.url) as lobby:
        async with guest(server.url) as b:
            match = await start_game(a, b)
            await match.play("11-15")
        ended = await claim_when_allowed(a, match.id)
        assert ended["termination"] == "abandoned"
        await a.send(type="leave", table=match.table["id"])
        closed = await a.expect("table_closed", table=match.table["id"])
        assert closed["reason"] == "everyone left"
        await lobby.send(type="subscribe_lobby")
        rooms = (await lobby.expect("lobby"))["rooms"]
        assert match.table["id"] not in {t["id"] for room in rooms for t in room["tables"]}


@asynccontextmanager
async def database_outage(db_url: str) -> AsyncIterator[None]:
    """The database refuses connections and drops the ones it has, until the block ends."""
    url = make_url(db_url)
    admin_url = url.set(drivername="postgresql", database="postgres").render_as_string(
        hide_password=False
    )
    conn = await asyncpg.connect(admin_url)
    try:
        await conn.execute(f'ALTER DATABASE "{url.database}" WITH ALLOW_CONNECTIONS false')
        await conn.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1",
            url.database,
        )
        yield
    finally:
        await conn.execute(f'ALTER DATABASE "{url.database}" WITH ALLOW_CONNECTIONS true')
        await conn.close()


async def test_a_database_outage_heals_by_itself(db_url: str, tmp_path: Path) -> None:
    """While the database is down: a clock runs out, a new socket is refused clearly and
    /healthz says so. Once it is back, with no restart: the flag falls once, and the first
    move of another game is accepted."""
    if not db_url.startswith("postgresql"):
        pytest.skip("a database outage is made on PostgreSQL")
    settings = process_settings(db_url)
    async with processes(settings, tmp_path, 1) as (server,):
        tokens = [await guest_token(server.url) for _ in range(4)]
        async with AsyncExitStack() as stack:
            a, b, c, d = [await stack.enter_async_context(connect(server.url, t)) for t in tokens]
            timed = await start_game(a, b, clock={"base": 3, "increment": 0})
            untimed = await start_game(c, d, clock=None)
            await timed.play("11-15", "22-18")  # the clocks run from here
            async with database_outage(db_url):
                async with server.http() as http:
                    health = await http.get("/healthz")
                assert health.status_code == 503 and health.json()["database"] == "down"
                with pytest.raises(ConnectionClosed) as refused:
                    async with connect(server.url, tokens[0]):
                        pass
                assert refused.value.rcvd is not None and refused.value.rcvd.code == 1013
                await asyncio.sleep(4)  # Black's 3 s run out meanwhile
            ended = await a.expect("game_ended", game=timed.id)
            assert (ended["result"], ended["termination"]) == ("0-1", "timeout")
            await untimed.play("11-15")  # refused with server_error, it would time out here
            await b.expect("game_ended", game=timed.id)
            for client in (a, b):
                await client.send(type="ping")
                await client.expect("pong")
                assert sum(m["type"] == "game_ended" for m in client.seen) == 1
