"""Real servers for tests: uvicorn in the test's event loop, or in a process of its own.

`serve(settings)` runs `uvicorn.Server` on a free port inside the running event loop and yields
its base URL, its app and its clock: a `FakeClock`, real time until the test moves it on
(`served.clock.advance(seconds)`) instead of waiting for a deadline. `ServerProcess` runs the
server as a separate process (`python -m uvicorn`), so a test can kill it with SIGKILL and start
it again on the same port and database: its time is real.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import socket
import sys
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import uvicorn
from fastapi import FastAPI

from app.clock import FakeClock
from app.config import Settings
from app.main import create_app
from tests.support import tiers
from tests.support.ports import free_port

ROOT = Path(__file__).resolve().parents[2]


@dataclass(frozen=True)
class Served:
    url: str  # http://127.0.0.1:PORT, or an in-process app's (`tests.support.inproc`)
    app: FastAPI  # its `state` holds the live-play registry and broker, for administration
    clock: FakeClock  # the server's time: advance it to pass a deadline at once

    def http(self, source: str | None = None, **options: Any) -> httpx.AsyncClient:
        """An HTTP client of this server (from the loopback address `source` if given)."""
        return http_client(self.url, source, **options)


def http_client(base_url: str, source: str | None = None, **options: Any) -> httpx.AsyncClient:
    """An HTTP client of the server at `base_url`: through the network for a real server, in
    this event loop for an in-process one (`tests.support.inproc`)."""
    from tests.support.inproc import Transport, app_at

    app = app_at(base_url)
    if app is not None:
        transport: httpx.AsyncBaseTransport = Transport(app, (source or "127.0.0.1", 50000))
    else:
        transport = httpx.AsyncHTTPTransport(local_address=source)
    return httpx.AsyncClient(base_url=base_url, transport=transport, **options)


class QuickServer(uvicorn.Server):
    """uvicorn's server, stopped without its pauses (a test starts some thousand servers): its
    main loop waits for `stop()` instead of looking at `should_exit` every 0.1 s, and with no
    connection open its shutdown does not give them 0.1 s to close."""

    def __init__(self, config: uvicorn.Config) -> None:
        super().__init__(config)
        self._stopping = asyncio.Event()
        self._loop: asyncio.AbstractEventLoop | None = None

    async def main_loop(self) -> None:
        self._loop = asyncio.get_running_loop()
        await self.on_tick(0)  # the Date header, as uvicorn's own loop sets it first
        if not self.should_exit:
            await self._stopping.wait()

    def stop(self) -> None:
        """Begin the shutdown; from any thread."""
        self.should_exit = True
        if self._loop is not None:
            self._loop.call_soon_threadsafe(self._stopping.set)

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        if self.server_state.connections:
            await super().shutdown(sockets)
            return
        for server in self.servers:
            server.close()
        for sock in sockets or []:
            sock.close()
        await self._wait_tasks_to_complete()
        if not self.force_exit:
            await self.lifespan.shutdown()


@contextlib.asynccontextmanager
async def serve(settings: Settings, clock: FakeClock | None = None) -> AsyncIterator[Served]:
    """Run the app on 127.0.0.1:<free port> in this event loop (on `clock`, or a new one)."""
    tiers.require_real_servers("a uvicorn server")
    clock = clock or FakeClock()
    app = create_app(settings, clock)
    config = uvicorn.Config(
        app,
        host="127.0.0.1",
        port=0,
        log_level="warning",
        ws_per_message_deflate=False,
        ws_max_size=settings.ws_max_message_bytes,
        lifespan="on",
    )
    server = QuickServer(config)
    task = asyncio.create_task(server.serve())
    while not server.started:
        if task.done():
            task.result()  # raise the start-up error
            raise RuntimeError("the server stopped during start-up")
        await asyncio.sleep(0.01)
    port = server.servers[0].sockets[0].getsockname()[1]
    try:
        yield Served(f"http://127.0.0.1:{port}", app, clock)
    finally:
        server.stop()
        await task


@contextlib.asynccontextmanager
async def cluster(settings: Settings, count: int = 2) -> AsyncIterator[list[Served]]:
    """`count` servers on the same settings (one database, one Redis): the processes of a
    cluster, sharing one clock as the machines of a cluster share the time."""
    clock = FakeClock()
    async with contextlib.AsyncExitStack() as stack:
        yield [await stack.enter_async_context(serve(settings, clock)) for _ in range(count)]


async def attending(served: Served, user_id: int, *table_ids: int) -> None:
    """Wait until the server has stored that the user watches these tables (which it does in
    the background after a `watch`): before a test moves the clock past a grace period, so
    that the seats are judged on the watch and not on an earlier absence."""
    hub = served.app.state.hub
    for _ in range(1000):  # 10 s at most
        if all((user_id, table_id) in hub.attending for table_id in table_ids):
            return
        await asyncio.sleep(0.01)
    raise AssertionError(f"the server never noted that user {user_id} watches {table_ids}")


class ServerProcess:
    """The server in a child process, configured through the environment like in production."""

    def __init__(self, settings: Settings, workdir: Path) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.workdir = workdir
        self.env = os.environ | {
            "PYTHONPATH": str(ROOT),
            "ENVIRONMENT": "test",
            "DATABASE_URL": settings.database_url,
            "DISCONNECT_GRACE_SECONDS": str(settings.disconnect_grace_seconds),
            "FIRST_MOVE_SECONDS": str(settings.first_move_seconds),
            "HEARTBEAT_SECONDS": str(settings.heartbeat_seconds),
            "SWEEP_SECONDS": str(settings.sweep_seconds),
            "GUESTS_PER_ADDRESS": str(settings.guests_per_address),
            "REGISTRATIONS_PER_ADDRESS": str(settings.registrations_per_address),
            "RATED_SHARED_ADDRESS_DAYS": str(settings.rated_shared_address_days),
            "RATED_GAMES_PER_PAIR_PER_DAY": str(settings.rated_games_per_pair_per_day),
        }
        self.env.pop("REDIS_URL", None)
        if settings.redis_url is not None:
            self.env["REDIS_URL"] = settings.redis_url
        self._process: asyncio.subprocess.Process | None = None

    async def start(self) -> None:
        tiers.require_real_servers("a server process")
        self._process = await asyncio.create_subprocess_exec(
            sys.executable,
            *("-m", "uvicorn", "--factory", "app.main:create_app"),
            *("--host", "127.0.0.1", "--port", str(self.port), "--log-level", "warning"),
            "--ws-per-message-deflate=false",
            cwd=self.workdir,  # no stray .env is read
            env=self.env,
        )
        async with httpx.AsyncClient(base_url=self.url) as client:
            for _ in range(600):
                if self._process.returncode is not None:
                    raise RuntimeError(f"the server exited with {self._process.returncode}")
                with contextlib.suppress(httpx.TransportError):
                    if (await client.get("/healthz")).status_code == 200:
                        return
                await asyncio.sleep(0.05)
        raise RuntimeError("the server did not start")

    def http(self, source: str | None = None, **options: Any) -> httpx.AsyncClient:
        """An HTTP client of this server process."""
        return http_client(self.url, source, **options)

    async def kill(self) -> None:
        """SIGKILL: no shutdown code runs, as in a crash."""
        if self._process is not None and self._process.returncode is None:
            self._process.send_signal(signal.SIGKILL)
            await self._process.wait()

    async def stop(self) -> None:
        if self._process is not None and self._process.returncode is None:
            self._process.terminate()
            await self._process.wait()
