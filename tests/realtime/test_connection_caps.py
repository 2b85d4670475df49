"""Websocket caps against a real server: per client address and per process (HTTP 429 on the
handshake), per user (close 1013 once the user is known); `/healthz` keeps answering and reports
the count; a refused crowd is logged once per address, not once per socket.
"""

from __future__ import annotations

import asyncio
import logging
import resource
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from typing import Any

import pytest
import websockets
from websockets.exceptions import ConnectionClosed, InvalidStatus
from websockets.http11 import Response

from app.config import Settings
from app.realtime import limits
from app.realtime.limits import ConnectionCapMiddleware, ConnectionGate
from tests.conftest import make_settings
from tests.support.logs import server_log
from tests.support.server import Served, serve
from tests.support.ws import connect, guest_token


def ws_url(served: Served) -> str:
    return served.url.replace("http://", "ws://") + "/ws"


@asynccontextmanager
async def sockets(served: Served, count: int) -> AsyncIterator[list[Any]]:
    """`count` anonymous sockets, each past its welcome, open for the block."""
    async with AsyncExitStack() as stack:
        yield [await stack.enter_async_context(connect(served.url)) for _ in range(count)]


async def refused(served: Served) -> Response:
    """The handshake's answer to one more socket, which must be refused."""
    with pytest.raises(InvalidStatus) as refusal:
        async with websockets.connect(ws_url(served), compression=None):
            pass
    return refusal.value.response


async def health(served: Served) -> dict[str, Any]:
    async with served.http() as client:
        response = await client.get("/healthz")
        assert response.status_code == 200, response.text
        body: dict[str, Any] = response.json()
        return body


async def all_closed(served: Served, within: float = 10.0) -> None:
    """Wait until the server has seen every socket close (a client's close completes on its
    side a moment before the server's handler has run)."""
    for _ in range(int(within / 0.02)):
        if (await health(served))["websockets"]["open"] == 0:
            return
        await asyncio.sleep(0.02)
    raise AssertionError(f"the server still counts sockets closed {within:g} s ago")


def refusal_warnings(records: list[logging.LogRecord]) -> list[str]:
    return [r.getMessage() for r in records if "websocket refused" in r.getMessage()]


@pytest.fixture
def settings(db_url: str) -> Settings:
    return make_settings(
        database_url=db_url, ws_max_per_ip=3, ws_max_per_user=2, ws_max_connections=50
    )


async def test_an_address_over_its_cap_gets_429_and_one_warning(server: Served) -> None:
    with server_log() as records:
        async with sockets(server, 3):
            answers = [await refused(server) for _ in range(5)]
            assert {a.status_code for a in answers} == {429}
            assert b"too_many_connections" in answers[0].body
            assert answers[0].headers["Retry-After"].isdigit()
            assert (await health(server))["websockets"]["open"] == 3
        # The sockets closed: the address may connect again.
        await all_closed(server)
        async with sockets(server, 3):
            pass
    warnings = refusal_warnings(records)
    assert len(warnings) == 1 and "127.0.0.1" in warnings[0] and "WS_MAX_PER_IP" in warnings[0]
    assert [r.getMessage() for r in records if r.levelno >= logging.ERROR] == []


async def test_a_full_process_refuses_with_429_and_stays_reachable(db_url: str) -> None:
    settings = make_settings(database_url=db_url, ws_max_per_ip=0, ws_max_connections=4)
    async with serve(settings) as served:
        with server_log() as records:
            async with sockets(served, 4):
                for _ in range(3):
                    assert (await refused(served)).status_code == 429
                body = await health(served)
                assert body["status"] == "ok"
                assert body["websockets"]["open"] == 4
                assert body["websockets"]["limit"] == 4
            assert (await health(served))["websockets"]["open"] == 0
        assert len(refusal_warnings(records)) == 1


async def test_a_user_over_its_cap_is_closed_with_1013(server: Served) -> None:
    token = await guest_token(server.url)
    with server_log() as records:
        async with connect(server.url, token), connect(server.url, token):
            for _ in range(3):
                with pytest.raises(ConnectionClosed) as closed:
                    async with connect(server.url, token):
                        pass
                rcvd = closed.value.rcvd
                assert rcvd is not None and rcvd.code == 1013
                assert rcvd.reason == "at most 2 connections per user"
            # Someone else, signed in or not, is not held back by that user's sockets.
            async with connect(server.url, await guest_token(server.url)) as other:
                assert other.welcome["user"] is not None
        # Closed sockets free the user's places.
        await all_closed(server)
        async with connect(server.url, token), connect(server.url, token):
            pass
    warnings = refusal_warnings(records)
    assert len(warnings) == 1 and "WS_MAX_PER_USER" in warnings[0]


