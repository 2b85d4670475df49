"""Live play while a big arena runs: paced games' move round trips with an arena of many
players pairing and playing at once, against a real server.

    .venv/bin/python bench/arena_live.py                         # 500 arena players, 100 paced
    .venv/bin/python bench/arena_live.py --arena-players 500 --paced-games 100 --seconds 30

Starts the server as `bench/play.py` does (a fresh database `checkers_bench_arena_live`, the
unlisted room `bench`, `checkers serve` in a process of its own), then:

- a registered organiser creates a casual arena of `--minutes` (3+2), starting at once, and
  ARENA_PLAYERS guests join it; each connects, and plays every game it is paired into with a
  random legal move about every `--arena-pace` seconds, so that the director's waves, the
  games' starts and ends and the arena's moves all run beside the measured games;
- meanwhile PACED_GAMES ordinary games move about once a second per side (`bench/play.py`'s
  paced load); their round trips (sending a move to receiving its `move` event) are measured.

Prints the paced round trips (p50, p99), the arena's games and moves in the window, its
standings' size, and the load average. The goal (issue 33): the paced p99 at or under 50 ms.
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

# A database of its own, so that it never drops `bench/play.py`'s.
play.BENCH_DATABASE = "checkers_bench_arena_live"


class ArenaPlayer:
    """One arena player: plays every game it is paired into, at about `pace` s a move."""

    def __init__(self, base: str, pace: float) -> None:
        self.base, self.pace = base, pace
        self.moves = self.games = 0
        self.counting = False
        self.colours: dict[int, str] = {}

    async def run(self, ws: Any, user_id: int, stop_at: float) -> None:
        pending: set[asyncio.Task[None]] = set()
        try:
            while time.perf_counter() < stop_at:
                try:
                    async with asyncio.timeout(max(0.1, stop_at - time.perf_counter())):
                        event: dict[str, Any] = json.loads(await ws.recv())
                except TimeoutError:
                    break
                kind = event["type"]
                if kind == "your_game":
                    await ws.send(json.dumps({"type": "watch", "table": event["table"]}))
                    self.colours[event["game"]] = event["colour"]
                elif kind == "table" and event.get("game"):
                    state = event["game"]
                    self._reply(ws, state["id"], state["ply"], state["turn"], state, pending)
                elif kind == "move":
                    if self.counting and self.colours.get(event["game"]) != event["turn"]:
                        self.moves += 1
                    self._reply(ws, event["game"], event["ply"], event["turn"], event, pending)
                elif kind == "game_ended":
                    if self.counting:
                        self.games += 1
                    await ws.send(json.dumps({"type": "unwatch", "table": event["table"]}))
        finally:
            for task in pending:
                task.cancel()
            await ws.close()

    def _reply(
        self,
        ws: Any,
        game: int,
        ply: int,
        turn: str,
        state: dict[str, Any],
        pending: set[asyncio.Task[None]],
    ) -> None:
        if self.colours.get(game) != turn or not state.get("legal_moves"):
            return
        task = asyncio.create_task(self._move(ws, game, ply, state["legal_moves"]))
        pending.add(task)
        task.add_done_callback(pending.discard)

    async def _move(self, ws: Any, game: int, ply: int, legal: list[str]) -> None:
        await asyncio.sleep(random.uniform(0.5 * self.pace, 1.5 * self.pace))
        move = {"type": "move", "game": game, "move": random.choice(legal), "ply": ply}
        await ws.send(json.dumps(move))


async def organiser(client: httpx.AsyncClient, minutes: int) -> int:
    """A registered player's casual arena, starting at once: its id."""
    name = f"organiser{random.randrange(10**6)}"
    made = await client.post(
        "/api/auth/register", json={"name": name, "password": "a-long-passphrase-9"}
    )
    token = made.raise_for_status().json()["access_token"]
    arena = await client.post(
        "/api/tournaments",
        json={"kind": "arena", "name": "Bench arena", "minutes": minutes, "starts_in": 0}
        | {"clock": {"base": 180, "increment": 2}},
        headers={"Authorization": f"Bearer {token}"},
    )
    arena_id: int = arena.raise_for_status().json()["id"]
    return arena_id


async def bench(args: argparse.Namespace) -> None:
    print(f"load average before: {os.getloadavg()[0]:.2f}")
    async with servers(args) as (urls, _echo, cpu, _echo_cpu):
        base = urls[0]
        async with httpx.AsyncClient(base_url=base, timeout=60) as client:
            arena_id = await organiser(client, args.minutes)
            players = [ArenaPlayer(base, args.arena_pace) for _ in range(args.arena_players)]
            sockets = []
            gate = asyncio.Semaphore(20)

            async def enter() -> tuple[Any, int]:
                async with gate:
                    token, user_id = await guest(client)
                    ws = await open_ws(base.replace("http://", "ws://") + "/ws", token)
                    await ws.recv()  # welcome
                    joined = await client.post(
                        f"/api/tournaments/{arena_id}/join",
                        headers={"Authorization": f"Bearer {token}"},
                    )
                    joined.raise_for_status()
                    return ws, user_id

            sockets = await asyncio.gather(*(enter() for _ in players))
            print(f"{len(sockets)} arena players joined arena {arena_id}", flush=True)
            total = args.warmup * 2 + args.seconds + 5
            stop_at = time.perf_counter() + args.settle + total
            tasks = [
                asyncio.create_task(p.run(ws, user_id, stop_at))
                for p, (ws, user_id) in zip(players, sockets, strict=True)
            ]
            await asyncio.sleep(args.settle)  # the first wave's games are under way
            for p in players:
                p.counting = True
            started = time.perf_counter()
            paced = await run_games(
                urls, args.room, args.paced_games, args.seconds, args.warmup, 1.0, cpu
            )
            elapsed = time.perf_counter() - started
            for p in players:
                p.counting = False
            load = os.getloadavg()
            shown = (await client.get(f"/api/tournaments/{arena_id}")).json()
            await asyncio.gather(*tasks, return_exceptions=True)
    moves, games = sum(p.moves for p in players), sum(p.games for p in players) // 2
    print(line(f"paced ({args.paced_games} games) + arena", paced), flush=True)
    print(
        f"arena while measured: {moves} moves ({moves / elapsed:.0f}/s), {games} games ended "
        f"in {elapsed:.0f} s; {len(shown['playing'])} games in progress at the end, "
        f"{len(shown['standings'])} players in the standings"
    )
    print(f"load average after (1, 5, 15 min): {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")
    print(f"goal p99 <= 50 ms: {'met' if paced.percentile(0.99) <= 50 else 'NOT met'}")
    if paced.errors:
        print(f"errors: {dict(paced.errors)}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--postgres", default=DEFAULT_POSTGRES, help="server to create DB on")
    parser.add_argument("--arena-players", type=int, default=500, help="players in the arena")
    parser.add_argument("--arena-pace", type=float, default=2.0, help="seconds a move, about")
    parser.add_argument("--minutes", type=int, default=60, help="the arena's length")
    parser.add_argument("--settle", type=float, default=10.0, help="arena play before measuring")
    parser.add_argument("--paced-games", type=int, default=100, help="paced ordinary games")
    parser.add_argument("--seconds", type=float, default=30.0, help="measured time")
    parser.add_argument("--warmup", type=float, default=3.0, help="unmeasured time first")
    args = parser.parse_args()
    args.url, args.processes, args.server_pid, args.echo_url = None, 1, None, None
    args.room, args.redis, args.database = BENCH_ROOM, None, None
    asyncio.run(bench(args))


if __name__ == "__main__":
    main()
