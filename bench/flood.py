"""One client address flooding the server while others play: the paced players' move round
trips alone and under the flood, the flood's achieved message rate and the server's CPU.

    .venv/bin/python bench/flood.py
    .venv/bin/python bench/flood.py --paced-games 100 --mix ping,watch,lobby,chat
    .venv/bin/python bench/flood.py --code /tmp/other-checkout     # serve another version
    .venv/bin/python bench/flood.py --server-env WS_MESSAGES_PER_SECOND_PER_IP=0

Like bench/play.py (whose helpers it uses) it creates a fresh PostgreSQL database with the
unlisted room `bench` and runs `checkers serve` in a process of its own, but with the limits
people get: only guests per address are raised (every paced player is made over HTTP from this
host). The paced players (PACED_GAMES games, each side thinking about a second per move) connect
from loopback addresses of their own, two games per address, so that no address of theirs comes
near a limit. The flood comes from one address (127.0.0.9), in a process of its own: as many
guests as one address may make by default (10), each with as many sockets as a user may hold
(10), 100 sockets in all (the default cap per address). Every socket sends within its own
limit (19 messages a second) a cycle of the messages that cost the server most: `watch` of the
busiest table (a snapshot) and `unwatch`, `subscribe_lobby` (a snapshot of the lobby) and
`unsubscribe_lobby`, a `chat` there every 2.5 s (within the chat limit), and a `ping` between
each two, whose answer tells how far the server has read that socket.

First the paced games play alone for SECONDS, then under the flood for SECONDS (after a few
seconds for the flood to ramp up). Figures are recorded in docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import socket
import subprocess
import sys
import time
from collections import Counter
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import websockets
from websockets.asyncio.client import ClientConnection
from websockets.exceptions import ConnectionClosed, InvalidStatus

sys.path.insert(0, str(Path(__file__).parent))
from play import (  # noqa: E402  (the sibling script's helpers)
    BENCH_ROOM,
    DEFAULT_POSTGRES,
    ROOT,
    Bot,
    CpuMeter,
    Stats,
    add_bench_room,
    free_port,
    guest,
    offer,
    process_cpu,
    recreate_database,
    wait_http,
)

BENCH_DATABASE = "checkers_bench_flood"
FLOOD_SOURCE = "127.0.0.9"
SHUTDOWN_SECONDS = 30
GAMES_PER_SOURCE = 2
CHAT_EVERY = 2.5  # seconds: within the chat limit (5 per 10 s)
MIXES = ("ping", "watch", "lobby", "chat")


def paced_source(n: int) -> str:
    """The loopback address game n's players connect from (127.0.1.1, 127.0.1.2, ...)."""
    k = n // GAMES_PER_SOURCE + 1
    return f"127.0.{1 + k // 250}.{k % 250 + 1}"


async def connect_from(url: str, source: str, token: str | None) -> ClientConnection:
    return await websockets.connect(
        url,
        subprotocols=offer(token) if token is not None else None,
        compression=None,
        max_queue=None,
        open_timeout=60,
        close_timeout=1,
        family=socket.AF_INET,
        local_addr=(source, 0),
    )


# --- the paced players (this process) --------------------------------------------------------


async def seat_pair(
    ws_url: str, source: str, client: httpx.AsyncClient, stats: Stats
) -> tuple[list[Bot], int]:
    """Two paced players at a table of their own (Black opened it); and the table's id."""
    bots = []
    for _ in range(2):
        token, user_id = await guest(client)
        ws = await connect_from(ws_url, source, token)
        await ws.recv()  # welcome
        bots.append(Bot(ws, user_id, stats, 1.0))
    black, white = bots
    await black.send(type="open", room=BENCH_ROOM, clock=None, colour="black")
    while (event := json.loads(await black.ws.recv()))["type"] != "table":
        if event["type"] == "error":
            raise RuntimeError(f"cannot open a table: {event['message']}")
    await white.send(type="sit", table=event["table"]["id"])
    return bots, event["table"]["id"]


