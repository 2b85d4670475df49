"""Sockets across processes: idle websockets held by N server processes behind HAProxy, the
memory each costs (servers and proxies apart), the time to accept them, and how long a lobby
broadcast takes to reach them all through Redis.

    .venv/bin/python bench/scale.py --processes 2 --sockets 2000          # a quick check
    .venv/bin/python bench/scale.py --processes 8 --sockets 100000 --wait-load 1.5

It creates the PostgreSQL database `checkers_bench_scale` (dropping an old one), starts
`--processes` `checkers serve` processes on it with Redis at redis://127.0.0.1:6379/14, each
with no per-address cap (WS_MAX_PER_IP=0: every bot comes from this host), and HAProxy in front
(deploy/haproxy.cfg's timeouts and `balance leastconn`; no per-source stick-table, since every
bot shares one host; no health checks or logging; small buffers). A process may hold only as
many sockets as its open-file limit allows and a proxied connection costs HAProxy two, so it
runs as many HAProxy instances as `--per-proxy` requires, each an independent process with its
own limit, each balancing over every server. Client processes (`--per-client` sockets each)
open anonymous websockets that subscribe to the lobby, as a visitor's page does, from loopback
source addresses of their own (127.0.0.2, 127.0.0.3, …) so that no address runs out of ports.
Then a host opens a table: the time until every socket has the `lobby_table` is the broadcast's
latency (the clock is CLOCK_MONOTONIC, shared by the processes). Figures are recorded in
docs/benchmarks.md, "Sockets across processes".
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import math
import multiprocessing
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

import asyncpg
import httpx
import websockets
from sqlalchemy.engine import make_url
from websockets.asyncio.client import ClientConnection

sys.path.insert(0, str(Path(__file__).parent))
from play import DEFAULT_POSTGRES, free_port, offer, recreate_database, wait_http  # noqa: E402
from sockets import open_one, rss_kib  # noqa: E402
from sockets import raise_file_limit as file_limit  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
BENCH_DATABASE = "checkers_bench_scale"
BENCH_REDIS = "redis://127.0.0.1:6379/14"
BENCH_ROLE = "checkers_bench_scale"
HAPROXY = shutil.which("haproxy") or "/usr/sbin/haproxy"
RETRIES = 3  # a socket refused or failed is opened again after a second, so many times
FD_MARGIN = 200  # descriptors a process keeps for everything but the sockets under test


def machine_memory() -> str:
    mem = {
        line.split(":")[0]: int(line.split()[1])
        for line in Path("/proc/meminfo").read_text().splitlines()
    }
    sockstat = Path("/proc/net/sockstat").read_text().splitlines()[1]
    return (
        f"machine: MemAvailable {mem['MemAvailable'] / 1024**2:.1f} GiB of "
        f"{mem['MemTotal'] / 1024**2:.1f}; sockets in the kernel: {sockstat}"
    )


def split(total: int, parts: int) -> list[int]:
    """`total` in `parts` shares that differ by at most one."""
    return [total // parts + (1 if n < total % parts else 0) for n in range(parts)]


# --- the client processes ---------------------------------------------------------------------


async def client_run(
    pipe: Connection, urls: list[str], sources: list[str], open_at_once: int
) -> None:
    """Open a socket to each of `urls` (in order, `open_at_once` in flight), report, then on
    "arm" wait for a `lobby_table` on every socket and send back when each arrived."""
    file_limit()
    clients: list[ClientConnection] = []
    errors: dict[str, int] = {}
    queue = iter(enumerate(urls))
    started = time.monotonic()

    async def worker() -> None:
        for n, url in queue:
            for attempt in range(RETRIES + 1):
                try:
                    clients.append(await open_one(url, sources[n % len(sources)], 300))
                    break
                except Exception as exc:  # counted and reported: a refused socket is a result
                    name = f"{type(exc).__name__}: {exc}"[:120]
                    name += " (gave up)" if attempt == RETRIES else " (tried again)"
                    errors[name] = errors.get(name, 0) + 1
                    await asyncio.sleep(1)

    await asyncio.gather(*(worker() for _ in range(open_at_once)))
    pipe.send(("opened", len(clients), errors, started, time.monotonic(), rss_kib(os.getpid())))

    while (command := await asyncio.to_thread(pipe.recv)) == "arm":

        async def arrival(ws: ClientConnection) -> float:
            while True:
                text = await ws.recv()
                if '"type":"lobby_table"' in str(text)[:30]:
                    return time.monotonic()

        waiting = asyncio.gather(*(arrival(ws) for ws in clients), return_exceptions=True)
        pipe.send("armed")
        arrivals = await waiting
        pipe.send([t for t in arrivals if isinstance(t, float)])
    assert command == "close"
    for ws in clients:
        ws.transport.abort()


def client_main(pipe: Connection, urls: list[str], sources: list[str], open_at_once: int) -> None:
    asyncio.run(client_run(pipe, urls, sources, open_at_once))


# --- the processes under test -----------------------------------------------------------------

HAPROXY_CONFIG = """\
# Written by bench/scale.py, from deploy/haproxy.cfg: the same timeouts and balancing; no
# per-source limit (every bot is this host), no health checks, no logging; small buffers.
global
    maxconn {maxconn}
    nbthread 1
    tune.bufsize 4096
    tune.maxrewrite 1024

