"""Fair shares of the computer: one user's level-1 replies while one address runs as many
level-8 games against the computer as the server lets it, against a real server.

    .venv/bin/python bench/ai_fairness.py                      # server on Postgres
    .venv/bin/python bench/ai_fairness.py --guests 8 --replies 100 --ai-workers 1

Starts the server as `bench/play.py` does (a fresh database `checkers_bench_ai_fair`, the unlisted
room `bench`, `checkers serve` in a process of its own, with AI_WORKERS set; every other limit
at its default), then:

- from 127.0.0.1, GUESTS guests each send `play_ai` at level 8 until the server refuses one (a
  guest's tables, `too_many_tables`, or the limits on games against the computer), so that the
  address runs its maximum; each answers the computer's moves at once with a random legal move
  (and asks a rematch when a game ends), so that every one of those games always has a level-8
  search running or waiting;
- from 127.0.0.2, another guest plays the computer at level 1: it sends a random legal move
  (PACE seconds after the computer's last) and times the computer's reply (from sending its move
  to receiving the computer's `move` event), REPLIES times.

Prints how many games the address got (and why it got no more), the level-1 replies' p50, p99
and worst, the level-8 moves made meanwhile, and the load average. The goal (issue 36): p99 at
most 500 ms. Figures are recorded in docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import random
import subprocess
import sys
import time
from collections import Counter
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import websockets
from rich.console import Console
from rich.table import Table
from websockets.asyncio.client import ClientConnection

sys.path.insert(0, str(Path(__file__).resolve().parent))

from play import (  # noqa: E402  (bench/ is not a package: its sibling module)
    BENCH_ROOM,
    DEFAULT_POSTGRES,
    ROOT,
    add_bench_room,
    child,
    free_port,
    offer,
    recreate_database,
    wait_http,
)

console = Console(width=120)
BENCH_DATABASE = "checkers_bench_ai_fair"
ABUSER_ADDRESS = "127.0.0.1"
PLAYER_ADDRESS = "127.0.0.2"  # another loopback address: another client address


async def guest(base: str, address: str) -> tuple[str, int]:
    """A guest token (and its user id) asked for from `address`."""
    transport = httpx.AsyncHTTPTransport(local_address=address)
    async with httpx.AsyncClient(base_url=base, transport=transport, timeout=60) as client:
        body = (await client.post("/api/auth/guest")).raise_for_status().json()
    return body["access_token"], body["user"]["id"]


async def open_ws(base: str, token: str, address: str) -> ClientConnection:
    ws = await websockets.connect(
        base.replace("http://", "ws://") + "/ws",
        subprotocols=offer(token),
        compression=None,
        max_queue=None,
        open_timeout=60,
        local_addr=(address, 0),
    )
    await ws.recv()  # welcome
    return ws


async def send(ws: ClientConnection, **message: Any) -> None:
    await ws.send(json.dumps(message))


def my_colour(game: dict[str, Any], user_id: int) -> str:
    return "black" if game["black"]["id"] == user_id else "white"


@dataclass
class Abuser:
    """One guest of the abusing address: starts level-8 games until refused, then answers
    the computer's every move at once."""

    base: str
    level: int
    tries: int
    games: dict[int, str] = field(default_factory=dict)  # game → this guest's colour
    refusals: Counter[str] = field(default_factory=Counter)
    ai_moves: int = 0
    counting: bool = False

    async def start(self) -> ClientConnection:
        token, self.user_id = await guest(self.base, ABUSER_ADDRESS)
        ws = await open_ws(self.base, token, ABUSER_ADDRESS)
        for n in range(self.tries):
            await send(ws, type="play_ai", ref=n, room=BENCH_ROOM, level=self.level, colour="black")
            while True:
                event = json.loads(await ws.recv())
                if event["type"] == "error" and event.get("ref") == n:
                    self.refusals[event["code"]] += 1
                    return ws
                if event["type"] == "table" and event.get("game"):
                    await self.look(ws, event["game"])
                    break
                await self.handle(ws, event)  # the computer's moves in the games started
        return ws

    async def look(self, ws: ClientConnection, game: dict[str, Any]) -> None:
        """A game's snapshot: note it, and move if it is this guest's turn."""
        colour = self.games[game["id"]] = my_colour(game, self.user_id)
        if game["turn"] == colour and game["legal_moves"]:
            await self.move(ws, game["id"], game["ply"], game["legal_moves"])

    async def play(self, ws: ClientConnection, stop_at: float) -> None:
        try:
            while time.perf_counter() < stop_at:
                try:
                    async with asyncio.timeout(max(0.1, stop_at - time.perf_counter())):
                        event: dict[str, Any] = json.loads(await ws.recv())
                except TimeoutError:
                    break
                await self.handle(ws, event)
        finally:
            await ws.close()

    async def handle(self, ws: ClientConnection, event: dict[str, Any]) -> None:
        kind = event["type"]
        if kind == "game_started":
            await self.look(ws, event["game"])
        elif kind == "move" and event["game"] in self.games:
            if event["turn"] == self.games[event["game"]]:  # the computer moved
                self.ai_moves += self.counting
                if event["legal_moves"]:
                    await self.move(ws, event["game"], event["ply"], event["legal_moves"])
        elif kind == "game_ended":
            self.games.pop(event["game"], None)
            await send(ws, type="rematch", table=event["table"])

    @staticmethod
    async def move(ws: ClientConnection, game: int, ply: int, legal: list[str]) -> None:
        await send(ws, type="move", game=game, move=random.choice(legal), ply=ply)


