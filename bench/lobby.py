"""Lobby snapshot benchmark: how long the lobby's snapshot (`app.tables.service.lobby`, what
every `subscribe_lobby` reads: every listed room's open public tables in one query, each
player with their rating in the table's category) takes with many tables.

    .venv/bin/python bench/lobby.py                                  # SQLite, 100 and 1,000
    .venv/bin/python bench/lobby.py --url postgresql+asyncpg://postgres@127.0.0.1/checkers_bench_lobby

The database is made afresh from the models: four listed rooms (English blitz and untimed, pool
rapid and bullet clocks), then `--tables` open public tables spread over them, each with a
registered host and, for two tables in three, a second player (a game in progress); one
registered player in two has a rating row in each of the ten variant-category pairs (of
thousands of other players' rows), the others none, and one seat in ten is a guest's. Each run
times `--runs` snapshots one after the other and prints p50 and p99 in milliseconds.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import statistics
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

from sqlalchemy import insert
from sqlalchemy.ext.asyncio import create_async_engine

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from app.broker.memory import MemoryBroker  # noqa: E402
from app.config import Settings  # noqa: E402
from app.db.engine import Database  # noqa: E402
from app.db.models import Base, Game, GameTable, Rating, Room, User  # noqa: E402
from app.live.liveplay import LivePlay  # noqa: E402
from app.tables import service as tables  # noqa: E402

ROOMS = [
    ("english-blitz", "english", 300, 3),
    ("english-casual", "english", None, 0),
    ("pool", "pool", 600, 5),
    ("pool-bullet", "pool", 60, 0),
]
PAIRS = [(v, c) for v in ("english", "pool") for c in ("bullet", "blitz", "rapid", "classical")]
OTHER_PLAYERS = 5_000


async def recreate(url: str) -> None:
    if url.startswith("postgresql"):
        import asyncpg

        name = url.rsplit("/", 1)[1]
        dsn = url.replace("postgresql+asyncpg://", "postgresql://").rsplit("/", 1)[0]
        admin = await asyncpg.connect(dsn + "/postgres")
        try:
            await admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
            await admin.execute(f'CREATE DATABASE "{name}"')
        finally:
            await admin.close()
    engine = create_async_engine(url)
    async with engine.begin() as conn:
        await conn.run_sync(Base.metadata.drop_all)
        await conn.run_sync(Base.metadata.create_all)
    await engine.dispose()


async def load(url: str, count: int, rng: random.Random) -> None:
    await recreate(url)
    engine = create_async_engine(url)
    now = datetime.now(UTC)
    seats = count * 2
    users = [
        {"id": i, "name": f"p{i}", "kind": "guest" if i % 10 == 0 else "registered"}
        for i in range(1, seats + OTHER_PLAYERS + 1)
    ]
    ratings = [
        {
            "user_id": u["id"],
            "variant": variant,
            "category": category,
            "rating": rng.gauss(1500, 250),
            "rd": rng.uniform(45, 350),
            "volatility": 0.06,
            "games": rng.randint(1, 500),
            "last_game_at": now - timedelta(days=rng.uniform(0, 400)),
        }
        for u in users
        if u["kind"] == "registered" and (u["id"] % 2 == 1 or u["id"] > seats)
        for variant, category in PAIRS + [("english", "untimed"), ("pool", "untimed")]
    ]
    rooms = [
        {"id": i, "slug": slug, "name": slug, "variant": variant, "clock_base_s": base,
         "clock_increment_s": inc, "table_limit": count}
        for i, (slug, variant, base, inc) in enumerate(ROOMS, 1)
    ]  # fmt: skip
    table_rows, games = [], []
    for i in range(count):
        room_id, (_, variant, base, inc) = i % len(ROOMS) + 1, ROOMS[i % len(ROOMS)]
        table_rows.append(
            {
                "id": i + 1,
                "room_id": room_id,
                "owner_id": 2 * i + 1,
                "guest_id": 2 * i + 2 if i % 3 else None,
                "variant": variant,
                "clock_base_s": base,
                "clock_increment_s": inc,
                "rated": False,
                "event_seq": 0,
            }
        )
        if i % 3:
            games.append(
                {
                    "variant": variant,
                    "room_id": room_id,
                    "table_id": i + 1,
                    "black_id": 2 * i + 1,
                    "white_id": 2 * i + 2,
                    "clock_base_s": base,
                    "clock_increment_s": inc,
                    "started_at": now,
                }
            )
    async with engine.begin() as conn:
        for model, rows in ((User, users), (Room, rooms), (GameTable, table_rows), (Game, games)):
            await conn.execute(insert(model), rows)
        for start in range(0, len(ratings), 5_000):
            await conn.execute(insert(Rating), ratings[start : start + 5_000])
    await engine.dispose()


async def measure(url: str, runs: int) -> tuple[float, float, int]:
    db = Database(url)
    live = LivePlay(db, MemoryBroker(), Settings(database_url=url, environment="test"))
    try:
        listed = await tables.lobby(live)  # warm the connection and the statement cache
        samples = []
        for _ in range(runs):
            start = time.perf_counter()
            await tables.lobby(live)
            samples.append((time.perf_counter() - start) * 1000)
    finally:
        await db.dispose()
    samples.sort()
    shown = sum(len(room["tables"]) for room in listed)
    return statistics.median(samples), samples[int(len(samples) * 0.99) - 1], shown


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--url", default=None, help="database URL (default: a SQLite file)")
    parser.add_argument("--tables", type=int, nargs="+", default=[100, 1000])
    parser.add_argument("--runs", type=int, default=200)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        url = args.url or f"sqlite+aiosqlite:///{tmp}/lobby.db"
        for count in args.tables:
            await load(url, count, random.Random(count))
            p50, p99, shown = await measure(url, args.runs)
            print(f"{count:>6,} tables ({shown:,} listed): lobby snapshot p50 {p50:.2f} ms, "
                  f"p99 {p99:.2f} ms  [{url.split(':')[0]}]")  # fmt: skip


if __name__ == "__main__":
    asyncio.run(main())
