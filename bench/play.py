"""Live play under load: accepted moves per second and move round trips, against a real server.

    .venv/bin/python bench/play.py                      # starts server + echo on Postgres
    .venv/bin/python bench/play.py --processes 2             # two servers behind Redis
    .venv/bin/python bench/play.py --processes 2 --rounds 3  # the two-server ratio, 3 rounds
    .venv/bin/python bench/play.py --database checkers_bench_prod --paced-games 0 --no-echo \
        --seconds 600 --report-every 60 --idle 60   # beside bench/proddb.py's rows, 10 minutes
    .venv/bin/python bench/play.py --url http://127.0.0.1:8000 --echo-url ws://127.0.0.1:8001/ws \
        --room english-casual --games 20 --paced-games 40

Without `--url` it creates the database `checkers_bench_live` (dropping an old one), migrates
it, adds an unlisted room `bench` whose table limit allows every table of the loads, and runs
`checkers serve` (uvloop, no compression, the per-connection message limit raised: it is set
for people) in a process of its own; the bots run in this process. Two loads:

- saturation: GAMES games whose bots move as soon as the server has answered;
- paced: PACED_GAMES concurrent games, each side thinking about a second per move.

A move's round trip is the time from sending it to receiving it back as the `move` event (so
validated, stored and fanned out). The same client also measures round trips against a bare
websocket echo endpoint (a minimal FastAPI app in its own process) and prints the saturation
rate as a fraction of it. With `--database` it plays in an existing database instead (a
production-sized one from bench/proddb.py), `--report-every` prints each interval's rate and
CPU per move (does a long run stay flat?), and `--idle` first measures PostgreSQL's CPU with
the servers up and no players. Each run starts after a CHECKPOINT. Figures are recorded in
docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import importlib.util
import json
import os
import random
import socket
import statistics
import subprocess
import sys
import time
from collections import Counter
from collections.abc import AsyncIterator, Awaitable, Callable, Coroutine, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import asyncpg
import httpx
import websockets
from fastapi import FastAPI, WebSocket, WebSocketDisconnect
from websockets.asyncio.client import ClientConnection
from websockets.typing import Subprotocol

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_POSTGRES = "postgresql+asyncpg://postgres@127.0.0.1:5432/postgres"
BENCH_DATABASE = "checkers_bench_live"
BENCH_ROOM = "bench"  # unlisted, untimed, room for every table the loads open


# --- the processes under test ----------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def echo_app() -> FastAPI:
    """The baseline: a bare FastAPI websocket that sends every text frame back."""
    app = FastAPI()

    @app.websocket("/ws")
    async def echo(websocket: WebSocket) -> None:
        await websocket.accept()
        with contextlib.suppress(WebSocketDisconnect):
            while True:
                await websocket.send_text(await websocket.receive_text())

    return app


async def recreate_database(admin_url: str, name: str) -> str:
    driver_url = admin_url.replace("postgresql+asyncpg://", "postgresql://")
    conn = await asyncpg.connect(driver_url)
    try:
        await conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        await conn.execute(f'CREATE DATABASE "{name}"')
    finally:
        await conn.close()
    return admin_url.rsplit("/", 1)[0] + f"/{name}"


async def add_bench_room(database_url: str) -> None:
    """The benchmark's room (kept if there), and a checkpoint: a run then starts with no dirty
    pages to write and no full-page images owed, as the one compared with it does."""
    conn = await asyncpg.connect(database_url.replace("postgresql+asyncpg://", "postgresql://"))
    try:
        await conn.execute(
            "INSERT INTO rooms (slug, name, variant, clock_base_s, clock_increment_s,"
            " table_limit, is_open, is_listed, created_at)"
            " VALUES ($1, 'Benchmark', 'english', NULL, 0, 100000, true, false, now())"
            " ON CONFLICT (slug) DO NOTHING",
            BENCH_ROOM,
        )
        await conn.execute("CHECKPOINT")
    finally:
        await conn.close()


@contextlib.contextmanager
def child(args: list[str], env: dict[str, str]) -> Iterator[subprocess.Popen[bytes]]:
    process = subprocess.Popen(args, env=env, cwd=ROOT)
    try:
        yield process
    finally:
        process.terminate()
        process.wait(10)


async def wait_http(url: str, seconds: float = 20.0) -> None:
    async with httpx.AsyncClient() as client:
        for _ in range(int(seconds / 0.05)):
            with contextlib.suppress(httpx.TransportError):
                await client.get(url)
                return
            await asyncio.sleep(0.05)
    raise RuntimeError(f"{url} did not come up")


# --- measurements ---------------------------------------------------------------------------

CpuProbe = Callable[[], float | None]
TICK = os.sysconf("SC_CLK_TCK")


def _stat(path: Path) -> tuple[str, int] | None:
    """A process's name and the clock ticks (user + system) it used, from its /proc stat."""
    fields = _fields(path)
    return None if fields is None else (fields[0], int(fields[12]) + int(fields[13]))