async def level_one_replies(base: str, level: int, count: int, pace: float) -> list[float]:
    """Play the computer at `level` from another address, a move `pace` seconds after its
    reply (as a person, and within the per-socket message rate); each reply's wait, in
    seconds."""
    token, user_id = await guest(base, PLAYER_ADDRESS)
    ws = await open_ws(base, token, PLAYER_ADDRESS)
    waits: list[float] = []
    sent_at: float | None = None
    colour = "black"
    try:
        await send(ws, type="play_ai", room=BENCH_ROOM, level=level, colour="black")
        while len(waits) < count:
            event: dict[str, Any] = json.loads(await ws.recv())
            kind = event["type"]
            if kind == "error":
                raise RuntimeError(f"the level-{level} player was refused: {event}")
            if kind in ("table", "game_started") and event.get("game"):
                game = event["game"]
                colour = my_colour(game, user_id)
                if game["turn"] == colour:
                    await Abuser.move(ws, game["id"], game["ply"], game["legal_moves"])
                    sent_at = time.perf_counter()
            elif kind == "move" and event["turn"] == colour:  # the computer's reply
                if sent_at is not None:
                    waits.append(time.perf_counter() - sent_at)
                    sent_at = None
                if event["legal_moves"]:
                    await asyncio.sleep(pace)
                    await Abuser.move(ws, event["game"], event["ply"], event["legal_moves"])
                    sent_at = time.perf_counter()
            elif kind == "game_ended":
                sent_at = None
                await send(ws, type="rematch", table=event["table"])
    finally:
        await ws.close()
    return waits


@contextlib.asynccontextmanager
async def server(args: argparse.Namespace) -> AsyncIterator[str]:
    database_url = await recreate_database(args.postgres, BENCH_DATABASE)
    env = os.environ | {
        "DATABASE_URL": database_url,
        "ENVIRONMENT": "development",
        "LOG_LEVEL": "warning",
        "PYTHONPATH": str(ROOT),
        "AI_WORKERS": str(args.ai_workers),
        "GUESTS_PER_ADDRESS": "1000",  # the abusing guests and the measured one
    }
    env.pop("REDIS_URL", None)
    migrate = [sys.executable, "-m", "app.cli", "migrate"]
    await asyncio.to_thread(subprocess.run, migrate, env=env, cwd=ROOT, check=True)
    await add_bench_room(database_url)
    port = free_port()
    with child([sys.executable, "-m", "app.cli", "serve", "--port", str(port)], env):
        url = f"http://127.0.0.1:{port}"
        await wait_http(url + "/healthz")
        yield url


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] * 1000


async def bench(args: argparse.Namespace) -> None:
    before = os.getloadavg()
    async with server(args) as url:
        abusers = [Abuser(url, args.abuse_level, args.tries) for _ in range(args.guests)]
        sockets = [await a.start() for a in abusers]  # one after another: the limits decide
        games = sum(len(a.games) for a in abusers)
        refusals = sum((a.refusals for a in abusers), Counter[str]())
        console.print(
            f"{ABUSER_ADDRESS}: {args.guests} guests started {games} level-{args.abuse_level} "
            f"games (refused: {dict(refusals)})"
        )
        far = time.perf_counter() + 24 * 3600
        tasks = [
            asyncio.create_task(a.play(ws, far)) for a, ws in zip(abusers, sockets, strict=True)
        ]
        await asyncio.sleep(args.warmup)  # every one of those games is searching or waiting
        for a in abusers:
            a.counting = True
        started = time.perf_counter()
        with console.status(f"{args.replies} level-{args.level} replies from {PLAYER_ADDRESS}"):
            waits = await level_one_replies(url, args.level, args.replies, args.pace)
        elapsed = time.perf_counter() - started
        load = os.getloadavg()
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
    abuse_moves = sum(a.ai_moves for a in abusers)
    p99 = percentile(waits, 0.99)
    table = Table(
        title=f"level-{args.level} replies while one address runs level {args.abuse_level}"
    )
    for column in ("games (address)", "replies", "p50", "p99", "worst", "level-8 moves", "load"):
        table.add_column(column, justify="right")
    table.add_row(
        str(games),
        str(len(waits)),
        f"{percentile(waits, 0.5):.0f} ms",
        f"{p99:.0f} ms",
        f"{max(waits) * 1000:.0f} ms",
        f"{abuse_moves} ({abuse_moves / elapsed:.1f}/s)",
        f"{load[0]:.2f} {load[1]:.2f} {load[2]:.2f}",
    )
    console.print(table)
    console.print(
        f"load average before (1, 5, 15 min): {before[0]:.2f} {before[1]:.2f} {before[2]:.2f}"
    )
    console.print(f"load average after (1, 5, 15 min): {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")
    console.print(f"AI_WORKERS={args.ai_workers}; measured over {elapsed:.0f} s")
    if args.level == 1:  # the goal is the weakest level's; the strong ones wait their turn
        console.print(f"goal p99 <= 500 ms: {'met' if p99 <= 500 else 'NOT met'}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--postgres", default=DEFAULT_POSTGRES, help="server to create DB on")
    parser.add_argument("--guests", type=int, default=8, help="guests of the abusing address")
    parser.add_argument("--tries", type=int, default=5, help="play_ai per guest, at most")
    parser.add_argument("--abuse-level", type=int, default=8, choices=range(1, 9))
    parser.add_argument("--level", type=int, default=1, choices=range(1, 9), help="measured")
    parser.add_argument("--replies", type=int, default=100, help="measured replies")
    parser.add_argument("--pace", type=float, default=0.2, help="seconds before each move")
    parser.add_argument("--ai-workers", type=int, default=1, help="AI_WORKERS of the server")
    parser.add_argument("--warmup", type=float, default=5.0, help="seconds before measuring")
    asyncio.run(bench(parser.parse_args()))


if __name__ == "__main__":
    main()
