"""Quick-pairing benchmark on PostgreSQL: how long the pairing step takes, and how long players
wait, with 1,000 players waiting in a pool.

    .venv/bin/python bench/pairing.py                 # 1,000 waiting players
    .venv/bin/python bench/pairing.py --waiting 5000

It recreates a database of its own (`checkers_bench_pairing` by default), migrates it, and runs
`app.matchmaking.pools` in this process against it (a memory broker; the players count as
connected to this process, as a seeker is). Two measures:

- burst: `--waiting` players (ratings drawn from N(1500, 300)) start to wait in English 5+3 at
  once; the pairing step runs every `PAIRING_SECONDS`, as each server process runs it, until
  everyone is paired. Printed: each step's duration and pairs, and the wait of every player
  from their seek to their game's start (p50/p99/max).
- newcomers: `--waiting` players wait in the pool, rated, their ratings far apart (none pairs
  during the measure); two casual newcomers seek and one pairing step runs, `--samples` times.
  Printed: the step's duration (it locks and reads every seek of the pool, pairs the two, and
  stores their table and game) p50/p99/max.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import statistics
import sys
import time
from pathlib import Path

from sqlalchemy import select

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchdb import add_database_option, recreate_database  # noqa: E402

from app.broker.memory import MemoryBroker  # noqa: E402
from app.config import Settings  # noqa: E402
from app.db.engine import Database  # noqa: E402
from app.db.models import Game, User  # noqa: E402
from app.live.liveplay import LivePlay  # noqa: E402
from app.matchmaking import pools as pairing  # noqa: E402
from app.matchmaking import seeks_store as seeks  # noqa: E402
from app.timeutil import as_datetime, as_unix  # noqa: E402

POOL = "english-5+3"


async def add_users(live: LivePlay, prefix: str, count: int) -> list[int]:
    async with live.db.session() as session:
        users = [User(name=f"{prefix}{n}", kind="registered") for n in range(count)]
        session.add_all(users)
        await session.commit()
        return [u.id for u in users]


async def put(live: LivePlay, users: list[int], ratings: list[float], rated: bool) -> None:
    now = as_datetime(time.time())
    async with live.db.session() as session:
        for user_id, rating in zip(users, ratings, strict=True):
            await seeks.put(session, user_id, POOL, rated, rating, live.instance, now)
        await session.commit()


def summary(values: list[float]) -> str:
    ordered = sorted(values)
    p99 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]
    return (
        f"p50 {statistics.median(ordered) * 1000:.1f} ms, p99 {p99 * 1000:.1f} ms, "
        f"max {ordered[-1] * 1000:.1f} ms"
    )


async def burst(live: LivePlay, waiting: int, rng: random.Random) -> None:
    users = await add_users(live, "burst", waiting)
    await put(live, users, [rng.gauss(1500, 300) for _ in users], rated=False)
    print(f"burst: {waiting:,} players wait in {POOL}")
    step = 0
    while True:
        step += 1
        started = time.perf_counter()
        made = await pairing.pair(live, POOL)
        took = time.perf_counter() - started
        async with live.db.session() as session:
            left = (await seeks.waiting(session)).get(POOL, 0)
        print(f"  step {step}: {took * 1000:.0f} ms, {made} pairs, {left} still waiting")
        if not left or step > 120:
            break
        await asyncio.sleep(pairing.PAIRING_SECONDS)
    async with live.db.session() as session:
        starts = [as_unix(at) for at in (await session.scalars(select(Game.started_at))).all()]
    first = min(starts)
    # Everyone sought at once (within the few ms of the insert): the wait is the game's start.
    waits = [start - first for start in starts for _ in (0, 1)]
    print(f"  waits ({len(waits)} players): {summary(waits)}")


async def newcomers(live: LivePlay, waiting: int, samples: int) -> None:
    users = await add_users(live, "waiting", waiting)
    await put(live, users, [10_000.0 * n for n in range(waiting)], rated=True)
    pairs = await add_users(live, "newcomer", 2 * samples)
    times = []
    for n in range(samples):
        await put(live, pairs[2 * n : 2 * n + 2], [1500.0, 1520.0], rated=False)
        started = time.perf_counter()
        made = await pairing.pair(live, POOL)
        times.append(time.perf_counter() - started)
        assert made == 1, made
    print(f"newcomers: a step with {waiting:,} others waiting, {samples} times: {summary(times)}")


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_database_option(parser, "checkers_bench_pairing")
    parser.add_argument("--waiting", type=int, default=1000)
    parser.add_argument("--samples", type=int, default=50)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    for measure in ("burst", "newcomers"):
        await recreate_database(args.database_url, migrate=True)
        db = Database(args.database_url)
        broker = MemoryBroker()
        await broker.connect()
        live = LivePlay(db, broker, Settings(database_url=args.database_url))
        live.instance = "bench"
        live.connected_here = lambda user_id: True  # seekers are connected, as they are to seek
        try:
            if measure == "burst":
                await burst(live, args.waiting, random.Random(args.seed))
            else:
                await newcomers(live, args.waiting, args.samples)
        finally:
            await live.stop()
            await broker.disconnect()
            await db.dispose()
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    asyncio.run(main())