def _fields(path: Path) -> list[str] | None:
    """A process's name, then the fields of its /proc stat after it (state, ppid, …)."""
    try:
        text = path.read_text()
    except OSError:  # the process is gone
        return None
    name, rest = text[text.find("(") + 1 :].rsplit(")", 1)
    return [name, *rest.split()]


def process_cpu(pid: int) -> CpuProbe:
    """CPU seconds (user + system) used so far by process `pid`, from /proc (Linux)."""

    def probe() -> float | None:
        stat = _stat(Path(f"/proc/{pid}/stat"))
        return stat[1] / TICK if stat is not None else None

    return probe


BENCH_DATABASES: set[str] = set()  # counted alone when set: other databases' are not ours


class PostgresSampler:
    """PostgreSQL's CPU for the benchmark's databases alone, while another run shares the
    server: every half second, the CPU of each of their backends (and autovacuum workers) and
    of the server's background processes is read by process, so that a connection that closes
    loses at most half a second of its CPU, and other databases' processes count for nothing."""

    def __init__(self) -> None:
        self.seen: dict[int, int] = {}  # pid -> ticks when last read
        self.ticks = 0  # summed over the processes read

    def sample(self) -> None:
        for path in Path("/proc").glob("[0-9]*/stat"):
            fields = _fields(path)
            if fields is None or fields[0] != "postgres":
                continue
            try:
                title = (path.parent / "cmdline").read_bytes().decode(errors="replace")
            except OSError:
                continue
            words = title.rstrip("\0").split(": ", 2)[-1].split()
            if not title.startswith("postgres:"):
                continue  # the postmaster
            per_database = len(words) > 2 and "(" in words[2] or words[:1] == ["autovacuum"]
            if per_database and not any(name in words for name in BENCH_DATABASES):
                continue
            pid, ticks = int(path.parent.name), int(fields[12]) + int(fields[13])
            self.ticks += ticks - self.seen.get(pid, 0)
            self.seen[pid] = ticks

    async def run(self) -> None:
        while True:
            self.sample()
            await asyncio.sleep(0.5)


SAMPLER: PostgresSampler | None = None


def postgres_cpu() -> float | None:
    """CPU seconds used so far by this machine's PostgreSQL: its running processes (backends,
    the WAL writer, ...) and, through the postmaster's count of its children's time, those
    that exited (autovacuum workers, closed connections), which a sum over the running ones
    alone loses; None if there is none to read (a remote server). With `BENCH_DATABASES`, the
    backends of other databases (another test run on the same server) and the exited
    processes (which cannot be told apart) are left out."""
    if SAMPLER is not None:
        SAMPLER.sample()
        return SAMPLER.ticks / TICK
    used = postgres_cpu_by_kind()
    return sum(used.values()) if used else None


