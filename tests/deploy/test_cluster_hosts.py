"""Three server processes on three hosts behind HAProxy: one is killed and another stopped
mid-game, and every game still finishes with every acknowledged move stored.

The hosts are network namespaces made by the test, each joined to this one by a veth pair; the
server processes reach PostgreSQL and Redis over those links (PostgreSQL through a small TCP
relay here, since it listens on loopback only). HAProxy runs with the project's own
`deploy/haproxy.cfg`, its server list replaced by the three hosts. Clients connect to HAProxy
only and, like the browser client, reconnect when their socket closes and resume from the last
version they saw. The test needs root, `ip netns` and `haproxy`; it skips, saying why, where
they are missing.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import asyncpg
import httpx
import pytest
import websockets
from sqlalchemy import make_url

from tests.conftest import TEST_DATABASE_URL
from tests.support.ports import free_port
from tests.support.proxy import haproxy_config, started
from tests.support.server import ROOT, http_client
from tests.support.ws import subprotocols, ws_url

pytestmark = pytest.mark.skipif(TEST_DATABASE_URL is None, reason="needs PostgreSQL")

HOSTS = 3
GAMES = 4
PLIES = 24  # each game: this many plies, then Black resigns
WAIT = 60.0


def run(*args: str) -> None:
    subprocess.run(args, check=True, capture_output=True)


@contextlib.contextmanager
def namespaces(tag: str) -> Iterator[list[tuple[str, str, str]]]:
    """HOSTS namespaces, each linked by a veth pair: (namespace, our address, its address)."""
    made: list[tuple[str, str, str]] = []
    try:
        for n in range(1, HOSTS + 1):
            ns, here, there = f"{tag}{n}", f"{tag}h{n}", f"{tag}n{n}"
            ours, theirs = f"10.231.{n}.1", f"10.231.{n}.2"
            run("ip", "netns", "add", ns)
            made.append((ns, ours, theirs))
            run("ip", "link", "add", here, "type", "veth", "peer", "name", there)
            run("ip", "link", "set", there, "netns", ns)
            run("ip", "addr", "add", f"{ours}/24", "dev", here)
            run("ip", "link", "set", here, "up")
            run("ip", "netns", "exec", ns, "ip", "addr", "add", f"{theirs}/24", "dev", there)
            run("ip", "netns", "exec", ns, "ip", "link", "set", there, "up")
            run("ip", "netns", "exec", ns, "ip", "link", "set", "lo", "up")
        yield made
    finally:
        for n, (ns, _, _) in enumerate(made, 1):
            subprocess.run(["ip", "link", "del", f"{tag}h{n}"], capture_output=True)
            subprocess.run(["ip", "netns", "del", ns], capture_output=True)


def can_make_namespaces() -> str | None:
    if os.geteuid() != 0:
        return "network namespaces need root"
    if shutil.which("haproxy") is None:
        return "haproxy is not installed (apt-get install haproxy)"
    probe = f"ckprobe{os.getpid() % 10000}"
    made = subprocess.run(["ip", "netns", "add", probe], capture_output=True)
    if made.returncode != 0:
        return f"cannot make a network namespace: {made.stderr.decode().strip()}"
    subprocess.run(["ip", "netns", "del", probe], capture_output=True)
    return None


@contextlib.asynccontextmanager
async def relay(listen: list[str], port: int, target: tuple[str, int]) -> AsyncIterator[None]:
    """Forward TCP connections made to `listen`:`port` to `target`."""

    async def pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        with contextlib.suppress(ConnectionError, OSError):
            while data := await reader.read(65536):
                writer.write(data)
                await writer.drain()
        writer.close()

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            up_reader, up_writer = await asyncio.open_connection(*target)
        except OSError:
            writer.close()
            return
        await asyncio.gather(pipe(reader, up_writer), pipe(up_reader, writer))

    server = await asyncio.start_server(handle, listen, port)
    try:
        yield
    finally:
        server.close()


class Player:
    """A client that follows one table through HAProxy and comes back after a socket closes,
    resuming from the version it last saw (as app/web/js/live.js does)."""

    def __init__(self, url: str, token: str) -> None:
        self.url = ws_url(url)
        self.token = token
        self.ws: Any = None
        self.table = 0
        self.v = 0
        self.ply = 0
        self.legal: list[str] = []
        self.ended: dict[str, Any] | None = None
        self.game: dict[str, Any] = {}
        self.changed = asyncio.Event()
        self.reconnects = 0
        self.snapshots_after_start = 0
        self.errors: list[dict[str, Any]] = []
        self.reader: asyncio.Task[None] | None = None

    async def open(self) -> None:
        deadline = time.monotonic() + WAIT
        while True:
            try:
                self.ws = await websockets.connect(
                    self.url,
                    subprotocols=subprotocols(self.token),
                    compression=None,
                    open_timeout=5,
                )
                welcome = json.loads(await self.ws.recv())
                assert welcome["type"] == "welcome"
                return
            except (OSError, websockets.exceptions.WebSocketException, TimeoutError):
                assert time.monotonic() < deadline, "could not reconnect through the proxy"
                await asyncio.sleep(0.2)

    async def send(self, **message: Any) -> None:
        with contextlib.suppress(websockets.exceptions.ConnectionClosed):
            await self.ws.send(json.dumps(message))

    def follow(self) -> None:
        self.reader = asyncio.create_task(self._read())

    async def _read(self) -> None:
        while True:
            try:
                async for text in self.ws:
                    self._apply(json.loads(text))
            except websockets.exceptions.ConnectionClosed:
                pass
            self.reconnects += 1
            await self.open()
            await self.send(type="watch", table=self.table, since=self.v, epoch="log")

    def _apply(self, m: dict[str, Any]) -> None:
        if m["type"] == "error":
            self.errors.append(m)
            self.changed.set()
            return
        if m.get("table") != self.table and not (
            m["type"] == "table" and m["table"]["id"] == self.table
        ):
            return
        if m["type"] == "table":
            self.v = m["v"]
            self.snapshots_after_start += self.game != {}
            if m["game"] is not None:
                self._game(m["game"])
        elif "v" in m:
            if m["v"] <= self.v:
                return
            assert m["v"] == self.v + 1, f"gap: {self.v} then {m['v']}"
            self.v = m["v"]
            if m["type"] == "game_started":
                self._game(m["game"])
            elif m["type"] == "move" and m["ply"] > self.ply:
                self.ply, self.legal = m["ply"], m["legal_moves"]
            elif m["type"] == "game_ended":
                self.ended = m
        self.changed.set()

    def _game(self, game: dict[str, Any]) -> None:
        self.game = game
        if game["ply"] >= self.ply:
            self.ply, self.legal = game["ply"], game["legal_moves"]
        if game["status"] != "playing":
            self.ended = {"result": game["result"], "termination": game["termination"]}

    async def until(self, done: Any, wait: float = WAIT) -> None:
        deadline = time.monotonic() + wait
        while not done():
            self.changed.clear()
            remaining = deadline - time.monotonic()
            assert remaining > 0, f"table {self.table} stuck at ply {self.ply}"
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.changed.wait(), min(remaining, 1.0))


async def guest_token(client: httpx.AsyncClient) -> str:
    for _ in range(50):
        with contextlib.suppress(httpx.HTTPError):
            response = await client.post("/api/auth/guest")
            if response.is_success:
                token: str = response.json()["access_token"]
                return token
        await asyncio.sleep(0.2)
    raise AssertionError("no guest token through the proxy")


async def start_pair(url: str, http: httpx.AsyncClient) -> tuple[Player, Player, int]:
    black, white = Player(url, await guest_token(http)), Player(url, await guest_token(http))
    for player in (black, white):
        await player.open()
    await black.send(type="open", room="english-casual", colour="black", clock=None)
    while (m := json.loads(await black.ws.recv()))["type"] != "table":
        pass
    table = m["table"]["id"]
    for player in (black, white):
        player.table, player.v = table, m["v"]
    await white.send(type="sit", table=table)
    for player in (black, white):
        player.follow()
    await black.until(lambda: black.game != {})
    await white.until(lambda: white.game != {})
    return black, white, black.game["id"]


async def play(black: Player, white: Player, game: int, upto: int, acked: list[str]) -> None:
    """Play the first legal move in turn until ply `upto`; `acked` gets each move its mover saw
    acknowledged (its `move` event, possibly replayed after a reconnect)."""
    while black.ply < upto:
        mover = black if black.ply % 2 == 0 else white
        await mover.until(lambda m=mover: m.ply == black.ply and bool(m.legal))
        ply, move = mover.ply, mover.legal[0]
        deadline = time.monotonic() + WAIT
        while mover.ply == ply:
            # Sent again if no answer came: the socket may have closed before the move got
            # through, or while the reader was still reconnecting (a send on the old socket).
            reconnects, errors = mover.reconnects, len(mover.errors)
            await mover.send(type="move", game=game, move=move, ply=ply)
            with contextlib.suppress(AssertionError):
                await mover.until(
                    lambda m=mover, p=ply, r=reconnects, e=errors: (
                        m.ply > p or m.reconnects > r or len(m.errors) > e
                    ),
                    wait=5.0,
                )
            if mover.ply == ply:
                assert time.monotonic() < deadline, (
                    f"move {move} at ply {ply} never stored; errors: {mover.errors[-3:]}"
                )
                await asyncio.sleep(0.3)
        acked.append(move)
        await black.until(lambda p=ply: black.ply > p)


async def resign(black: Player, white: Player, game: int) -> None:
    """Black resigns; sent again if no ending came (a send on a socket that was closing is
    lost, as a move's is: see `play`). A second resignation is refused as the game is over."""
    deadline = time.monotonic() + WAIT
    while white.ended is None:
        errors = len(black.errors)
        await black.send(type="resign", game=game)
        with contextlib.suppress(AssertionError):
            await white.until(
                lambda e=errors: white.ended is not None or len(black.errors) > e, wait=5.0
            )
        assert white.ended is not None or time.monotonic() < deadline, (
            f"the resignation in game {game} was never stored; errors: {black.errors[-3:]}"
        )


async def wait_up(address: str) -> None:
    async with httpx.AsyncClient(base_url=f"http://{address}:8000") as direct:
        for _ in range(300):
            with contextlib.suppress(httpx.HTTPError):
                if (await direct.get("/healthz")).status_code == 200:
                    return
            await asyncio.sleep(0.1)
    raise AssertionError(f"the server at {address} did not start")


async def test_games_finish_when_one_server_is_killed_and_another_stopped(
    tmp_path: Path,
) -> None:
    reason = can_make_namespaces()
    if reason is not None:
        pytest.skip(reason)
    from tests.conftest import postgres_database

    tag = f"ck{os.getpid() % 1000}"
    with (
        postgres_database() as db_url,
        namespaces(tag) as hosts,
        contextlib.ExitStack() as stack,
    ):
        migrate_env = os.environ | {"DATABASE_URL": db_url, "PYTHONPATH": str(ROOT)}
        migrate = [sys.executable, "-m", "app.cli", "migrate"]
        await asyncio.to_thread(
            subprocess.run, migrate, env=migrate_env, cwd=tmp_path, check=True, capture_output=True
        )
        database = make_url(db_url)
        pg_port, redis_port, proxy_port = free_port(), free_port(), free_port()
        ours = [address for _, address, _ in hosts]
        redis_args = ["redis-server", "--port", str(redis_port), "--bind", *ours, "127.0.0.1"]
        stack.enter_context(
            started(
                redis_args + ["--save", "", "--appendonly", "no", "--protected-mode", "no"],
                stdout=subprocess.DEVNULL,
            )
        )
        async with relay(ours, pg_port, (database.host or "127.0.0.1", database.port or 5432)):
            servers = []
            for ns, gateway, address in hosts:
                reached = database.set(host=gateway, port=pg_port)
                env = os.environ | {
                    "PYTHONPATH": str(ROOT),
                    "ENVIRONMENT": "test",
                    "DATABASE_URL": reached.render_as_string(hide_password=False),
                    "REDIS_URL": f"redis://{gateway}:{redis_port}/0",
                    "HEARTBEAT_SECONDS": "0.5",
                    "DISCONNECT_GRACE_SECONDS": "30",
                }
                command = ["ip", "netns", "exec", ns, sys.executable, "-m", "uvicorn"]
                command += ["--factory", "app.main:create_app", "--host", address, "--port"]
                command += ["8000", "--log-level", "warning", "--ws-per-message-deflate=false"]
                command += ["--timeout-graceful-shutdown", "10"]  # as `checkers serve`
                log = stack.enter_context((tmp_path / f"{ns}.log").open("wb"))
                servers.append(
                    stack.enter_context(
                        started(command, env=env, cwd=tmp_path, stdout=log, stderr=log)
                    )
                )
            config = tmp_path / "haproxy.cfg"
            config.write_text(haproxy_config(proxy_port, [f"{a}:8000" for _, _, a in hosts]))
            proxy_log = stack.enter_context((tmp_path / "haproxy.log").open("wb"))
            haproxy = ["haproxy", "-f", str(config), "-db"]
            stack.enter_context(started(haproxy, cwd=tmp_path, stdout=proxy_log, stderr=proxy_log))
            for _, _, address in hosts:
                await wait_up(address)
            await asyncio.sleep(3)  # HAProxy's checks see them all up
            url = f"http://127.0.0.1:{proxy_port}"
            async with http_client(url, timeout=5) as http:
                pairs = [await start_pair(url, http) for _ in range(GAMES)]
            acked: dict[int, list[str]] = {game: [] for _, _, game in pairs}

            async def stage(upto: int) -> None:
                await asyncio.gather(*(play(b, w, game, upto, acked[game]) for b, w, game in pairs))

            await stage(6)
            servers[0].kill()  # a crash: no shutdown at all
            await stage(12)
            servers[1].send_signal(signal.SIGTERM)  # deploy mode
            await stage(PLIES)
            for black, white, game in pairs:
                await resign(black, white, game)
                assert white.ended is not None and white.ended["result"] == "0-1"
            players = [p for b, w, _ in pairs for p in (b, w)]
            assert sum(p.reconnects for p in players) > 0, "no client was moved"
            assert all(p.snapshots_after_start == 0 for p in players), "resumed by snapshot"
            for player in players:
                if player.reader is not None:
                    player.reader.cancel()
                await player.ws.close()
        conn = await asyncpg.connect(database.set(drivername="postgresql").render_as_string(False))
        try:
            for game, moves in acked.items():
                rows = await conn.fetch(
                    "SELECT move FROM moves WHERE game_id = $1 ORDER BY ply", game
                )
                status = await conn.fetchval("SELECT status FROM games WHERE id = $1", game)
                assert [r["move"] for r in rows] == moves and len(moves) == PLIES
                assert status == "finished"
        finally:
            await conn.close()
