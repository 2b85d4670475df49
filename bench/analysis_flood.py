"""The analysis board flooded as issue 45's review did it, while paced games play: the paced
players' move round trips alone and under the flood, and how the flood was answered.

    .venv/bin/python bench/analysis_flood.py
    .venv/bin/python bench/analysis_flood.py --depth 12              # searches, not replays
    .venv/bin/python bench/analysis_flood.py --sources 40            # one connection an address
    .venv/bin/python bench/analysis_flood.py --path /api/pools       # a cheap route, to compare
    .venv/bin/python bench/analysis_flood.py --distinct 300          # 300 lines asked in turn
    .venv/bin/python bench/analysis_flood.py --code /tmp/before      # serve another checkout

Like bench/flood.py (whose helpers it uses) it creates a fresh PostgreSQL database with the
unlisted room `bench` and runs `checkers serve` in a process of its own, with the limits people
get (only guests per address raised: the paced players are made from this host). The paced
players (PACED_GAMES games, each side thinking about a second per move) connect from loopback
addresses of their own. The flood, in a process of its own, is CONNECTIONS connections (from
SOURCES loopback addresses, 127.0.2.1 on), each asking `GET /api/analysis/position` again as
soon as it is answered, whatever the answer (an attacker does not wait for `Retry-After`; with
`--honour-retry-after` it does, as a well-behaved client): the position after a legal line of
MOVES plies (330 by default, from a position with two kings a side, which keeps a game going
that long), so a replay of the whole line each time (or its last `--distinct` prefixes in
turn, so that no answer can be one kept from before), and with `--depth` the engine's line to
that depth as well.

First the paced games play alone for SECONDS, then under the flood for SECONDS (after a few
seconds for the flood to ramp up). Figures are recorded in docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import copy
import itertools
import json
import os
import random
import subprocess
import sys
import time
from collections import Counter
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx

sys.path.insert(0, str(Path(__file__).parent))
from flood import paced_source, seat_pair, window  # noqa: E402  (the sibling scripts' helpers)
from play import (  # noqa: E402
    DEFAULT_POSTGRES,
    ROOT,
    Bot,
    Stats,
    add_bench_room,
    free_port,
    recreate_database,
    wait_http,
)

from app.rules import Game  # noqa: E402

BENCH_DATABASE = "checkers_bench_analysis_flood"
SHUTDOWN_SECONDS = 30
# Two kings a side beside the men: kings' moves between the men's keep a game going.
LONG_START = "B:WK29,K30,21,22,23,24,25,26,27,28:BK3,K4,5,6,7,8,9,10,11,12"


def long_line(plies: int, seed: int = 1) -> list[str]:
    """A legal line of `plies` plies from LONG_START that no automatic draw ends: kings move
    while the move-limit count is low, men after, and no move is chosen that ends the game
    or gives a capture."""
    rng = random.Random(seed)
    game = Game("english", LONG_START)
    line: list[str] = []
    while len(line) < plies:
        if game.outcome() is not None:
            raise RuntimeError(f"no line of {plies} plies: ended after {len(line)}")
        legal = game.legal_move_texts()
        rng.shuffle(legal)
        late = game.quiet_plies > 60

        def order(move: str, late: bool = late) -> tuple[bool, bool]:
            piece = game.position.piece_at(int(move.replace("x", "-").split("-")[0]))
            return "x" in move, piece is not None and piece.king == late

        def quiet_after(move: str) -> bool:
            after = copy.deepcopy(game)
            after.play(move)
            return after.outcome() is None and not any("x" in m for m in after.legal_move_texts())

        legal.sort(key=order)
        line.append(next((m for m in legal if quiet_after(m)), legal[0]))
        game.play(line[-1])
    return line


def flood_source(n: int, sources: int) -> str:
    k = n % sources + 1
    return f"127.0.{2 + k // 250}.{k % 250}"


def percentile(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] * 1000


# --- the flood (a process of its own) --------------------------------------------------------


def requests_bytes(url: str, args: argparse.Namespace) -> list[bytes]:
    """The flood's requests, written once: the client's CPU goes to sending, as a flooding
    tool's does, not to building requests. `--distinct N`: the line's last N prefixes, asked
    in turn (more than the server keeps, each is a replay)."""
    if args.path is not None:
        targets = [httpx.URL(url + args.path)]
    else:
        line = long_line(args.moves)
        targets = []
        for plies in range(args.moves - args.distinct + 1, args.moves + 1):
            params: dict[str, Any] = {"fen": LONG_START, "moves": ",".join(line[:plies])}
            if args.depth is not None:
                params["depth"] = args.depth
            targets.append(httpx.URL(url + "/api/analysis/position", params=params))
    return [
        f"GET {t.raw_path.decode()} HTTP/1.1\r\nHost: {t.host}:{t.port}\r\n\r\n".encode()
        for t in targets
    ]


async def flooder(args: argparse.Namespace) -> None:
    """Flood; on each line of stdin print the answers since the last (JSON); stop at EOF."""
    requests = requests_bytes(args.url, args)
    server = httpx.URL(args.url)
    answers: Counter[str] = Counter()
    waits: list[float] = []  # seconds to an answer, any answer
    turns = itertools.count()  # the requests sent by all the connections: which line next

    async def connection(n: int) -> None:
        source = flood_source(n, args.sources)
        while True:  # a connection the server closed is opened again
            try:
                reader, writer = await asyncio.open_connection(
                    server.host, server.port, local_addr=(source, 0)
                )
            except OSError as exc:
                answers[type(exc).__name__] += 1
                await asyncio.sleep(0.1)
                continue
            try:
                while True:
                    sent = time.perf_counter()
                    writer.write(requests[next(turns) % len(requests)])
                    head = (await reader.readuntil(b"\r\n\r\n")).decode("latin-1").lower()
                    status = head.split(" ", 2)[1]
                    headers = dict(
                        line.split(": ", 1) for line in head.split("\r\n")[1:] if ": " in line
                    )
                    await reader.readexactly(int(headers.get("content-length", "0")))
                    answers[status] += 1
                    waits.append(time.perf_counter() - sent)
                    if args.honour_retry_after and "retry-after" in headers:
                        await asyncio.sleep(float(headers["retry-after"]))
            except (OSError, asyncio.IncompleteReadError) as exc:
                answers[type(exc).__name__] += 1
            finally:
                writer.close()

    tasks = [asyncio.create_task(connection(n)) for n in range(args.connections)]
    print(json.dumps({"connections": len(tasks)}), flush=True)
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader()
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    while await reader.readline():
        report = {
            "answers": dict(answers),
            "p50": percentile(waits, 0.5),
            "p95": percentile(waits, 0.95),
            "max": max(waits, default=0.0) * 1000,
        }
        answers.clear()
        waits.clear()
        print(json.dumps(report), flush=True)
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)


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


@contextlib.asynccontextmanager
async def flooding(args: argparse.Namespace, url: str) -> AsyncIterator[Flood]:
    command = [sys.executable, str(Path(__file__)), "--flooder", "--url", url]
    command += ["--connections", str(args.connections), "--sources", str(args.sources)]
    command += ["--moves", str(args.moves)]
    if args.honour_retry_after:
        command.append("--honour-retry-after")
    if args.path is not None:
        command += ["--path", args.path]
    command += ["--distinct", str(args.distinct)]
    if args.depth is not None:
        command += ["--depth", str(args.depth)]
    process = await asyncio.create_subprocess_exec(
        *command, stdin=subprocess.PIPE, stdout=subprocess.PIPE
    )
    try:
        yield Flood(process)
    finally:
        if process.stdin is not None:
            process.stdin.close()
        await process.wait()


# --- driver ---------------------------------------------------------------------------------


@contextlib.asynccontextmanager
async def server(args: argparse.Namespace) -> AsyncIterator[str]:
    """A fresh database and `checkers serve` of `--code`; its URL."""
    database_url = await recreate_database(args.postgres, BENCH_DATABASE)
    env = os.environ | {
        "DATABASE_URL": database_url,
        "ENVIRONMENT": "development",
        "LOG_LEVEL": "warning",
        "PYTHONPATH": str(args.code),
        "GUESTS_PER_ADDRESS": "1000000",  # every paced player is made from this host
    }
    env.pop("REDIS_URL", None)
    for item in args.server_env:
        key, _, value = item.partition("=")
        env[key] = value
    migrate = [sys.executable, "-m", "app.cli", "migrate"]
    await asyncio.to_thread(subprocess.run, migrate, env=env, cwd=args.code, check=True)
    await add_bench_room(database_url)
    port = free_port()
    serve = [sys.executable, "-m", "app.cli", "serve", "--port", str(port)]
    process = await asyncio.create_subprocess_exec(*serve, env=env, cwd=args.code)
    try:
        url = f"http://127.0.0.1:{port}"
        await wait_http(url + "/healthz")
        yield url
    finally:
        process.terminate()
        try:
            await asyncio.wait_for(process.wait(), SHUTDOWN_SECONDS)
        except TimeoutError:
            process.kill()
            await process.wait()


def moves_line(name: str, stats: Stats, seconds: float) -> str:
    return (
        f"{name:<16} {stats.moves / seconds:>5,.0f} moves/s   move round trip p50 "
        f"{stats.percentile(0.5):6.1f} ms   p95 {stats.percentile(0.95):6.1f} ms"
    )


async def bench(args: argparse.Namespace) -> None:
    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    async with server(args) as url:
        ws_url = url.replace("http://", "ws://") + "/ws"
        setup = window(float("inf"))
        async with httpx.AsyncClient(base_url=url, timeout=60) as client:
            pairs = [
                await seat_pair(ws_url, paced_source(n), client, setup)
                for n in range(args.paced_games)
            ]
        bots: list[Bot] = [bot for p, _ in pairs for bot in p]
        runners = [asyncio.create_task(bot.run()) for bot in bots]

        def measure(stats: Stats) -> None:
            for bot in bots:
                bot.stats = stats

        await asyncio.sleep(args.warmup)
        alone = window(time.perf_counter())
        measure(alone)
        await asyncio.sleep(args.seconds)
        measure(window(float("inf")))
        async with flooding(args, url) as flood:
            await flood.line()
            await asyncio.sleep(args.warmup)
            flooded = window(time.perf_counter())
            measure(flooded)
            await flood.mark()
            await asyncio.sleep(args.seconds)
            answered = await flood.mark()
            measure(window(float("inf")))
        for bot in bots:
            bot.stats.stop_at = 0.0  # no more moves
        for task in runners:
            task.cancel()
        await asyncio.gather(*runners, return_exceptions=True)
        for bot in bots:
            bot.ws.transport.abort()
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    what = "replays" if args.depth is None else f"replays and searches to depth {args.depth}"
    if args.distinct > 1:
        what += f" ({args.distinct} lines in turn)"
    what = f"GET {args.path}" if args.path is not None else f"{what} of {args.moves} plies"
    polite = ", honouring Retry-After" if args.honour_retry_after else ""
    print(
        f"{args.paced_games} paced games (~1 move/s/side), {args.seconds:g} s each; flood: "
        f"{args.connections} connections from {args.sources} address(es), {what}{polite}"
    )
    print(moves_line("alone", alone, args.seconds))
    print(moves_line("under the flood", flooded, args.seconds))
    counts = answered["answers"]
    total = sum(counts.values())
    shown = ", ".join(f"{status}: {n}" for status, n in sorted(counts.items()))
    print(
        f"flood answered {total / args.seconds:,.0f}/s ({shown}); 429s: {counts.get('429', 0)}; "
        f"time to an answer p50 {answered['p50']:.1f} ms, p95 {answered['p95']:.1f} ms, "
        f"max {answered['max']:.0f} ms"
    )
    for name, stats in (("alone", alone), ("under the flood", flooded)):
        if stats.errors:
            print(f"paced players' errors {name}: {dict(stats.errors)}")
    print(f"p95 under the flood / alone: {flooded.percentile(0.95) / alone.percentile(0.95):.1f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--postgres", default=DEFAULT_POSTGRES, help="server to create DB on")
    parser.add_argument("--code", default=str(ROOT), help="the checkout whose server to run")
    parser.add_argument(
        "--server-env", action="append", default=[], metavar="NAME=VALUE", help="a setting"
    )
    parser.add_argument("--paced-games", type=int, default=20, help="paced games")
    parser.add_argument("--seconds", type=float, default=20.0, help="measured time per phase")
    parser.add_argument("--warmup", type=float, default=3.0, help="unmeasured time first")
    parser.add_argument("--connections", type=int, default=40, help="flooding connections")
    parser.add_argument("--sources", type=int, default=1, help="addresses they come from")
    parser.add_argument("--moves", type=int, default=330, help="plies of the line replayed")
    parser.add_argument("--depth", type=int, help="search to this depth too (1-30)")
    parser.add_argument(
        "--honour-retry-after", action="store_true", help="the flood waits as told on a 429"
    )
    parser.add_argument("--path", help="flood this path instead (a cheap route, to compare)")
    parser.add_argument(
        "--distinct", type=int, default=1, help="lines asked in turn: the line's last N prefixes"
    )
    parser.add_argument("--flooder", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--url", help=argparse.SUPPRESS)
    args = parser.parse_args()
    args.code = Path(args.code).resolve()
    run = flooder(args) if args.flooder else bench(args)
    try:
        import uvloop
    except ImportError:
        asyncio.run(run)
    else:
        uvloop.run(run)


if __name__ == "__main__":
    main()