def postgres_cpu_by_kind() -> dict[str, float]:
    """CPU seconds used so far by PostgreSQL, by kind of process: the connections' backends
    (`other databases` for those of databases not in `BENCH_DATABASES`, when set), each
    background process by its title (checkpointer, walwriter, autovacuum worker, ...), and
    `exited` (the children the postmaster reaped)."""
    used: dict[str, float] = {}
    for path in Path("/proc").glob("[0-9]*/stat"):
        fields = _fields(path)
        if fields is None or fields[0] != "postgres":
            continue
        ticks = int(fields[12]) + int(fields[13])
        try:
            title = (path.parent / "cmdline").read_bytes().decode(errors="replace")
        except OSError:
            continue
        if not title.startswith("postgres:"):  # the postmaster: also its reaped children
            kind = "postmaster"
            used["exited"] = used.get("exited", 0.0) + (int(fields[14]) + int(fields[15])) / TICK
        else:
            words = title.rstrip("\0").split(": ", 2)[-1].split()
            # A connection's title is "user database host(port) state"; the rest name
            # themselves ("checkpointer", "autovacuum worker", …).
            kind = "backends" if len(words) > 2 and "(" in words[2] else " ".join(words)
            if BENCH_DATABASES and kind == "backends" and words[1] not in BENCH_DATABASES:
                kind = "other databases"
            elif kind.startswith("autovacuum worker") and BENCH_DATABASES:
                ours = any(name in kind for name in BENCH_DATABASES)
                kind = "autovacuum worker" if ours else "other databases"
        used[kind] = used.get(kind, 0.0) + ticks / TICK
    return used