defaults
    mode http
    timeout connect 5s
    timeout client 60s
    timeout server 60s
    timeout tunnel 1h
    timeout client-fin 5s
    timeout http-request 10s
    retries 3
    option redispatch

frontend checkers
    bind 127.0.0.1:{port}
    maxconn {maxconn}
    default_backend app

backend app
    balance leastconn
    option forwardfor
{servers}
"""


@dataclass
class Cluster:
    server_pids: list[int] = field(default_factory=list)
    server_urls: list[str] = field(default_factory=list)
    proxy_pids: list[int] = field(default_factory=list)
    proxy_urls: list[str] = field(default_factory=list)


@contextlib.contextmanager
def processes(commands: list[tuple[list[str], dict[str, str]]]) -> Iterator[list[int]]:
    started = [subprocess.Popen(args, env=env, cwd=ROOT) for args, env in commands]
    try:
        yield [p.pid for p in started]
    finally:
        for p in started:
            p.terminate()
        for p in started:
            try:
                p.wait(30)
            except subprocess.TimeoutExpired:
                p.kill()


@contextlib.contextmanager
def cluster(
    env: dict[str, str], servers: int, proxies: int, per_proxy: int, workdir: str
) -> Iterator[Cluster]:
    ports = [free_port() for _ in range(servers)]
    serve = [
        ([sys.executable, "-m", "app.cli", "serve", "--port", str(port)], env) for port in ports
    ]
    lines = "\n".join(f"    server app{n} 127.0.0.1:{p}" for n, p in enumerate(ports, 1))
    proxy_ports = [free_port() for _ in range(proxies)]
    haproxy = []
    for n, port in enumerate(proxy_ports):
        path = Path(workdir) / f"haproxy{n}.cfg"
        path.write_text(HAPROXY_CONFIG.format(maxconn=per_proxy, port=port, servers=lines))
        haproxy.append(([HAPROXY, "-f", str(path), "-db", "-q"], dict(os.environ)))
    with processes(serve) as server_pids, processes(haproxy) as proxy_pids:
        yield Cluster(
            server_pids,
            [f"http://127.0.0.1:{p}" for p in ports],
            proxy_pids,
            [f"http://127.0.0.1:{p}" for p in proxy_ports],
        )


async def open_count(url: str) -> int:
    async with httpx.AsyncClient() as http:
        count: int = (await http.get(url + "/healthz")).json()["websockets"]["open"]
        return count


async def bench_database(admin_url: str, connections: int) -> str:
    """The database, owned by a role of its own that may hold at most `connections` at once:
    N processes' pools would otherwise fill PostgreSQL's `max_connections`, which the machine's
    other users share (a superuser is exempt from such limits, hence the role)."""
    fresh = await recreate_database(admin_url, BENCH_DATABASE)
    conn = await asyncpg.connect(admin_url.replace("postgresql+asyncpg://", "postgresql://"))
    try:
        if not await conn.fetchval("SELECT 1 FROM pg_roles WHERE rolname = $1", BENCH_ROLE):
            await conn.execute(f'CREATE ROLE "{BENCH_ROLE}" LOGIN')
        await conn.execute(f'ALTER ROLE "{BENCH_ROLE}" CONNECTION LIMIT {connections}')
        await conn.execute(f'ALTER DATABASE "{BENCH_DATABASE}" OWNER TO "{BENCH_ROLE}"')
    finally:
        await conn.close()
    return str(make_url(fresh).set(username=BENCH_ROLE).render_as_string(hide_password=False))


async def database_connections(admin: asyncpg.Connection) -> int:
    count: int = await admin.fetchval(
        "SELECT count(*) FROM pg_stat_activity WHERE datname = $1", BENCH_DATABASE
    )
    return count


async def broadcast(base: str, pipes: list[Connection]) -> list[float]:
    """A host opens a table; seconds until each socket has the lobby's `lobby_table`."""
    async with httpx.AsyncClient(base_url=base) as http:
        token = (await http.post("/api/auth/guest")).json()["access_token"]
    ws_url = base.replace("http://", "ws://") + "/ws"
    async with websockets.connect(ws_url, subprotocols=offer(token), compression=None) as host:
        await host.recv()
        for pipe in pipes:
            pipe.send("arm")
        for pipe in pipes:
            assert await asyncio.to_thread(pipe.recv) == "armed"
        await asyncio.sleep(1)  # every client is back in its loop, reading
        started = time.monotonic()
        await host.send('{"type":"open","room":"english-casual"}')
        arrivals: list[float] = []
        for pipe in pipes:
            arrivals += await asyncio.to_thread(pipe.recv)
    return sorted(t - started for t in arrivals)


