"""A broker outage under live play: how late events reach players on another server process
while Redis is down, and how long after it returns every client has every event.

    .venv/bin/python bench/outage.py                     # 40 games, a 10 s outage
    .venv/bin/python bench/outage.py --games 100 --outage 10

It starts a private `redis-server`, creates the database `checkers_bench_outage` on the local
PostgreSQL, and runs two `checkers serve` processes sharing both. In each game Black is
connected to the first process and White to the second, so every move crosses processes; each
side moves about once a second. After a warm-up Redis is killed for `--outage` seconds, then
started again on the same port. Printed: how long a move took to reach the opponent before,
during and after the outage, the time from Redis's return until every client held every event
stored before it, and any event missing or out of order at the end (there should be none).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import random
import statistics
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import websockets
from websockets.asyncio.client import ClientConnection

sys.path.insert(0, str(Path(__file__).parent))
from play import (  # noqa: E402  (the sibling script's helpers)
    BENCH_ROOM,
    DEFAULT_POSTGRES,
    ROOT,
    add_bench_room,
    free_port,
    offer,
    recreate_database,
    wait_http,
)

DATABASE = "checkers_bench_outage"


@contextlib.contextmanager
def process(
    args: list[str], env: dict[str, str] | None = None
) -> Iterator[subprocess.Popen[bytes]]:
    child = subprocess.Popen(args, env=env, cwd=ROOT, stdout=subprocess.DEVNULL)
    try:
        yield child
    finally:
        if child.poll() is None:
            child.terminate()
            child.wait(10)


def redis(port: int) -> subprocess.Popen[bytes]:
    args = ["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--save", ""]
    return subprocess.Popen([*args, "--appendonly", "no"], stdout=subprocess.DEVNULL)


@dataclass
class Side:
    """One player's socket: when each ply's `move` event reached it."""

    ws: ClientConnection
    user_id: int
    colour: str = ""
    game: int = 0
    arrived: dict[int, float] = field(default_factory=dict)
    versions: list[int] = field(default_factory=list)


async def guest(http: httpx.AsyncClient) -> tuple[str, int]:
    body = (await http.post("/api/auth/guest")).raise_for_status().json()
    return body["access_token"], body["user"]["id"]


async def pair(urls: list[str], http: httpx.AsyncClient) -> tuple[Side, Side]:
    sides = []
    for url in urls:
        token, user_id = await guest(http)
        ws = await websockets.connect(f"{url.replace('http', 'ws')}/ws", subprotocols=offer(token))
        await ws.recv()
        sides.append(Side(ws, user_id))
    black, white = sides
    await black.ws.send(json.dumps({"type": "open", "room": BENCH_ROOM, "colour": "black"}))
    while (m := json.loads(await black.ws.recv()))["type"] != "table":
        pass
    await white.ws.send(json.dumps({"type": "sit", "table": m["table"]["id"]}))
    black.colour, white.colour = "black", "white"
    return black, white


async def play(side: Side, sent: dict[tuple[int, int], float], stop_at: float) -> None:
    """Read events; on our turn move after about a second (a random legal move)."""
    async for text in side.ws:
        m = json.loads(text)
        if "v" in m:
            side.versions.append(m["v"])
        if m["type"] == "game_started":
            game = m["game"]
            side.game = game["id"]
            legal, ply, turn = game["legal_moves"], game["ply"], game["turn"]
        elif m["type"] == "move":
            side.arrived[m["ply"]] = time.perf_counter()
            legal, ply, turn = m["legal_moves"], m["ply"], m["turn"]
        else:
            continue
        if turn == side.colour and legal and time.perf_counter() < stop_at:
            asyncio.get_running_loop().call_later(
                random.uniform(0.5, 1.5),
                lambda p=ply, mv=random.choice(legal): asyncio.ensure_future(
                    send_move(side, p, mv, sent)
                ),
            )


async def send_move(side: Side, ply: int, move: str, sent: dict[tuple[int, int], float]) -> None:
    sent[(side.game, ply + 1)] = time.perf_counter()
    with contextlib.suppress(websockets.exceptions.ConnectionClosed):
        await side.ws.send(
            json.dumps({"type": "move", "game": side.game, "move": move, "ply": ply})
        )


def delays(
    pairs: list[tuple[Side, Side]], sent: dict[tuple[int, int], float], start: float, end: float
) -> list[float]:
    """Seconds from sending a move to the opponent's receipt, for moves sent in [start, end)."""
    found = []
    for black, white in pairs:
        for (game, ply), at in sent.items():
            if game != black.game or not start <= at < end:
                continue
            opponent = white if ply % 2 == 1 else black  # Black made the odd plies
            if ply in opponent.arrived:
                found.append(opponent.arrived[ply] - at)
    return sorted(found)