async def test_a_closed_socket_frees_its_place_before_its_bookkeeping_ends() -> None:
    """The place is the socket's, not its handler's: a client that closes and reconnects at
    once is not refused while the server still records it gone."""
    gate = ConnectionGate(max_connections=1, max_per_ip=1, open_files=1024)
    bookkeeping = asyncio.Event()

    async def handler(scope: Any, receive: Any, send: Any) -> None:
        assert (await receive())["type"] == "websocket.connect"
        await send({"type": "websocket.accept"})
        assert (await receive())["type"] == "websocket.disconnect"
        await bookkeeping.wait()  # presence and pairing writes, say

    messages: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
    await messages.put({"type": "websocket.connect"})
    sent: list[dict[str, Any]] = []

    async def send(message: Any) -> None:
        sent.append(message)

    scope = {"type": "websocket", "client": ("198.51.100.7", 5000), "extensions": {}}
    middleware = ConnectionCapMiddleware(handler, gate)
    served = asyncio.create_task(middleware(scope, messages.get, send))
    await asyncio.sleep(0)
    assert gate.open == 1 and gate.per_ip["198.51.100.7"] == 1
    await messages.put({"type": "websocket.disconnect", "code": 1000})
    for _ in range(10):
        await asyncio.sleep(0)
    assert gate.open == 0 and "198.51.100.7" not in gate.per_ip
    assert gate.enter("198.51.100.7") is None  # the address may connect again at once
    gate.leave("198.51.100.7")
    bookkeeping.set()
    await served
    assert gate.open == 0  # released once, not twice


async def test_a_socket_the_server_closes_frees_its_place_when_the_close_is_sent() -> None:
    gate = ConnectionGate(max_connections=5, max_per_ip=0, open_files=1024)
    closed = asyncio.Event()
    counts: list[int] = []

    async def handler(scope: Any, receive: Any, send: Any) -> None:
        await receive()
        await send({"type": "websocket.accept"})
        counts.append(gate.open)
        await send({"type": "websocket.close", "code": 1008})
        counts.append(gate.open)
        await closed.wait()

    async def receive() -> dict[str, Any]:
        return {"type": "websocket.connect"}

    async def send(message: Any) -> None:
        pass

    scope = {"type": "websocket", "client": ("198.51.100.8", 5000), "extensions": {}}
    served = asyncio.create_task(ConnectionCapMiddleware(handler, gate)(scope, receive, send))
    for _ in range(10):
        await asyncio.sleep(0)
    assert counts == [1, 0]
    closed.set()
    await served
    assert gate.open == 0


async def test_healthz_reports_the_open_file_limit_and_a_cap_below_it(db_url: str) -> None:
    async with serve(make_settings(database_url=db_url)) as served:
        websockets_ = (await health(served))["websockets"]
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    assert soft == hard  # raised at start
    assert websockets_["open_file_limit"] == min(soft, limits.UNLIMITED)
    assert websockets_["open"] == 0
    assert 0 < websockets_["limit"] <= websockets_["open_file_limit"] - limits.RESERVED_FILES


def test_the_derived_cap_leaves_room_for_other_files() -> None:
    assert limits.default_max_connections(1024) == 1024 - limits.RESERVED_FILES
    assert limits.default_max_connections(100_000) == 95_000
    assert limits.default_max_connections(100) == 1
    assert limits.max_connections(None, 20_000) == 19_000
    assert limits.max_connections(5_000, 20_000) == 5_000
    assert limits.max_connections(20_000, 20_000) == 19_000  # cannot fit: lowered


@asynccontextmanager
async def event_stream(served: Served, token: str, source: str = "127.0.0.1") -> AsyncIterator[int]:
    """`GET /api/stream/event` held open for the block (its first line read when it is
    served); yields its status."""
    async with (
        served.http(source, timeout=10) as http,
        http.stream(
            "GET", "/api/stream/event", headers={"Authorization": f"Bearer {token}"}
        ) as response,
    ):
        if response.status_code != 200:
            await response.aread()
            assert response.json()["error"] == "too_many_connections", response.text
            assert response.headers["Retry-After"].isdigit()
        yield response.status_code


async def test_event_streams_count_in_the_caps_per_user_and_per_address(server: Served) -> None:
    """An event stream is a connection held open like a websocket: it counts in the same caps
    (WS_MAX_PER_USER 2, WS_MAX_PER_IP 3 here), and is refused with 429 `too_many_connections`
    beyond them; closing it frees its place."""
    token = await guest_token(server.url)
    async with event_stream(server, token) as first, event_stream(server, token) as second:
        assert (first, second) == (200, 200)
        async with event_stream(server, token) as third:
            assert third == 429
        with pytest.raises(ConnectionClosed) as closed:  # a socket of the same user, too
            async with connect(server.url, token):
                pass
        assert closed.value.rcvd is not None and closed.value.rcvd.code == 1013
        # The address holds 2 of its 3 places: one more socket, then nothing.
        async with connect(server.url, await guest_token(server.url)):
            async with event_stream(server, await guest_token(server.url)) as over:
                assert over == 429
            assert (await refused(server)).status_code == 429
    await all_closed(server)
    async with event_stream(server, token) as again, connect(server.url, token):
        assert again == 200