def window(warm_until: float) -> Stats:
    """Stats that count from `warm_until` until the bots are given other stats (the bots go on
    playing until the end of the run)."""
    return Stats(warm_until=warm_until, stop_at=float("inf"))


def result_line(name: str, stats: Stats, seconds: float) -> str:
    return (
        f"{name:<28} {stats.moves / seconds:>6,.0f} moves/s   p50 {stats.percentile(0.5):6.1f} ms"
        f"   p99 {stats.percentile(0.99):6.1f} ms"
    )


def cpu_text(used: dict[str, float], seconds: float) -> str:
    parts = [f"{name} {share / seconds:.0%}" for name, share in used.items() if name != "machine"]
    text = "    CPU (share of one core): " + ", ".join(parts)
    if "machine" in used:
        text += f"; machine busy {used['machine'] / seconds:.2f} of {os.cpu_count()} cores"
    return text


# --- the flooding address (a process of its own) ---------------------------------------------


@dataclass
class FloodSocket:
    ws: ClientConnection
    index: int
    sent: int = 0
    handled: int = 0  # messages the server has read, as far as the answered pings tell


def cycle(table: int, mix: set[str]) -> list[dict[str, Any] | None]:
    """One round of a flooding socket's messages; None: a ping (numbered when sent)."""
    messages: list[dict[str, Any]] = []
    if "watch" in mix:
        messages += [{"type": "watch", "table": table}, {"type": "unwatch", "table": table}]
    if "lobby" in mix:
        messages += [{"type": "subscribe_lobby"}, {"type": "unsubscribe_lobby"}]
    return [item for m in messages for item in (m, None)] or [None]


async def flood_socket(
    sock: FloodSocket, table: int, mix: set[str], rate: float, errors: Counter[str]
) -> None:
    """Send within the per-socket limit; read every answer (counting the handled messages)."""

    async def read() -> None:
        async for text in sock.ws:
            event = json.loads(text)
            if event["type"] == "pong":
                sock.handled = int(event["t"])
            elif event["type"] == "error":
                errors[event["code"]] += 1

    reader = asyncio.create_task(read())
    plan = cycle(table, mix)
    chat_at = time.perf_counter() + CHAT_EVERY * (sock.index % 100) / 100
    watching, step, n = False, 1 / rate, 0
    next_at = time.perf_counter()
    try:
        while True:
            message = plan[n % len(plan)]
            n += 1
            if message is None and watching and "chat" in mix and time.perf_counter() >= chat_at:
                message = {"type": "chat", "table": table, "text": "hello"}
                chat_at = time.perf_counter() + CHAT_EVERY
            elif message is None:
                message = {"type": "ping", "t": sock.sent + 1}  # how many sent, this one too
            elif message["type"] in ("watch", "unwatch"):
                watching = message["type"] == "watch"
            await sock.ws.send(json.dumps(message))
            sock.sent += 1
            next_at = max(next_at + step, time.perf_counter())
            await asyncio.sleep(next_at - time.perf_counter())
    except ConnectionClosed:
        errors["closed"] += 1
    finally:
        reader.cancel()


async def flooder(args: argparse.Namespace) -> None:
    """Open the sockets, flood, and on each line of stdin print how far the server has read
    them (JSON); stop at end of input."""
    mix = set(args.mix.split(","))
    ws_url = args.url.replace("http://", "ws://") + "/ws"
    async with httpx.AsyncClient(base_url=args.url, timeout=60) as client:
        tokens = [(await guest(client))[0] for _ in range(args.flood_guests)]
    sockets: list[FloodSocket] = []
    refused = 0
    for token in tokens:
        for _ in range(args.sockets_per_guest):
            try:
                ws = await connect_from(ws_url, FLOOD_SOURCE, token)
                welcome = json.loads(await ws.recv())
                if welcome["type"] != "welcome":  # too_many_connections
                    refused += 1
                    await ws.close()
                    continue
                sockets.append(FloodSocket(ws, len(sockets)))
            except (InvalidStatus, ConnectionClosed):  # HTTP 429, or closed at once
                refused += 1
    errors: Counter[str] = Counter()
    tasks = [
        asyncio.create_task(flood_socket(s, args.table, mix, args.flood_rate, errors))
        for s in sockets
    ]
    print(json.dumps({"sockets": len(sockets), "refused": refused}), flush=True)
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader()
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    while await reader.readline():
        report = {
            "sent": sum(s.sent for s in sockets),
            "handled": sum(s.handled for s in sockets),
            "errors": dict(errors),
            "cpu": time.process_time(),
        }
        print(json.dumps(report), flush=True)
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
    for s in sockets:
        s.ws.transport.abort()


