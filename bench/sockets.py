"""Idle websockets: the server's memory per connection, the time to accept them, and how long a
lobby broadcast takes to reach them all.

    .venv/bin/python bench/sockets.py                       # 1,000 and 10,000 connections
    .venv/bin/python bench/sockets.py --counts 2000 --sources 8

It starts `checkers serve` on a fresh SQLite database in a process of its own, then opens the
connections from this process in steps (`--counts`), spread over several loopback source
addresses (127.0.0.2, 127.0.0.3, …) so that no address runs out of ports. Each connection is an
anonymous spectator that subscribes to the lobby, as a visitor's page does. After each step it
reads the server's resident memory (VmRSS), and a host opens a table: the time until every
connection has the `lobby_table` is the broadcast's latency. Figures are recorded in
docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import resource
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import websockets
from websockets.asyncio.client import ClientConnection

sys.path.insert(0, str(Path(__file__).parent))
from play import free_port, offer, wait_http  # noqa: E402  (the sibling script's helpers)

ROOT = Path(__file__).resolve().parents[1]
OPEN_AT_ONCE = 200


def rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise RuntimeError("no VmRSS")


def raise_file_limit() -> int:
    """The open-file limit, raised to the hard limit (root may not go past it in a container)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    return hard


@contextlib.contextmanager
def serving(port: int, env: dict[str, str]) -> Iterator[subprocess.Popen[bytes]]:
    """`checkers serve` on `port` in a process of its own."""
    args = [sys.executable, "-m", "app.cli", "serve", "--port", str(port)]
    process = subprocess.Popen(args, env=env, cwd=ROOT)
    try:
        yield process
    finally:
        process.terminate()
        process.wait(10)


IP_BIND_ADDRESS_NO_PORT = getattr(socket, "IP_BIND_ADDRESS_NO_PORT", 24)  # Linux


async def connected_from(url: str, source: str, within: float) -> socket.socket:
    """A TCP connection to `url`'s host from the address `source`. The port is chosen at
    connect time, not at bind time (IP_BIND_ADDRESS_NO_PORT), so it only has to be unused
    towards that destination: a port taken by bind() is out of reach of every connect() on the
    machine, and tens of thousands of them would starve the proxy's own connections to the
    servers of ports."""
    host, _, port = url.split("/")[2].partition(":")
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.IPPROTO_IP, IP_BIND_ADDRESS_NO_PORT, 1)
        sock.bind((source, 0))
        sock.setblocking(False)
        async with asyncio.timeout(within):
            await asyncio.get_running_loop().sock_connect(sock, (host, int(port or 80)))
    except BaseException:
        sock.close()
        raise
    return sock


async def open_one(url: str, source: str, open_timeout: float = 60) -> ClientConnection:
    """An anonymous socket from `source` that subscribed to the lobby; raise if it could not."""
    ws = await websockets.connect(
        url,
        sock=await connected_from(url, source, open_timeout),
        compression=None,
        open_timeout=open_timeout,
        close_timeout=1,
        max_queue=None,
        # A browser never sends pings of its own (it only answers the server's, as this client
        # does): the server's ping every 20 s is the traffic an idle visitor makes.
        ping_interval=None,
    )
    await ws.recv()  # welcome
    await ws.send('{"type":"subscribe_lobby"}')
    reply = str(await ws.recv())
    if not reply.startswith('{"type":"lobby"'):  # an error: the server could not read it
        ws.transport.abort()
        raise RuntimeError(reply[:100])
    return ws


async def open_many(url: str, count: int, sources: list[str]) -> list[ClientConnection]:
    opened: list[ClientConnection] = []
    for start in range(0, count, OPEN_AT_ONCE):
        batch = range(start, min(count, start + OPEN_AT_ONCE))
        opened += await asyncio.gather(*(open_one(url, sources[n % len(sources)]) for n in batch))
    return opened


async def broadcast_latency(base: str, clients: list[ClientConnection]) -> list[float]:
    """A host opens a table; seconds until each connection has the lobby's `lobby_table`."""
    async with httpx.AsyncClient(base_url=base) as http:
        token = (await http.post("/api/auth/guest")).json()["access_token"]
    ws_url = base.replace("http://", "ws://") + "/ws"
    async with websockets.connect(ws_url, subprotocols=offer(token), compression=None) as host:
        await host.recv()
        started = time.perf_counter()

        async def arrival(ws: ClientConnection) -> float:
            while True:
                text = await ws.recv()
                if '"type":"lobby_table"' in str(text)[:30]:
                    return time.perf_counter() - started

        waiting = [asyncio.create_task(arrival(ws)) for ws in clients]
        await host.send('{"type":"open","room":"english-casual"}')
        return list(await asyncio.gather(*waiting))


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--counts", default="1000,10000", help="connections at each step")
    parser.add_argument("--sources", type=int, default=4, help="loopback source addresses")
    args = parser.parse_args()
    counts = [int(n) for n in args.counts.split(",")]
    limit = raise_file_limit()
    if max(counts) + 100 > limit:
        sys.exit(f"the open-file limit is {limit}: lower --counts")
    sources = [f"127.0.0.{n + 2}" for n in range(args.sources)]
    with tempfile.TemporaryDirectory() as workdir:
        env = os.environ | {
            "DATABASE_URL": f"sqlite+aiosqlite:///{workdir}/bench.db",
            "ENVIRONMENT": "development",
            "LOG_LEVEL": "warning",
            "PYTHONPATH": str(ROOT),
            # Every bot connects from this host: no cap per address.
            "WS_MAX_PER_IP": "0",
            "WS_MESSAGES_PER_SECOND_PER_IP": "0",  # nor a message budget per address
            "GUESTS_PER_ADDRESS": "1000000",  # every bot comes from this host
        }
        env.pop("REDIS_URL", None)
        await asyncio.to_thread(
            subprocess.run,
            [sys.executable, "-m", "app.cli", "migrate"],
            env=env,
            check=True,
            cwd=ROOT,
            stdout=subprocess.DEVNULL,
        )
        port = free_port()
        with serving(port, env) as server:
            base = f"http://127.0.0.1:{port}"
            await wait_http(base + "/healthz")
            url = f"ws://127.0.0.1:{port}/ws"
            await open_many(url, 10, sources)  # warm up: modules, caches
            await asyncio.sleep(1)
            before = rss_kib(server.pid)
            print(f"load average {os.getloadavg()[0]:.2f}; server RSS at rest {before:,} KiB")
            clients: list[ClientConnection] = []
            for count in counts:
                started = time.perf_counter()
                clients += await open_many(url, count - len(clients), sources)
                took = time.perf_counter() - started
                await asyncio.sleep(2)
                rss = rss_kib(server.pid)
                per = (rss - before) * 1024 / len(clients) / 1000
                latencies = sorted(await broadcast_latency(base, clients))
                print(
                    f"{len(clients):>7,} idle sockets: RSS {rss:,} KiB, {per:.1f} kB each; "
                    f"accepted in {took:.1f} s ({len(clients) / max(took, 1e-9):,.0f}/s); "
                    f"lobby broadcast p50 {statistics.median(latencies) * 1000:.0f} ms, "
                    f"last {latencies[-1] * 1000:.0f} ms"
                )
            for ws in clients:
                ws.transport.abort()


if __name__ == "__main__":
    asyncio.run(main())
