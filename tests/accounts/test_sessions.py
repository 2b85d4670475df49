"""A token's sockets end with the token: logging out (on any server process, with or without
the broker) or the token expiring closes them with 1008."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Any

import pytest
from sqlalchemy import update
from websockets.exceptions import ConnectionClosed

from app.accounts.service import hash_token
from app.config import Settings
from app.db.models import AuthToken
from app.timeutil import utcnow
from tests.conftest import PrivateRedis, make_settings
from tests.support.server import Served, cluster, http_client
from tests.support.ws import dial
from tests.support.ws import open_socket as ws_open

PASSWORD = "kings-row-2026"
CLOSED_WITHIN_SECONDS = 5.0  # a generous bound, not a measurement: the sweep runs every 0.5 s


@pytest.fixture
def settings(db_url: str) -> Settings:
    return make_settings(database_url=db_url, sweep_seconds=0.5)


async def open_socket(served: Served, token: str) -> Any:
    ws = await dial(served.url, ["checkers", f"token.{token}"])
    welcome = json.loads(await asyncio.wait_for(ws.recv(), 10))
    assert welcome["type"] == "welcome" and welcome["user"] is not None, welcome
    return ws


async def closed_by_server(ws: Any) -> tuple[list[dict[str, Any]], int]:
    """What the server sent until it closed the socket, and the close code."""
    received = []
    with pytest.raises(ConnectionClosed) as closed:
        while True:
            received.append(json.loads(await asyncio.wait_for(ws.recv(), CLOSED_WITHIN_SECONDS)))
    frame = closed.value.rcvd
    assert frame is not None, "the server did not close the socket"
    return received, frame.code


async def still_open(ws: Any) -> None:
    await ws.send(json.dumps({"type": "ping", "t": 1}))
    while True:
        message = json.loads(await asyncio.wait_for(ws.recv(), 10))
        if message["type"] == "pong":
            return


async def register(url: str, name: str) -> dict[str, Any]:
    async with http_client(url) as http:
        response = await http.post("/api/auth/register", json={"name": name, "password": PASSWORD})
        response.raise_for_status()
        body: dict[str, Any] = response.json()
        return body


async def log_in(url: str, name: str) -> str:
    async with http_client(url) as http:
        response = await http.post("/api/auth/login", json={"name": name, "password": PASSWORD})
        response.raise_for_status()
        token: str = response.json()["access_token"]
        return token


async def log_out(url: str, token: str) -> None:
    async with http_client(url) as http:
        response = await http.post("/api/auth/logout", headers={"Authorization": f"Bearer {token}"})
        assert response.status_code == 204


async def assert_refused(served: Served, token: str) -> None:
    async with ws_open(served.url, ["checkers", f"token.{token}"]) as ws:
        received, code = await closed_by_server(ws)
    assert code == 1008 and received[0]["code"] == "unauthorized"


async def test_logging_out_closes_that_tokens_sockets_only(server: Served) -> None:
    token = (await register(server.url, "alice"))["access_token"]
    other_device = await log_in(server.url, "alice")
    first, second = await open_socket(server, token), await open_socket(server, token)
    elsewhere = await open_socket(server, other_device)
    try:
        await log_out(server.url, token)
        for ws in (first, second):
            received, code = await closed_by_server(ws)
            assert code == 1008
            assert [(m["type"], m["code"]) for m in received] == [("error", "unauthorized")]
            assert ws.close_reason == "logged out"
        await still_open(elsewhere)  # the same user on another device stays connected
        await assert_refused(server, token)
    finally:
        for ws in (first, second, elsewhere):
            await ws.close()


@pytest.mark.server
async def test_an_expired_tokens_sockets_close(server: Served) -> None:
    token = (await register(server.url, "bob"))["access_token"]
    ws = await open_socket(server, token)
    try:
        async with server.app.state.db.session() as session:
            await session.execute(
                update(AuthToken)
                .where(AuthToken.token_hash == hash_token(token))
                .values(expires_at=utcnow())
            )
            await session.commit()
        received, code = await closed_by_server(ws)
        assert code == 1008 and ws.close_reason == "token expired"
        assert received[-1]["code"] == "unauthorized"
    finally:
        await ws.close()


@pytest.fixture
async def two_servers(db_url: str, private_redis: PrivateRedis) -> AsyncIterator[list[Served]]:
    settings = make_settings(database_url=db_url, redis_url=private_redis.url, sweep_seconds=0.5)
    async with cluster(settings) as servers:
        yield servers


@pytest.mark.parametrize("broker", ["up", "down"])
async def test_logging_out_on_one_process_closes_sockets_on_another(
    two_servers: list[Served], private_redis: PrivateRedis, broker: str
) -> None:
    one, two = two_servers
    token = (await register(one.url, "carol"))["access_token"]
    ws = await open_socket(two, token)
    try:
        if broker == "down":
            await private_redis.stop()  # the other process learns it from the database
        await log_out(one.url, token)
        received, code = await closed_by_server(ws)
        assert (code, ws.close_reason) == (1008, "logged out")
        await assert_refused(two, token)
    finally:
        await ws.close()
