"""A Redis outage is not a site outage: two server processes behind the shipped HAProxy
configuration, Redis stopped for ten seconds while two players play through the proxy. No
request gets 503 for lack of the broker, the moves go on, and the processes stay in rotation
(they answer `/readyz` 200, degraded, while `/healthz` says the broker is down)."""

from __future__ import annotations

import asyncio
import contextlib
import shutil
import time
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest

from tests.conftest import PrivateRedis, make_settings
from tests.support.ports import free_port
from tests.support.proxy import haproxy_config, started
from tests.support.server import ServerProcess, http_client
from tests.support.ws import connect, guest_token, start_game

pytestmark = pytest.mark.outage  # Redis stopped, real time

OUTAGE_SECONDS = 10.0
PROCESSES = 2


@contextlib.asynccontextmanager
async def behind_haproxy(backends: list[str], tmp_path: Path) -> AsyncIterator[str]:
    """HAProxy on a free port in front of `backends`; its base URL, once it routes."""
    if shutil.which("haproxy") is None:
        pytest.skip("haproxy is not installed (apt-get install haproxy)")
    port = free_port()
    config = tmp_path / "haproxy.cfg"
    config.write_text(haproxy_config(port, backends))
    with (
        (tmp_path / "haproxy.log").open("wb") as log,
        started(["haproxy", "-f", str(config), "-db"], cwd=tmp_path, stdout=log, stderr=log),
    ):
        url = f"http://127.0.0.1:{port}"
        async with http_client(url) as http:
            deadline = time.monotonic() + 30
            while True:
                with contextlib.suppress(httpx.HTTPError):
                    if (await http.get("/readyz")).status_code == 200:
                        break
                assert time.monotonic() < deadline, "HAProxy did not route"
                await asyncio.sleep(0.2)
            # Both servers up in HAProxy's eyes (`rise 2` checks, 2 s apart).
            await asyncio.sleep(4.5)
        yield url


async def test_requests_through_haproxy_never_get_503_while_redis_is_down(
    db_url: str, private_redis: PrivateRedis, tmp_path: Path
) -> None:
    settings = make_settings(database_url=db_url, redis_url=private_redis.url)
    servers = [ServerProcess(settings, tmp_path) for _ in range(PROCESSES)]
    try:
        for server in servers:
            await server.start()
        backends = [server.url.removeprefix("http://") for server in servers]
        async with behind_haproxy(backends, tmp_path) as url:
            tokens = [await guest_token(url), await guest_token(url)]
            async with connect(url, tokens[0]) as a, connect(url, tokens[1]) as b:
                match = await start_game(a, b)
                await match.play("11-15")
                await private_redis.stop()
                statuses: list[int] = []
                async with http_client(url) as http:
                    began = time.monotonic()
                    # A move about every two seconds, all four played however slow the
                    # machine: the outage lasts until they are.
                    moves = ["23-19", "8-11", "22-17", "9-13"]
                    while moves or time.monotonic() - began < OUTAGE_SECONDS:
                        statuses.append((await http.get("/api/rooms")).status_code)
                        statuses.append((await http.get("/readyz")).status_code)
                        due = (time.monotonic() - began) / (OUTAGE_SECONDS / 5)
                        if moves and 4 - len(moves) < due:
                            await match.play(moves.pop(0))  # both players see it, broker down
                        await asyncio.sleep(0.05)
                    for server in servers:  # each says what is degraded, and stays ready
                        direct = (await http.get(f"{server.url}/readyz")).json()
                        assert direct["degraded"] == ["broker"]
                        assert (await http.get(f"{server.url}/healthz")).status_code == 503
                assert statuses and set(statuses) == {200}, sorted(set(statuses))
                assert match.ply == 5
                await private_redis.start()
                await match.play("17-14")  # and after it
    finally:
        for server in servers:
            await server.stop()