class Flood:
    """The flooder process, driven through its stdin and stdout."""

    def __init__(self, process: asyncio.subprocess.Process) -> None:
        self.process = process

    async def line(self) -> dict[str, Any]:
        assert self.process.stdout is not None
        text = await self.process.stdout.readline()
        if not text:
            raise RuntimeError("the flooder stopped")
        answer: dict[str, Any] = json.loads(text)
        return answer

    async def mark(self) -> dict[str, Any]:
        assert self.process.stdin is not None
        self.process.stdin.write(b"mark\n")
        await self.process.stdin.drain()
        return await self.line()

    async def stop(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.close()
        await self.process.wait()


@contextlib.asynccontextmanager
async def flooding(args: argparse.Namespace, url: str, table: int) -> AsyncIterator[Flood]:
    command = [sys.executable, str(Path(__file__)), "--flooder", "--url", url]
    command += ["--table", str(table), "--mix", args.mix, "--flood-rate", str(args.flood_rate)]
    command += ["--flood-guests", str(args.flood_guests)]
    command += ["--sockets-per-guest", str(args.sockets_per_guest)]
    process = await asyncio.create_subprocess_exec(
        *command, stdin=subprocess.PIPE, stdout=subprocess.PIPE
    )
    flood = Flood(process)
    try:
        yield flood
    finally:
        if process.returncode is None:
            await flood.stop()


# --- driver ---------------------------------------------------------------------------------


@contextlib.asynccontextmanager
async def server(args: argparse.Namespace) -> AsyncIterator[tuple[str, int]]:
    """A fresh database and `checkers serve` of `--code`; its URL and process id."""
    database_url = await recreate_database(args.postgres, BENCH_DATABASE)
    code = args.code
    env = os.environ | {
        "DATABASE_URL": database_url,
        "ENVIRONMENT": "development",
        "LOG_LEVEL": "warning",
        "PYTHONPATH": str(code),
        "GUESTS_PER_ADDRESS": "1000000",  # every paced player is made from this host
    }
    env.pop("REDIS_URL", None)
    for item in args.server_env:
        key, _, value = item.partition("=")
        env[key] = value
    migrate = [sys.executable, "-m", "app.cli", "migrate"]
    await asyncio.to_thread(subprocess.run, migrate, env=env, cwd=code, check=True)
    await add_bench_room(database_url)
    port = free_port()
    serve = [sys.executable, "-m", "app.cli", "serve", "--port", str(port)]
    process = await asyncio.create_subprocess_exec(*serve, env=env, cwd=code)
    try:
        url = f"http://127.0.0.1:{port}"
        await wait_http(url + "/healthz")
        yield url, process.pid
    finally:
        process.terminate()
        try:
            await asyncio.wait_for(process.wait(), SHUTDOWN_SECONDS)
        except TimeoutError:  # still closing the flood's sockets
            process.kill()
            await process.wait()


async def bench(args: argparse.Namespace) -> None:
    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    async with server(args) as (url, pid):
        ws_url = url.replace("http://", "ws://") + "/ws"
        setup = window(float("inf"))
        limits = httpx.Limits(max_connections=20)
        async with httpx.AsyncClient(base_url=url, limits=limits, timeout=60) as client:
            gate = asyncio.Semaphore(20)

            async def pair(n: int) -> tuple[list[Bot], int]:
                async with gate:
                    return await seat_pair(ws_url, paced_source(n), client, setup)

            pairs = await asyncio.gather(*(pair(n) for n in range(args.paced_games)))
        bots = [bot for p, _ in pairs for bot in p]
        busy = pairs[0][1]
        runners = [asyncio.create_task(bot.run()) for bot in bots]

        def measure(stats: Stats) -> None:
            for bot in bots:
                bot.stats = stats

        cpu = CpuMeter(process_cpu(pid))
        await asyncio.sleep(args.warmup)
        alone = window(time.perf_counter())
        measure(alone)
        cpu.begin()
        await asyncio.sleep(args.seconds)
        alone_cpu = cpu.end()
        measure(window(float("inf")))
        async with flooding(args, url, busy) as flood:
            opened = await flood.line()
            await asyncio.sleep(args.warmup)
            flooded = window(time.perf_counter())
            measure(flooded)
            first = await flood.mark()
            cpu.begin()
            await asyncio.sleep(args.seconds)
            flood_cpu = cpu.end()
            last = await flood.mark()
            measure(window(float("inf")))
        for bot in bots:
            bot.stats.stop_at = 0.0  # no more moves
        for task in runners:
            task.cancel()
        await asyncio.gather(*runners, return_exceptions=True)
        for bot in bots:
            bot.ws.transport.abort()
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    seconds = args.seconds
    print(f"{args.paced_games} paced games (~1 move/s/side), {args.seconds:g} s each:")
    print(result_line("alone", alone, seconds))
    print(cpu_text(alone_cpu, seconds))
    print(result_line("under the flood", flooded, seconds))
    flood_cpu["flooder"] = last["cpu"] - first["cpu"]
    print(cpu_text(flood_cpu, seconds))
    sent = (last["sent"] - first["sent"]) / seconds
    handled = (last["handled"] - first["handled"]) / seconds
    print(
        f"flood from {FLOOD_SOURCE}: {opened['sockets']} sockets ({opened['refused']} refused), "
        f"mix {args.mix}: sent {sent:,.0f}/s, read by the server {handled:,.0f}/s"
    )
    if last["errors"]:
        print(f"    errors and closes the flood got: {last['errors']}")
    for name, stats in (("alone", alone), ("under the flood", flooded)):
        if stats.errors:
            print(f"paced players' errors {name}: {dict(stats.errors)}")
    print(f"p99 under the flood / alone: {flooded.percentile(0.99) / alone.percentile(0.99):.1f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--postgres", default=DEFAULT_POSTGRES, help="server to create DB on")
    parser.add_argument("--code", default=str(ROOT), help="the checkout whose server to run")
    parser.add_argument(
        "--server-env", action="append", default=[], metavar="NAME=VALUE", help="a setting"
    )
    parser.add_argument("--paced-games", type=int, default=100, help="paced games")
    parser.add_argument("--seconds", type=float, default=20.0, help="measured time per phase")
    parser.add_argument("--warmup", type=float, default=3.0, help="unmeasured time first")
    parser.add_argument("--mix", default=",".join(MIXES), help=f"of {', '.join(MIXES)}")
    parser.add_argument("--flood-guests", type=int, default=10, help="guests of the flood")
    parser.add_argument("--sockets-per-guest", type=int, default=10)
    parser.add_argument("--flood-rate", type=float, default=19.0, help="messages/s per socket")
    parser.add_argument("--flooder", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--url", help=argparse.SUPPRESS)
    parser.add_argument("--table", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    args.code = Path(args.code).resolve()
    if not set(args.mix.split(",")) <= set(MIXES):
        parser.error(f"--mix: a comma-separated selection of {', '.join(MIXES)}")
    run = flooder(args) if args.flooder else bench(args)
    try:
        import uvloop
    except ImportError:
        asyncio.run(run)
    else:
        uvloop.run(run)


if __name__ == "__main__":
    main()