async def wait_for_load(below: float, patience: float = 900) -> None:
    deadline = time.monotonic() + patience
    while (load := os.getloadavg()[0]) >= below and time.monotonic() < deadline:
        print(f"load average {load:.2f}: waiting for it to fall below {below}", flush=True)
        await asyncio.sleep(30)


async def bench(args: argparse.Namespace) -> None:
    limit = file_limit()
    per_proxy = args.per_proxy or (limit - 2 * FD_MARGIN) // 2
    per_server_cap = limit - max(256, limit // 20)  # the server's own derived cap
    if math.ceil(args.sockets / args.processes) > per_server_cap:
        sys.exit(f"{args.processes} processes hold at most {per_server_cap:,} sockets each")
    if args.per_client + FD_MARGIN > limit:
        sys.exit(f"the open-file limit is {limit:,}: lower --per-client")
    proxies = math.ceil(args.sockets / per_proxy)
    clients = max(2, math.ceil(args.sockets / args.per_client))
    if clients > 50:
        sys.exit("at most 50 client processes (their source addresses are 127.0.0.2-251)")
    if args.wait_load:
        await wait_for_load(args.wait_load)
    print(
        f"open-file limit {limit:,} per process; {args.processes} servers, {proxies} HAProxy "
        f"(≤ {per_proxy:,} connections each), {clients} client processes; "
        f"load average {os.getloadavg()[0]:.2f}",
        flush=True,
    )

    admin_url = args.postgres
    database_url = await bench_database(admin_url, args.db_connections)
    env = os.environ | {
        "DATABASE_URL": database_url,
        "REDIS_URL": args.redis,
        "ENVIRONMENT": "development",
        "LOG_LEVEL": "warning",
        "PYTHONPATH": str(ROOT),
        "WS_MAX_PER_IP": "0",  # every bot connects from this host
        "GUESTS_PER_ADDRESS": "1000000",
        "FORWARDED_ALLOW_IPS": "127.0.0.1",
    }
    env.pop("ARCHIVE_DATABASE_URL", None)
    await asyncio.to_thread(
        subprocess.run,
        [sys.executable, "-m", "app.cli", "migrate"],
        env=env,
        check=True,
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
    )
    with (
        tempfile.TemporaryDirectory() as workdir,
        cluster(env, args.processes, proxies, per_proxy, workdir) as c,
    ):
        for url in c.server_urls + c.proxy_urls:
            await wait_http(url + "/healthz")
        await asyncio.sleep(2)
        server_before = [rss_kib(pid) for pid in c.server_pids]
        proxy_before = [rss_kib(pid) for pid in c.proxy_pids]

        # Socket k goes through proxy k mod P; each client process has its own source addresses.
        ws_urls = [u.replace("http://", "ws://") + "/ws" for u in c.proxy_urls]
        context = multiprocessing.get_context("spawn")
        pipes: list[Connection] = []
        children = []
        first = 0
        for n, count in enumerate(split(args.sockets, clients)):
            urls = [ws_urls[k % proxies] for k in range(first, first + count)]
            first += count
            sources = [f"127.0.0.{2 + n * 5 + s}" for s in range(5)]
            parent, child = context.Pipe()
            process = context.Process(
                target=client_main, args=(child, urls, sources, args.open_at_once), daemon=True
            )
            process.start()
            pipes.append(parent)
            children.append(process)

        # One connection of ours, opened before the crowd: PostgreSQL's slots are shared.
        admin = await asyncpg.connect(admin_url.replace("postgresql+asyncpg://", "postgresql://"))
        peak_db = 0
        reports: list[Any] = [None] * clients
        while any(r is None for r in reports):
            for n, pipe in enumerate(pipes):
                if reports[n] is None and pipe.poll():
                    reports[n] = pipe.recv()
            peak_db = max(peak_db, await database_connections(admin))
            await asyncio.sleep(1)
        await admin.close()
        held = sum(r[1] for r in reports)
        errors: dict[str, int] = {}
        for r in reports:
            for name, count in r[2].items():
                errors[name] = errors.get(name, 0) + count
        took = max(r[4] for r in reports) - min(r[3] for r in reports)
        await asyncio.sleep(3)

        per_server = [await open_count(u) for u in c.server_urls]
        server_rss = [rss_kib(pid) for pid in c.server_pids]
        proxy_rss = [rss_kib(pid) for pid in c.proxy_pids]
        client_rss = [r[5] for r in reports]
        server_growth = sum(server_rss) - sum(server_before)
        proxy_growth = sum(proxy_rss) - sum(proxy_before)
        print(f"sockets held: {held:,} of {args.sockets:,}; failures: {errors or 0}")
        print(f"accepted in {took:.1f} s ({held / max(took, 1e-9):,.0f}/s)")
        print(
            f"servers: {', '.join(f'{n:,}' for n in per_server)} sockets; RSS "
            f"{', '.join(f'{k / 1024:.0f}' for k in server_rss)} MiB "
            f"(at rest {', '.join(f'{k / 1024:.0f}' for k in server_before)}); "
            f"{server_growth * 1024 / max(held, 1) / 1000:.1f} kB per socket"
        )
        print(
            f"HAProxy: RSS {', '.join(f'{k / 1024:.0f}' for k in proxy_rss)} MiB "
            f"(at rest {', '.join(f'{k / 1024:.0f}' for k in proxy_before)}); "
            f"{proxy_growth * 1024 / max(held, 1) / 1000:.1f} kB per proxied connection"
        )
        print(
            f"clients: RSS {sum(client_rss) / 1024:,.0f} MiB in {clients} processes "
            f"({sum(client_rss) * 1024 / max(held, 1) / 1000:.1f} kB per socket, all included)"
        )
        print(f"PostgreSQL connections to {BENCH_DATABASE}: at most {peak_db} while accepting")
        print(machine_memory())
        for attempt in range(args.broadcasts):
            latencies = await broadcast(c.proxy_urls[0], pipes)
            print(
                f"lobby broadcast {attempt + 1} to {len(latencies):,} sockets: "
                f"p50 {statistics.median(latencies) * 1000:,.0f} ms, "
                f"last {latencies[-1] * 1000:,.0f} ms",
                flush=True,
            )
        for pipe in pipes:
            pipe.send("close")
        for process in children:
            process.join(60)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--processes", type=int, default=8, help="server processes")
    parser.add_argument("--sockets", type=int, default=100_000, help="websockets to open")
    parser.add_argument(
        "--per-proxy", type=int, default=0, help="connections per HAProxy (0: what fds allow)"
    )
    parser.add_argument("--per-client", type=int, default=12_500, help="sockets per client")
    parser.add_argument("--open-at-once", type=int, default=25, help="per client process")
    parser.add_argument("--broadcasts", type=int, default=2)
    parser.add_argument("--postgres", default=DEFAULT_POSTGRES, help="an admin database URL")
    parser.add_argument(
        "--db-connections", type=int, default=40, help="at most, for all the servers together"
    )
    parser.add_argument("--redis", default=BENCH_REDIS)
    parser.add_argument("--wait-load", type=float, default=0, help="wait for load below this")
    # Stopped with SIGTERM, leave through the context managers: they stop the processes.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit("stopped"))
    asyncio.run(bench(parser.parse_args()))


if __name__ == "__main__":
    main()
