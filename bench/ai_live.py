"""Live play while the computer thinks: paced human games' move round trips with AI games
searching at once, against a real server.

    .venv/bin/python bench/ai_live.py                          # server on Postgres, 20 AI games
    .venv/bin/python bench/ai_live.py --ai-games 20 --level 8 --ai-workers 1 --paced-games 100

Starts the server as `bench/play.py` does (a fresh database `checkers_bench_ai_live`, the unlisted
room `bench`, `checkers serve` in a process of its own, with AI_WORKERS set), then:

- AI_GAMES players each play the computer at LEVEL, answering its moves at once with a random
  legal move (and asking a rematch when a game ends), so that AI_GAMES searches always wait for
  or run in the server's pool;
- meanwhile PACED_GAMES human games move about once a second per side (`bench/play.py`'s paced
  load); their round trips (sending a move to receiving its `move` event) are what is measured.

Prints the paced round trips (p50, p99), the AI's moves in the window, and the load average.
The goal: the paced p99 stays at or under 50 ms. Figures are recorded in docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import sys
import time
from pathlib import Path
from typing import Any

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent))

import play  # noqa: E402  (bench/ is not a package: its sibling module)
from play import (  # noqa: E402
    BENCH_ROOM,
    DEFAULT_POSTGRES,
    guest,
    line,
    open_ws,
    run_games,
    servers,
)


class AIOpponent:
    """One person playing the computer: answers each AI move at once, asks rematches."""

    def __init__(self, base: str, room: str, level: int) -> None:
        self.base, self.room, self.level = base, room, level
        self.ai_moves = 0
        self.counting = False
        self.games = 0

    async def run(self, client: httpx.AsyncClient, stop_at: float) -> None:
        token, user_id = await guest(client)
        ws = await open_ws(self.base.replace("http://", "ws://") + "/ws", token)
        await ws.recv()  # welcome
        colour = "black"
        await ws.send(
            json.dumps(
                {"type": "play_ai", "room": self.room, "level": self.level, "colour": colour}
            )
        )
        game: int | None = None
        try:
            while time.perf_counter() < stop_at:
                try:
                    async with asyncio.timeout(max(0.1, stop_at - time.perf_counter())):
                        event: dict[str, Any] = json.loads(await ws.recv())
                except TimeoutError:
                    break
                kind = event["type"]
                if kind in ("table", "game_started") and event.get("game"):
                    state = event["game"]
                    game = state["id"]
                    colour = "black" if state["black"]["id"] == user_id else "white"
                    if state["turn"] == colour and state["legal_moves"]:
                        await self.move(ws, game, state["ply"], state["legal_moves"])
                elif kind == "move" and game is not None:
                    if event["turn"] == colour:  # the AI just moved
                        if self.counting:
                            self.ai_moves += 1
                        if event["legal_moves"]:
                            await self.move(ws, game, event["ply"], event["legal_moves"])
                elif kind == "game_ended":
                    self.games += 1
                    await ws.send(json.dumps({"type": "rematch", "table": event["table"]}))
                elif kind == "error":
                    print(f"AI game error: {event}", file=sys.stderr)
        finally:
            await ws.close()

    @staticmethod
    async def move(ws: Any, game: int, ply: int, legal: list[str]) -> None:
        move = {"type": "move", "game": game, "move": random.choice(legal), "ply": ply}
        await ws.send(json.dumps(move))


# A database of its own, so that it never drops `bench/play.py`'s.
play.BENCH_DATABASE = "checkers_bench_ai_live"


async def bench(args: argparse.Namespace) -> None:
    os.environ["AI_WORKERS"] = str(args.ai_workers)  # the server process inherits it
    print(f"load average before: {os.getloadavg()[0]:.2f}")
    async with servers(args) as (urls, _echo, cpu, _echo_cpu):
        opponents = [AIOpponent(urls[0], args.room, args.level) for _ in range(args.ai_games)]
        total = args.warmup * 2 + args.seconds + 5
        async with httpx.AsyncClient(base_url=urls[0], timeout=60) as client:
            stop_at = time.perf_counter() + total
            ai_tasks = [asyncio.create_task(o.run(client, stop_at)) for o in opponents]
            await asyncio.sleep(args.warmup)  # the AI games are under way
            for o in opponents:
                o.counting = True
            started = time.perf_counter()
            paced = await run_games(
                urls, args.room, args.paced_games, args.seconds, args.warmup, 1.0, cpu
            )
            elapsed = time.perf_counter() - started
            for o in opponents:
                o.counting = False
            load = os.getloadavg()
            await asyncio.gather(*ai_tasks, return_exceptions=True)
    ai_moves = sum(o.ai_moves for o in opponents)
    print(line(f"paced ({args.paced_games} games) + {args.ai_games} AI games", paced), flush=True)
    print(
        f"AI moves while measured: {ai_moves} in {elapsed:.0f} s "
        f"({ai_moves / elapsed:.1f}/s; level {args.level}, AI_WORKERS={args.ai_workers})"
    )
    print(f"load average after (1, 5, 15 min): {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")
    print(f"goal p99 <= 50 ms: {'met' if paced.percentile(0.99) <= 50 else 'NOT met'}")
    if paced.errors:
        print(f"errors: {dict(paced.errors)}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--postgres", default=DEFAULT_POSTGRES, help="server to create DB on")
    parser.add_argument("--ai-games", type=int, default=20, help="games against the computer")
    parser.add_argument("--level", type=int, default=8, choices=range(1, 9))
    parser.add_argument("--ai-workers", type=int, default=1, help="AI_WORKERS of the server")
    parser.add_argument("--paced-games", type=int, default=100, help="paced human games")
    parser.add_argument("--seconds", type=float, default=20.0, help="measured time")
    parser.add_argument("--warmup", type=float, default=3.0, help="unmeasured time first")
    args = parser.parse_args()
    args.url, args.processes, args.server_pid, args.echo_url = None, 1, None, None
    args.room, args.redis = BENCH_ROOM, None
    asyncio.run(bench(args))


if __name__ == "__main__":
    main()