def machine_cpu() -> float | None:
    """CPU seconds all cores spent busy so far (everything but idle and I/O wait)."""
    try:
        fields = [int(f) for f in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    except OSError:
        return None
    user, nice, system, _idle, _iowait, irq, softirq, steal = fields[:8]
    return (user + nice + system + irq + softirq + steal) / TICK


def no_cpu() -> float | None:
    return None


ECHO = ("echo server", "client")


class CpuMeter:
    """CPU seconds used in a window by the server, PostgreSQL, this process and the machine."""

    def __init__(self, server: CpuProbe, names: tuple[str, str] = ("server", "bots")) -> None:
        self.probes: dict[str, CpuProbe] = {
            names[0]: server,
            "PostgreSQL": postgres_cpu,
            names[1]: time.process_time,
            "machine": machine_cpu,
        }
        self.start: dict[str, float | None] = {}

    def begin(self) -> None:
        self.start = {name: probe() for name, probe in self.probes.items()}

    def end(self) -> dict[str, float]:
        used = {}
        for name, probe in self.probes.items():
            before, after = self.start.get(name), probe()
            if before is not None and after is not None:
                used[name] = after - before
        return used


@dataclass
class Stats:
    warm_until: float
    stop_at: float
    moves: int = 0
    round_trips: list[float] = field(default_factory=list)
    errors: Counter[str] = field(default_factory=Counter)
    games: int = 0
    cpu: dict[str, float] = field(default_factory=dict)  # CPU seconds used in the window

    def counts(self, now: float) -> bool:
        return self.warm_until <= now < self.stop_at

    def rate(self) -> float:
        return self.moves / (self.stop_at - self.warm_until)

    def percentile(self, q: float) -> float:
        if not self.round_trips:
            return float("nan")
        ordered = sorted(self.round_trips)
        return ordered[min(len(ordered) - 1, int(q * len(ordered)))] * 1000


def offer(token: str) -> list[Subprotocol]:
    """The token goes in `Sec-WebSocket-Protocol`, never the URL (docs/protocol.md)."""
    return [Subprotocol("checkers"), Subprotocol(f"token.{token}")]


async def open_ws(url: str, token: str | None = None) -> ClientConnection:
    offered = offer(token) if token is not None else None
    return await websockets.connect(
        url, subprotocols=offered, compression=None, max_queue=None, open_timeout=60
    )


class Bot:
    """One player: moves a random legal move whenever it is its turn; asks rematches."""

    def __init__(self, ws: ClientConnection, user_id: int, stats: Stats, pace: float | None):
        self.ws, self.user_id, self.stats, self.pace = ws, user_id, stats, pace
        self.game: int | None = None
        self.colour: str | None = None
        self.table: int | None = None
        self.sent_at: float | None = None
        self.last: dict[str, Any] = {}  # the last message sent
        self.jobs: set[asyncio.Task[None]] = set()

    def later(self, job: Coroutine[Any, Any, None]) -> None:
        """Run `job` without waiting for it, keeping it referenced until it is done."""
        task = asyncio.create_task(job)
        self.jobs.add(task)
        task.add_done_callback(self.jobs.discard)

    async def reply(self, ply: int, legal: list[str]) -> None:
        """Move now when moving as fast as the server answers; else think in a task of its own
        (this one goes on reading)."""
        if self.pace is None:
            await self.move(ply, legal)
        else:
            self.later(self.move(ply, legal))

    async def move(self, ply: int, legal: list[str]) -> None:
        if self.pace is not None:
            await asyncio.sleep(random.uniform(0.5 * self.pace, 1.5 * self.pace))
        if time.perf_counter() >= self.stats.stop_at:
            return
        self.sent_at = time.perf_counter()
        await self.send(type="move", game=self.game, move=random.choice(legal), ply=ply)

    async def send(self, **message: Any) -> None:
        self.last = message
        await self.ws.send(json.dumps(message))

    async def retry(self) -> None:
        """Send the refused message again a little later, as a client does when rate-limited
        (a move's round trip still counts from its first sending)."""
        await asyncio.sleep(0.05)
        await self.ws.send(json.dumps(self.last))

    async def run(self) -> None:
        async for text in self.ws:
            event = json.loads(text)
            kind = event["type"]
            if kind == "move":
                now = time.perf_counter()
                mine = event["turn"] != self.colour  # the move just played was ours
                if mine and self.sent_at is not None:
                    if self.stats.counts(now):
                        self.stats.moves += 1
                        self.stats.round_trips.append(now - self.sent_at)
                    self.sent_at = None
                if not mine and event["legal_moves"]:
                    await self.reply(event["ply"], event["legal_moves"])
            elif kind == "game_started":
                game = event["game"]
                self.game = game["id"]
                self.colour = "black" if game["black"]["id"] == self.user_id else "white"
                if game["turn"] == self.colour:
                    await self.reply(game["ply"], game["legal_moves"])
            elif kind == "game_ended":
                self.stats.games += self.colour == "black"
                if time.perf_counter() < self.stats.stop_at:
                    await self.send(type="rematch", table=event["table"])
            elif kind == "error":
                self.stats.errors[event["code"]] += 1
                if event["code"] == "rate_limited":
                    self.later(self.retry())
            if time.perf_counter() >= self.stats.stop_at + 1:
                return


async def guest(client: httpx.AsyncClient) -> tuple[str, int]:
    body = (await client.post("/api/auth/guest")).raise_for_status().json()
    return body["access_token"], body["user"]["id"]


async def start_pair(
    room: str, ws_bases: list[str], client: httpx.AsyncClient, stats: Stats, pace: float | None
) -> list[Bot]:
    """Black connects to the first server, White to the second (the same one if only one)."""
    bots = []
    for ws_base in ws_bases:
        token, user_id = await guest(client)
        ws = await open_ws(f"{ws_base}/ws", token)
        await ws.recv()  # welcome
        bots.append(Bot(ws, user_id, stats, pace))
    black, white = bots
    await black.send(type="open", room=room, clock=None, colour="black")
    while (event := json.loads(await black.ws.recv()))["type"] != "table":
        if event["type"] == "error":
            raise RuntimeError(f"cannot open a table: {event['message']}")
    await white.send(type="sit", table=event["table"]["id"])
    return bots


async def run_games(
    bases: list[str],
    room: str,
    games: int,
    seconds: float,
    warmup: float,
    pace: float | None,
    cpu: CpuMeter,
    cross: bool = False,
    report_every: float = 0.0,
) -> Stats:
    """Play `games` games. With several servers, game n is served by server n (both players
    on it), or with `cross` its players are on server n and server n + 1."""
    ws_bases = [base.replace("http://", "ws://") for base in bases]
    stats = Stats(warm_until=float("inf"), stop_at=float("inf"))
    limits = httpx.Limits(max_connections=20)
    async with httpx.AsyncClient(base_url=bases[0], limits=limits, timeout=60) as client:
        gate = asyncio.Semaphore(20)

        async def pair(n: int) -> list[Bot]:
            first = ws_bases[n % len(ws_bases)]
            second = ws_bases[(n + 1) % len(ws_bases)] if cross else first
            async with gate:
                return await start_pair(room, [first, second], client, stats, pace)

        # Seat everyone before the clock starts; `game_started` waits in each socket.
        pairs = await asyncio.gather(*(pair(n) for n in range(games)))
    bots = [bot for p in pairs for bot in p]
    stats.warm_until = time.perf_counter() + warmup
    stats.stop_at = stats.warm_until + seconds
    runners = [asyncio.create_task(bot.run()) for bot in bots]
    await asyncio.sleep(warmup)
    cpu.begin()
    if report_every:
        await report(stats, cpu, seconds, report_every)
    else:
        await asyncio.sleep(seconds)
    stats.cpu = cpu.end()
    await asyncio.sleep(1.5)
    for task in runners:
        task.cancel()
    await asyncio.gather(*runners, return_exceptions=True)
    await asyncio.gather(*(bot.ws.close() for bot in bots), return_exceptions=True)
    return stats


async def report(stats: Stats, cpu: CpuMeter, seconds: float, every: float) -> None:
    """Sleep `seconds`, printing every `every` seconds the moves per second of that interval,
    the games that ended in it (a game's start and end cost more than its moves: the first
    interval of a run, before any game has ended, is the cheapest) and the CPU per move of the
    server and of PostgreSQL in it: whether a long run stays flat."""
    began = time.perf_counter()
    games = stats.games
    moves, used = stats.moves, {name: probe() for name, probe in cpu.probes.items()}
    kinds = postgres_cpu_by_kind()
    while (elapsed := time.perf_counter() - began) < seconds - 0.5:
        await asyncio.sleep(min(every, seconds - elapsed))
        now = {name: probe() for name, probe in cpu.probes.items()}
        now_kinds = postgres_cpu_by_kind()
        done = max(stats.moves - moves, 1)
        parts = [
            f"{name} {(after - before) / done * 1e6:.0f} µs"
            for name in ("server", "PostgreSQL", "bots", "machine")
            if (before := used.get(name)) is not None and (after := now.get(name)) is not None
        ]
        split = ", ".join(
            f"{kind} {(after - kinds.get(kind, 0.0)) / done * 1e6:.0f}"
            for kind, after in sorted(now_kinds.items())
            if (after - kinds.get(kind, 0.0)) / done * 1e6 >= 0.5
        )
        print(
            f"    {time.perf_counter() - began:6.0f} s  {(stats.moves - moves) / every:8,.0f} "
            f"moves/s  {stats.games - games:4} games ended  CPU per move: {', '.join(parts)} "
            f"({split})  load {os.getloadavg()[0]:.2f}",
            flush=True,
        )
        moves, used, kinds, games = stats.moves, now, now_kinds, stats.games


async def idle_cpu(seconds: float) -> str:
    """PostgreSQL's CPU while the servers run with no players: their sweeps, heartbeats,
    presence and pairing alone."""
    before = postgres_cpu()
    await asyncio.sleep(seconds)
    after = postgres_cpu()
    if before is None or after is None:
        return ""
    return (
        f"idle ({seconds:.0f} s, no players): PostgreSQL {(after - before) / seconds:.2%} of a core"
    )


async def run_echo(
    url: str, connections: int, seconds: float, warmup: float, cpu: CpuMeter
) -> Stats:
    stats = Stats(warm_until=float("inf"), stop_at=float("inf"))
    frame = json.dumps({"type": "move", "game": 123456, "move": "11x18x25", "ply": 42})
    sockets = [await open_ws(url) for _ in range(connections)]
    stats.warm_until = time.perf_counter() + warmup
    stats.stop_at = stats.warm_until + seconds

    async def loop(ws: ClientConnection) -> None:
        while (sent := time.perf_counter()) < stats.stop_at:
            await ws.send(frame)
            await ws.recv()
            now = time.perf_counter()
            if stats.counts(now):
                stats.moves += 1
                stats.round_trips.append(now - sent)

    async def meter() -> None:
        await asyncio.sleep(warmup)
        cpu.begin()
        await asyncio.sleep(seconds)
        stats.cpu = cpu.end()

    await asyncio.gather(meter(), *(loop(ws) for ws in sockets))
    await asyncio.gather(*(ws.close() for ws in sockets), return_exceptions=True)
    return stats


# --- driver ---------------------------------------------------------------------------------


def all_cpu(probes: list[CpuProbe]) -> CpuProbe:
    """The CPU seconds of several processes together."""

    def probe() -> float | None:
        used = [p() for p in probes]
        return None if any(u is None for u in used) else sum(u for u in used if u is not None)

    return probe


@contextlib.asynccontextmanager
async def servers(
    args: argparse.Namespace,
    prepare: Callable[[], Awaitable[None]] | None = None,
) -> AsyncIterator[tuple[list[str], str, CpuMeter, CpuMeter]]:
    """The servers' and the echo's URLs, and meters of the CPU used by each (and the rest).
    `prepare()` runs once the database is made and migrated, before the servers start."""
    if args.url:
        probe = process_cpu(args.server_pid) if args.server_pid else no_cpu
        yield [args.url], args.echo_url, CpuMeter(probe), CpuMeter(no_cpu, ECHO)
        return
    if args.database:  # a loaded database (bench/proddb.py), played in beside its rows
        database_url = args.postgres.rsplit("/", 1)[0] + f"/{args.database}"
        BENCH_DATABASES.add(args.database)
        global SAMPLER
        SAMPLER = PostgresSampler()
        sampling = asyncio.create_task(SAMPLER.run())  # runs until the benchmark ends
        sampling.add_done_callback(lambda _: None)
    else:
        database_url = await recreate_database(args.postgres, BENCH_DATABASE)
    env = os.environ | {
        "DATABASE_URL": database_url,
        "ENVIRONMENT": "development",
        "LOG_LEVEL": "warning",
        "PYTHONPATH": str(ROOT),
        # Every bot connects from this host: no cap per address.
        "WS_MAX_PER_IP": "0",
        "WS_MESSAGES_PER_SECOND_PER_IP": "0",  # nor a message budget per address
        # Bots answer within a millisecond; the per-connection limit is set for people.
        "WS_MESSAGES_PER_SECOND": "1000",
        # Every bot comes from this host.
        "GUESTS_PER_ADDRESS": "1000000",
        "AI_GAMES_PER_ADDRESS": "1000000",  # bench/ai_live.py's players of the computer
    }
    env.pop("REDIS_URL", None)
    if args.processes > 1:
        env["REDIS_URL"] = args.redis
    migrate = [sys.executable, "-m", "app.cli", "migrate"]
    await asyncio.to_thread(subprocess.run, migrate, env=env, cwd=ROOT, check=True)
    await add_bench_room(database_url)
    if prepare is not None:
        await prepare()
    ports, echo_port = [free_port() for _ in range(args.processes)], free_port()
    began = time.perf_counter()
    echo_command = [sys.executable, str(Path(__file__)), "--serve-echo", str(echo_port)]
    with contextlib.ExitStack() as stack:
        started = [
            stack.enter_context(
                child([sys.executable, "-m", "app.cli", "serve", "--port", str(port)], env)
            )
            for port in ports
        ]
        echo = stack.enter_context(child(echo_command, env))
        urls = [f"http://127.0.0.1:{port}" for port in ports]
        for url in urls:
            # A loaded database's games in progress are recovered first (10,000: a minute).
            await wait_http(url + "/healthz", 600.0 if args.database else 20.0)
            print(f"server up at {url} ({time.perf_counter() - began:.0f} s)", flush=True)
        await wait_http(f"http://127.0.0.1:{echo_port}/docs")
        echo_url = f"ws://127.0.0.1:{echo_port}/ws"
        server_cpu = all_cpu([process_cpu(p.pid) for p in started])
        meters = CpuMeter(server_cpu), CpuMeter(process_cpu(echo.pid), ECHO)
        yield urls, echo_url, *meters


def line(name: str, stats: Stats) -> str:
    return (
        f"{name:<34} {stats.rate():>9,.0f}/s   p50 {stats.percentile(0.5):6.1f} ms   "
        f"p99 {stats.percentile(0.99):6.1f} ms"
    )


def cpu_line(stats: Stats, unit: str) -> str:
    """Where the CPU went: per move (or round trip) for each part, and the machine's load."""
    if not stats.moves or not stats.cpu:
        return ""
    window = stats.stop_at - stats.warm_until
    parts = [
        f"{name} {used / stats.moves * 1e6:.0f} µs ({used / window:.0%})"
        for name, used in stats.cpu.items()
        if name != "machine"
    ]
    text = f"{'':<4}CPU per {unit}: " + ", ".join(parts)
    if "machine" in stats.cpu:
        busy = stats.cpu["machine"] / window
        text += f"; machine busy {busy:.2f} of {os.cpu_count()} cores"
    return text + "\n"


def server_cpu_per(stats: Stats, name: str = "server") -> float:
    """The server's CPU seconds per move (or the echo server's per round trip)."""
    return stats.cpu.get(name, float("nan")) / max(stats.moves, 1)


def ceilings(stats: Stats) -> str:
    """What the measured CPU costs allow: the server's one core, and the machine's cores for
    the server, PostgreSQL and the bots together."""
    used = {name: seconds for name, seconds in stats.cpu.items() if name != "machine"}
    if not stats.moves or not used.get("server"):
        return ""
    per_move = {name: seconds / stats.moves for name, seconds in used.items()}
    cores = os.cpu_count() or 1
    return (
        f"at these costs: the server's core allows {1 / per_move['server']:,.0f} moves/s; "
        f"the machine's {cores} cores allow {cores / sum(per_move.values()):,.0f} moves/s "
        f"for the {', '.join(per_move)} together\n"
    )


async def bench(args: argparse.Namespace) -> None:
    print(f"load average before: {os.getloadavg()[0]:.2f}")
    async with servers(args) as (urls, echo_url, cpu, echo_cpu):
        echo = None
        if not args.no_echo:
            echo = await run_echo(echo_url, args.games, args.seconds, args.warmup, echo_cpu)
            print(line(f"echo round trips ({args.games} sockets)", echo), flush=True)
            print(cpu_line(echo, "round trip"), end="")
        if args.idle:
            await asyncio.sleep(args.warmup)
            print(await idle_cpu(args.idle), flush=True)
        saturated = await run_games(
            urls,
            args.room,
            args.games,
            args.seconds,
            args.warmup,
            None,
            cpu,
            report_every=args.report_every,
        )
        print(line(f"saturation ({args.games} games)", saturated), flush=True)
        print(cpu_line(saturated, "move"), end="")
        if len(urls) > 1:
            # The machine's load moves both phases: alternate them, and take the median ratio.
            ratios: list[float] = []
            same = saturated
            for round_ in range(args.rounds):
                if round_:
                    same = await run_games(
                        urls, args.room, args.games, args.seconds, args.warmup, None, cpu
                    )
                    print(line(f"saturation ({args.games} games)", same), flush=True)
                    print(cpu_line(same, "move"), end="")
                crossed = await run_games(
                    urls, args.room, args.games, args.seconds, args.warmup, None, cpu, cross=True
                )
                print(line(f"saturation, players on 2 servers ({args.games})", crossed), flush=True)
                print(cpu_line(crossed, "move"), end="")
                ratios.append(crossed.rate() / same.rate())
                print(f"players on two servers / on one: {ratios[-1]:.2f}", flush=True)
            if len(ratios) > 1:
                each = ", ".join(f"{r:.2f}" for r in ratios)
                print(
                    f"players on two servers / on one, median of {len(ratios)} rounds: "
                    f"{statistics.median(ratios):.2f} ({each})"
                )
        paced = Stats(warm_until=0.0, stop_at=0.0)
        if args.paced_games:  # none asked for: no phase (it would wait out its seconds)
            paced = await run_games(
                urls, args.room, args.paced_games, args.seconds, args.warmup, 1.0, cpu
            )
            print(line(f"paced ({args.paced_games} games, ~1 move/s/side)", paced), flush=True)
            print(cpu_line(paced, "move"), end="")
    if echo is not None:
        print(f"saturation / echo: {saturated.rate() / echo.rate():.2f}")
        units = server_cpu_per(saturated) / server_cpu_per(echo, "echo server")
        print(f"server CPU per move in echo units (echo server CPU per round trip): {units:.1f}")
    print(ceilings(saturated), end="")
    print(f"games finished: saturation {saturated.games}, paced {paced.games}")
    for name, stats in (("saturation", saturated), ("paced", paced)):
        if stats.errors:
            print(f"errors during {name}: {dict(stats.errors)}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--url", help="a running server (default: start one on Postgres)")
    parser.add_argument("--echo-url", default=None, help="a running echo endpoint (with --url)")
    parser.add_argument(
        "--server-pid", type=int, help="the running server's process, to report its CPU"
    )
    parser.add_argument(
        "--room", default=BENCH_ROOM, help="room to play in (its table limit must allow it)"
    )
    parser.add_argument("--postgres", default=DEFAULT_POSTGRES, help="server to create DB on")
    parser.add_argument("--games", type=int, default=100, help="saturation games")
    parser.add_argument("--paced-games", type=int, default=500, help="paced games")
    parser.add_argument("--seconds", type=float, default=20.0, help="measured time per load")
    parser.add_argument("--warmup", type=float, default=3.0, help="unmeasured time first")
    parser.add_argument("--no-echo", action="store_true", help="skip the echo measurement")
    parser.add_argument(
        "--database",
        help="play in this existing database (e.g. bench/proddb.py's checkers_bench_prod) on "
        "the --postgres server instead of a fresh one",
    )
    parser.add_argument(
        "--report-every",
        type=float,
        default=0.0,
        metavar="SECONDS",
        help="print the saturation's rate and CPU per move every SECONDS",
    )
    parser.add_argument(
        "--idle",
        type=float,
        default=0.0,
        metavar="SECONDS",
        help="first measure PostgreSQL's CPU for SECONDS with the servers up and no players",
    )
    parser.add_argument(
        "--processes", type=int, default=1, help="server processes (more than one: with Redis)"
    )
    parser.add_argument("--redis", default="redis://127.0.0.1:6379/15", help="with --processes")
    parser.add_argument(
        "--rounds",
        type=int,
        default=1,
        help="with --processes: rounds of players on one server then on two, alternated",
    )
    parser.add_argument("--serve-echo", type=int, metavar="PORT", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve_echo:
        import uvicorn

        uvicorn.run(
            echo_app(),
            host="127.0.0.1",
            port=args.serve_echo,
            loop="uvloop",
            ws_per_message_deflate=False,
            log_level="warning",
        )
        return
    if args.url and not args.echo_url and not args.no_echo:
        parser.error("--url needs --echo-url")
    if importlib.util.find_spec("uvloop"):
        import uvloop

        uvloop.run(bench(args))
    else:
        asyncio.run(bench(args))


if __name__ == "__main__":
    main()
