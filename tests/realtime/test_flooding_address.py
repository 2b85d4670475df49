"""The sockets of one client address share a message budget (`WS_MESSAGES_PER_SECOND_PER_IP`):
past it they are read more slowly, while another address's sockets are answered at once, and
none of them is refused or closed for it. Against a real server, with clients connecting from
loopback addresses of their own."""

from __future__ import annotations

import asyncio
import contextlib
import json

import pytest

from app.config import Settings
from tests.conftest import make_settings
from tests.realtime.test_connection_caps import all_closed
from tests.support.server import Served, serve
from tests.support.ws import Client, connect, guest, start_game

FLOODER, OTHER = "127.0.0.2", "127.0.0.3"
RATE = 10.0  # units a second for each address, in bursts of 20
SOCKETS, PINGS = 3, 20  # the flood: 60 pings, 40 of them past the burst


@pytest.fixture
def settings(db_url: str) -> Settings:
    # The per-socket limit out of the way: only the address's budget holds the flood back.
    return make_settings(
        database_url=db_url, ws_messages_per_second=1000.0, ws_messages_per_second_per_ip=RATE
    )


async def arrived(client: Client) -> int:
    """Read what has reached the client so far (stopping once nothing more comes at once);
    how many messages that was."""
    count = 0
    with contextlib.suppress(TimeoutError):
        while True:
            await asyncio.wait_for(client.recv(), 0.05)
            count += 1
    return count


async def test_an_address_past_its_budget_is_slowed_and_another_is_not(server: Served) -> None:
    async with (
        guest(server.url, OTHER) as a,
        guest(server.url, OTHER) as b,
        contextlib.AsyncExitStack() as stack,
    ):
        match = await start_game(a, b)
        flood = [
            await stack.enter_async_context(connect(server.url, source=FLOODER))
            for _ in range(SOCKETS)
        ]
        for client in flood:
            for n in range(PINGS):
                await client.send(type="ping", t=n)
        # The other address's move and ping go round while most of the flood still waits.
        await match.play("11-15")
        await a.send(type="ping", t=-1)
        await a.expect("pong", t=-1)
        answered = [await arrived(client) for client in flood]
        assert sum(answered) < SOCKETS * PINGS, answered
        # Slowed, not refused: every ping of the flooding address is answered, in order, and
        # its sockets stay open.
        for client in flood:
            # (A socket read first may have had all its answers already.)
            if not any(m["type"] == "pong" and m.get("t") == PINGS - 1 for m in client.seen):
                await client.expect("pong", t=PINGS - 1)
            assert [(m["type"], m.get("t")) for m in client.seen] == [
                ("pong", n) for n in range(PINGS)
            ]
            await client.send(type="ping", t=PINGS)
            await client.expect("pong", t=PINGS)


@pytest.mark.parametrize("extra", [0, 250])
async def test_a_flooding_address_gets_its_places_back_when_its_sockets_close(
    db_url: str, extra: int
) -> None:
    """Sockets held back by their address's budget (each of their 40 lobby requests costs 30
    units: minutes of waiting at 10 units a second) give their places back as they close, not
    when the wait is over: closed by the client (extra=0) or by the server for flooding
    (extra=250: 200 dropped messages close the socket with 1008)."""
    settings = make_settings(
        database_url=db_url, ws_messages_per_second_per_ip=RATE, ws_max_per_ip=2
    )
    async with serve(settings) as served:
        for _ in range(2):
            async with contextlib.AsyncExitStack() as stack:
                flood = [
                    await stack.enter_async_context(connect(served.url, source=FLOODER))
                    for _ in range(2)
                ]
                for client in flood:
                    frames = [json.dumps({"type": "subscribe_lobby"})] * (40 + extra)
                    await client.ws.send(frames[0])
                    for frame in frames[1:]:
                        await client.ws.send(frame)
                await asyncio.sleep(0.5)
            # Closed (or being closed): the address connects again within moments.
            await all_closed(served, within=5.0)
            async with connect(served.url, source=FLOODER) as again:
                await again.send(type="ping", t=1)
