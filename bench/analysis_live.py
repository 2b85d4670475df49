"""Live play while game analyses run (issue 34): paced games' move round trips with four analyses
at work on the same machine.

Usage:
    .venv/bin/python bench/analysis_live.py                  # 4 analyses, 200 paced games, 30 s
    .venv/bin/python bench/analysis_live.py --analyses 4 --paced-games 200 --seconds 30

A fresh PostgreSQL database with the master games imported (`checkers import`), one server
process with `ANALYSIS_WORKERS` set to `--analyses`; an administrator (not limited) asks for the
analysis of the longest games, ten times as many as there are workers, so that every worker is
busy the whole time. Once all of them are running, `--paced-games` ordinary games move about
once a second per side and their round trips are measured (goal: p99 ≤ 50 ms). Prints the
paced round trips, the positions the analyses searched meanwhile, and the load average.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import subprocess
import sys
import time
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent))

import play  # noqa: E402  (bench/ is not a package: its sibling module)
from play import DEFAULT_POSTGRES, line, run_games, servers  # noqa: E402

play.BENCH_DATABASE = "checkers_bench_analysis_live"
ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "tests" / "data"
COLLECTIONS = ("OCA_2.0.pdn", "Principles_of_Strategy.pdn", "inferno.pdn", "borderclassics.pdn")
ADMIN, PASSWORD = "benchadmin", "bench-admin-password-1"


async def prepare(database_url: str) -> None:
    """The master games in the archive, and the administrator who asks for their analyses."""
    env = os.environ | {"DATABASE_URL": database_url, "CHECKERS_ADMIN_PASSWORD": PASSWORD}
    files = [str(DATA / name) for name in COLLECTIONS]
    command = [sys.executable, "-m", "app.cli"]
    await asyncio.to_thread(
        subprocess.run, [*command, "import", "--quiet", *files], env=env, cwd=ROOT, check=False
    )
    await asyncio.to_thread(
        subprocess.run, [*command, "create-admin", ADMIN], env=env, cwd=ROOT, check=True
    )


async def bench(args: argparse.Namespace) -> None:
    os.environ["ANALYSIS_WORKERS"] = str(args.analyses)
    print(f"load average before: {os.getloadavg()[0]:.2f}", flush=True)
    database_url = args.postgres.rsplit("/", 1)[0] + f"/{play.BENCH_DATABASE}"
    async with servers(args, prepare=lambda: prepare(database_url)) as (urls, _e, cpu, _ec):
        base = urls[0]
        async with httpx.AsyncClient(base_url=base, timeout=60) as client:
            logged = await client.post(
                "/api/auth/login", json={"name": ADMIN, "password": PASSWORD}
            )
            logged.raise_for_status()
            headers = {"Authorization": f"Bearer {logged.json()['access_token']}"}
            games = (await client.get("/api/games", params={"limit": 100, "min_plies": 60})).json()[
                "data"
            ]
            longest = sorted(games, key=lambda g: -g["ply_count"])[: 10 * args.analyses]
            for game in longest:
                asked = await client.post(f"/api/games/{game['id']}/analysis", headers=headers)
                asked.raise_for_status()
            ids = [g["id"] for g in longest]

            async def positions() -> tuple[int, int]:
                done = running = 0
                for game_id in ids:
                    shown = (await client.get(f"/api/games/{game_id}/analysis")).json()
                    done += shown["progress"]["done"] if shown["status"] != "done" else 0
                    done += shown["progress"]["total"] if shown["status"] == "done" else 0
                    running += shown["status"] == "running"
                return done, running

            give_up = time.perf_counter() + 60
            while (await positions())[1] < args.analyses:
                assert time.perf_counter() < give_up, "the analyses did not start"
                await asyncio.sleep(0.5)
            before, _ = await positions()
            started = time.perf_counter()
            paced = await run_games(
                urls, args.room, args.paced_games, args.seconds, args.warmup, 1.0, cpu
            )
            elapsed = time.perf_counter() - started
            load = os.getloadavg()
            after, running = await positions()
    print(line(f"paced ({args.paced_games} games) + analyses", paced), flush=True)
    print(
        f"analyses while measured: {after - before} positions searched in {elapsed:.0f} s "
        f"({running} analyses running at the end, {args.analyses} workers)"
    )
    print(f"load average after (1, 5, 15 min): {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")
    print(f"goal p99 <= 50 ms: {'met' if paced.percentile(0.99) <= 50 else 'NOT met'}")
    if paced.errors:
        print(f"errors: {dict(paced.errors)}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--postgres", default=DEFAULT_POSTGRES, help="server to create DB on")
    parser.add_argument("--analyses", type=int, default=4, help="analyses at work at once")
    parser.add_argument("--paced-games", type=int, default=200, help="paced ordinary games")
    parser.add_argument("--seconds", type=float, default=30.0, help="measured time")
    parser.add_argument("--warmup", type=float, default=3.0, help="unmeasured time first")
    args = parser.parse_args()
    # What `play.servers` reads of its own arguments.
    args.url, args.processes, args.database, args.room = None, 1, None, play.BENCH_ROOM
    asyncio.run(bench(args))


if __name__ == "__main__":
    main()
