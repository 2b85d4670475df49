"""Leaderboard benchmark: seed the ratings of a million rated games on PostgreSQL, then time
the leaderboard query.

    .venv/bin/python bench/leaderboard.py                    # 1,000,000 games, 50,000 players
    .venv/bin/python bench/leaderboard.py --games 100000     # a quick run
    .venv/bin/python bench/leaderboard.py --skip-load        # measure again

The load recreates a dedicated database (`checkers_bench_ratings` by default) from the models
and fills `users` and `ratings` with asyncpg COPY: each rated game is two player-games, shared
among the players with Zipf-like activity, each player playing in one to three of the ten
(variant, category) ratings (English blitz the most played); a rating's RD falls with its games
(45 at the busiest) and its last game is recent for active players, weeks old for others; 0.5%
of players are banned. The leaderboard reads only `ratings` (and the players' names), so the
games themselves and their `rating_changes` are not written. The measurement calls
`app.ratings.service.leaderboard` (what `GET /api/leaderboard` runs: the query through the
partial index, then the RD grown while idle) for each of the ten ratings in turn, one at a
time, top 50, and prints p50/p99 and the query plan.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import statistics
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import asyncpg

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchdb import add_database_option, dsn, recreate_database  # noqa: E402

from app.db.engine import Database  # noqa: E402
from app.ratings import CATEGORIES  # noqa: E402
from app.ratings import service as ratings  # noqa: E402

PAIRS = [(v, c) for v in ("english", "pool") for c in CATEGORIES]
# How often each (variant, category) is played: English blitz the most.
PAIR_WEIGHTS = [6, 20, 10, 3, 4, 2, 6, 6, 2, 2]


def rating_rows(
    rng: random.Random, games: int, players: int, now: datetime
) -> list[tuple[object, ...]]:
    """The `ratings` rows of `games` rated games among `players` players."""
    activity = [1.0 / (rank + 1) ** 0.9 for rank in range(players)]
    total = sum(activity)
    rows: list[tuple[object, ...]] = []
    for user_id, weight in enumerate(activity, 1):
        played = max(1, round(2 * games * weight / total))
        pairs = set(rng.choices(range(len(PAIRS)), PAIR_WEIGHTS, k=rng.randint(1, 3)))
        shares = [rng.random() + 0.2 for _ in pairs]
        for index, share in zip(sorted(pairs), shares, strict=True):
            n = max(1, round(played * share / sum(shares)))
            variant, category = PAIRS[index]
            rd = max(45.0, min(500.0, 350.0 / (1 + n / 8) ** 0.5 + rng.uniform(0, 15)))
            idle_days = rng.expovariate(1 / 2) if n > 50 else rng.uniform(0, 120)
            rating = max(400.0, rng.gauss(1500 + min(n, 2000) / 8, 250))
            last = now - timedelta(days=idle_days)
            rows.append((user_id, variant, category, rating, rd, 0.06, n, last))
    return rows


async def load(url: str, games: int, players: int, seed: int) -> tuple[int, float]:
    rng = random.Random(seed)
    now = datetime.now(UTC)
    began = time.perf_counter()
    conn = await asyncpg.connect(dsn(url))
    try:
        users = [
            (i, f"player{i}", "registered", "player", rng.random() < 0.005, now)
            for i in range(1, players + 1)
        ]
        await conn.copy_records_to_table(
            "users",
            records=users,
            columns=["id", "name", "kind", "role", "banned", "created_at"],
        )
        rows = rating_rows(rng, games, players, now)
        await conn.copy_records_to_table(
            "ratings",
            records=rows,
            columns=[
                "user_id",
                "variant",
                "category",
                "rating",
                "rd",
                "volatility",
                "games",
                "last_game_at",
            ],
        )
        await conn.execute("ANALYZE")
    finally:
        await conn.close()
    return len(rows), time.perf_counter() - began


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


async def measure(url: str, samples: int, limit: int) -> None:
    db = Database(url)
    try:
        timings: list[float] = []
        sizes: dict[tuple[str, str], int] = {}
        async with db.session() as session:
            for n in range(samples + len(PAIRS)):  # the first round warms the caches
                variant, category = PAIRS[n % len(PAIRS)]
                began = time.perf_counter()
                board = await ratings.leaderboard(session, variant, category, limit)
                elapsed = time.perf_counter() - began
                await session.rollback()
                if n >= len(PAIRS):
                    timings.append(elapsed * 1000)
                sizes[(variant, category)] = len(board)
        print(f"leaderboards (top {limit}) filled: {sizes}")
        print(
            f"leaderboard query, {len(timings)} calls: p50 {statistics.median(timings):.2f} ms, "
            f"p99 {percentile(timings, 0.99):.2f} ms, max {max(timings):.2f} ms"
        )
    finally:
        await db.dispose()
    conn = await asyncpg.connect(dsn(url))
    try:
        since = datetime.now(UTC) - timedelta(days=7)
        plan = await conn.fetch(
            "EXPLAIN (ANALYZE, COSTS OFF) SELECT ratings.user_id, ratings.rating, users.name "
            "FROM ratings JOIN users ON users.id = ratings.user_id "
            "WHERE ratings.variant = 'english' AND ratings.category = 'blitz' "
            "AND ratings.rd <= 75 AND ratings.last_game_at >= $1 AND users.banned IS false "
            f"ORDER BY ratings.rating DESC, ratings.user_id LIMIT {limit * 2}",
            since,
        )
        print("plan of the candidate query (english blitz):")
        for row in plan:
            print("   ", row[0])
    finally:
        await conn.close()


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_database_option(parser, "checkers_bench_ratings")
    parser.add_argument("--games", type=int, default=1_000_000)
    parser.add_argument("--players", type=int, default=50_000)
    parser.add_argument("--samples", type=int, default=1000, help="leaderboard calls to time")
    parser.add_argument("--limit", type=int, default=50)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--skip-load", action="store_true", help="reuse the loaded database")
    args = parser.parse_args()
    if not args.skip_load:
        await recreate_database(args.database_url)
        rows, seconds = await load(args.database_url, args.games, args.players, args.seed)
        print(
            f"loaded {args.players:,} players, {rows:,} ratings "
            f"({args.games:,} games) in {seconds:.1f} s"
        )
    await measure(args.database_url, args.samples, args.limit)


if __name__ == "__main__":
    asyncio.run(main())