def summary(name: str, values: list[float]) -> str:
    if not values:
        return f"{name}: no moves"
    p50, p99 = statistics.median(values), values[min(len(values) - 1, int(0.99 * len(values)))]
    return (
        f"{name}: {len(values)} moves, to the opponent p50 {p50 * 1000:.0f} ms,"
        f" p99 {p99 * 1000:.0f} ms, max {values[-1] * 1000:.0f} ms"
    )


async def bench(args: argparse.Namespace) -> None:
    print(f"load average before: {os.getloadavg()[0]:.2f}")
    database_url = await recreate_database(args.postgres, DATABASE)
    redis_port = free_port()
    broker = redis(redis_port)
    env = os.environ | {
        "DATABASE_URL": database_url,
        "REDIS_URL": f"redis://127.0.0.1:{redis_port}/0",
        "ENVIRONMENT": "development",
        "LOG_LEVEL": "error",
        "PYTHONPATH": str(ROOT),
        # Every bot connects from this host: no cap per address.
        "WS_MAX_PER_IP": "0",
        "WS_MESSAGES_PER_SECOND_PER_IP": "0",  # nor a message budget per address
        "GUESTS_PER_ADDRESS": "1000000",  # every bot comes from this host
    }
    migrate = [sys.executable, "-m", "app.cli", "migrate"]
    await asyncio.to_thread(
        subprocess.run, migrate, env=env, cwd=ROOT, check=True, capture_output=True
    )
    await add_bench_room(database_url)
    ports = [free_port(), free_port()]
    try:
        with contextlib.ExitStack() as stack:
            for port in ports:
                serve = [sys.executable, "-m", "app.cli", "serve", "--port", str(port)]
                stack.enter_context(process(serve, env))
            urls = [f"http://127.0.0.1:{port}" for port in ports]
            for url in urls:
                await wait_http(url + "/healthz")
            async with httpx.AsyncClient(base_url=urls[0], timeout=30) as http:
                pairs = [await pair(urls, http) for _ in range(args.games)]
            sent: dict[tuple[int, int], float] = {}
            begin = time.perf_counter()
            stop_at = begin + args.warmup + args.outage + args.after
            readers = [asyncio.create_task(play(side, sent, stop_at)) for p in pairs for side in p]
            await asyncio.sleep(args.warmup)
            down = time.perf_counter()
            broker.kill()
            broker.wait()
            await asyncio.sleep(args.outage)
            broker = redis(redis_port)
            back = time.perf_counter()
            # What was stored before Redis came back, and when each client held all of it.
            await asyncio.sleep(args.after)
            await asyncio.sleep(3)  # the last moves arrive
            for task in readers:
                task.cancel()
            print(summary("before the outage", delays(pairs, sent, begin, down)))
            print(
                summary(f"during the {args.outage:.0f} s outage", delays(pairs, sent, down, back))
            )
            print(summary("after Redis returned", delays(pairs, sent, back, stop_at)))
            # Moves acknowledged to their mover before Redis came back were stored by then.
            caught_up = back
            missing = 0
            for black, white in pairs:
                for ply in range(1, max(black.arrived, default=0) + 1):
                    mover = black if ply % 2 == 1 else white
                    acked = mover.arrived.get(ply)
                    if acked is None or acked >= back:
                        continue
                    for side in (black, white):
                        arrived = side.arrived.get(ply)
                        if arrived is None:
                            missing += 1
                        else:
                            caught_up = max(caught_up, arrived)
            print(
                f"every client held every event stored before Redis returned "
                f"{max(0.0, caught_up - back):.2f} s after it did"
            )
            disorder = sum(side.versions != sorted(set(side.versions)) for p in pairs for side in p)
            print(
                f"events missing at the end: {missing}; clients with events out of order or "
                f"repeated: {disorder}"
            )
            for black, white in pairs:
                for side in (black, white):
                    await side.ws.close()
    finally:
        broker.terminate()
        broker.wait()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--games", type=int, default=40)
    parser.add_argument("--outage", type=float, default=10.0, help="seconds Redis is down")
    parser.add_argument("--warmup", type=float, default=5.0)
    parser.add_argument("--after", type=float, default=5.0, help="seconds played after")
    parser.add_argument("--postgres", default=DEFAULT_POSTGRES)
    asyncio.run(bench(parser.parse_args()))


if __name__ == "__main__":
    main()
