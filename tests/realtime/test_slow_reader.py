"""A client that stops reading its socket against a real server: once the socket's buffers are
full and SEND_QUEUE_FRAMES more frames wait for it, the server closes it with 1008 (the close
frame goes out behind what the client has not read yet); meanwhile everyone else is served,
and the server's log holds no error or traceback.
"""

from __future__ import annotations

import asyncio
import json
import socket
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from logging import LogRecord
from typing import Any
from urllib.parse import urlsplit

import pytest
import websockets
from websockets.exceptions import ConnectionClosed

from app.config import Settings
from app.realtime.connections import SEND_QUEUE_FRAMES, Connection, ConnectionState
from app.realtime.hub import Hub
from tests.conftest import make_settings
from tests.support.logs import failures, server_log
from tests.support.server import Served
from tests.support.ws import (
    WAIT_SECONDS,
    Client,
    guest,
    guest_token,
    start_game,
    subprotocols,
    ws_url,
)

# Far more pongs than the kernel buffers of both ends and the send queue can hold (a few MB).
MAX_PINGS = 1_000_000
# The slow client's kernel receive buffer: small, so that loopback's autotuning (up to tens of
# MB) does not decide how long the test floods.
RECEIVE_BUFFER_BYTES = 4096


@pytest.fixture
def settings(db_url: str) -> Settings:
    # The flood must fill the socket, not trip the rate limit (which has a test of its own).
    return make_settings(
        database_url=db_url, disconnect_grace_seconds=0.5, ws_messages_per_second=1_000_000.0
    )


@pytest.fixture
def log(server: Served) -> Iterator[list[LogRecord]]:
    with server_log() as records:
        yield records


@asynccontextmanager
async def slow_guest(base_url: str) -> AsyncIterator[Client]:
    """A guest whose client reads from the socket only when asked to: its library stops reading
    once one frame waits unread (`max_queue=1`), and its kernel buffers little."""
    token = await guest_token(base_url)
    address = urlsplit(base_url)
    assert address.hostname is not None and address.port is not None
    with socket.socket() as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, RECEIVE_BUFFER_BYTES)
        sock.setblocking(False)
        await asyncio.get_running_loop().sock_connect(sock, (address.hostname, address.port))
        async with websockets.connect(
            ws_url(base_url),
            subprotocols=subprotocols(token),
            sock=sock,
            compression=None,
            max_queue=1,
            close_timeout=2,
        ) as ws:
            client = Client(ws)
            client.welcome = await client.expect("welcome")
            client.seen.clear()
            yield client


def connection_of(hub: Hub, client: Client) -> Connection:
    (conn,) = hub.users[client.user_id]
    return conn


async def forgotten(hub: Hub, conn: Connection) -> None:
    """Wait until the server has let go of the connection (it has read all it will of it)."""
    for _ in range(1000):
        if conn not in hub.connections:
            return
        await asyncio.sleep(0.01)
    assert conn not in hub.connections


async def flood_until_closing(client: Client, conn: Connection) -> int:
    """Ping without reading the pongs until the server decides to close; how many were sent.
    On a busy machine the server may have closed, and its socket reset the connection, before
    this loop looks at the state again: a send refused for that ends the flood too."""
    sent = 0
    while conn.state is ConnectionState.OPEN:
        assert sent < MAX_PINGS, "the server never gave up on a client that does not read"
        try:
            await client.send(type="ping", t=sent)
        except ConnectionClosed:
            break
        sent += 1
        if sent % 10 == 0:
            await asyncio.sleep(0)
    return sent


async def test_a_client_that_stops_reading_is_closed_and_others_are_served(
    server: Served, log: list[LogRecord]
) -> None:
    async with guest(server.url) as other, slow_guest(server.url) as slow:
        sent = await flood_until_closing(slow, connection_of(server.app.state.hub, slow))
        # The slow client's writes are stuck behind its unread frames: the others' are not.
        for t in range(3):
            await other.send(type="ping", t=t)
            assert (await other.expect("pong"))["t"] == t
        replies: list[dict[str, Any]] = []
        with pytest.raises(ConnectionClosed) as closed:
            async with asyncio.timeout(WAIT_SECONDS):
                while True:
                    replies.append(json.loads(await slow.ws.recv()))
        assert closed.value.rcvd is not None
        assert (closed.value.rcvd.code, closed.value.rcvd.reason) == (
            1008,
            "too many unread messages",
        )
        # What arrived is the pongs in order, up to those dropped with the queue: more than the
        # queue holds, as the socket's buffers were full before the queue overflowed.
        answered = [reply["t"] for reply in replies if reply["type"] == "pong"]
        assert len(answered) == len(replies)
        assert answered == list(range(len(answered)))
        assert SEND_QUEUE_FRAMES < len(answered) < sent
    assert failures(log) == []


async def test_a_client_that_reads_gets_a_burst_longer_than_the_send_queue(
    server: Served, log: list[LogRecord]
) -> None:
    async with guest(server.url) as client:
        burst = 2 * SEND_QUEUE_FRAMES
        for t in range(burst):
            await client.send(type="ping", t=t)
        assert [(await client.expect("pong"))["t"] for _ in range(burst)] == list(range(burst))
    assert failures(log) == []


async def test_a_stuck_client_that_goes_away_is_forgotten(
    server: Served, log: list[LogRecord]
) -> None:
    hub: Hub = server.app.state.hub
    async with guest(server.url) as other:
        async with slow_guest(server.url) as slow:
            conn = connection_of(hub, slow)
            await flood_until_closing(slow, conn)
            slow.ws.transport.abort()  # gone without reading or closing: a reset
        await forgotten(hub, conn)  # the server sees the reset
        assert slow.user_id not in hub.users
        await other.send(type="ping", t=1)
        assert (await other.expect("pong"))["t"] == 1
    assert failures(log) == []


async def test_what_a_client_sends_once_it_is_being_closed_is_not_acted_on(
    server: Served, log: list[LogRecord]
) -> None:
    hub: Hub = server.app.state.hub
    async with guest(server.url) as other:
        async with slow_guest(server.url) as slow:
            match = await start_game(slow, other)
            conn = connection_of(hub, slow)
            await flood_until_closing(slow, conn)
            await slow.send(type="move", game=match.id, move="11-15", ply=0)
            slow.ws.transport.abort()
        await forgotten(hub, conn)  # the server has read all it will of the slow client
        async with server.http() as http:
            game = (await http.get(f"/api/games/{match.id}")).raise_for_status().json()
        assert game["ply_count"] == 0 and game["moves"] == []
    assert failures(log) == []
