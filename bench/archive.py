"""Archive benchmark: bulk-load a million games into Postgres, then time the archive endpoints.

    .venv/bin/python bench/archive.py                   # 1,000,000 games (a few minutes to load)
    .venv/bin/python bench/archive.py --games 20000     # a quick run
    .venv/bin/python bench/archive.py --skip-load       # measure again on the loaded database
    .venv/bin/python bench/archive.py --games 10000000 --players 100000 --moves-fraction 0.1

The load recreates a dedicated database (`checkers_bench` by default) from the models and fills
it with asyncpg COPY: players with Zipf-like activity, games of 30-120 plies whose moves come
from random legal playouts by the rules engine (a pool of a few thousand move lists, reused),
one in a hundred at a private table (those only their players and administrators list). With
`--moves-fraction` below 1 only the newest games get their moves (the export reads the newest
first; the rest are rows of `games` alone, which is what the pages and searches read).
The measurements are HTTP requests to a real uvicorn server (one worker, in a subprocess) from one
client, one request at a time: a player's history page, a filtered search, one game's PDN, and the
bulk export in both formats. Figures are printed; docs/benchmarks.md records them.
"""

from __future__ import annotations

import argparse
import asyncio
import bisect
import itertools
import os
import random
import socket
import statistics
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import asyncpg
import httpx
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeElapsedColumn
from rich.table import Table

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchdb import add_database_option, dsn, recreate_database  # noqa: E402

from app.rules import Color, Game, Outcome, Termination  # noqa: E402

console = Console()
ROOT = Path(__file__).resolve().parent.parent
TIME_CONTROLS = [(None, 0), (60, 1), (180, 2), (300, 3), (600, 5), (900, 10)]


@dataclass
class PoolGame:
    """One generated game, reused for many rows: moves, clocks and move times."""

    variant: str
    result: str
    termination: str
    plies: list[tuple[int, str, int | None, timedelta]]  # ply, move, clock_ms, offset
    clocks: tuple[int | None, int | None]  # black, white time left at the end
    duration: timedelta


def playout(rng: random.Random, variant: str, base_s: int | None, inc_s: int) -> PoolGame:
    """A random legal game of 30-120 plies, ended by the rules or by a resignation/agreement."""
    target = rng.randint(30, 120)
    game = Game(variant)
    while game.outcome() is None and game.ply < target:
        game.play(rng.choice(game.legal_moves()))
    if game.outcome() is None:
        roll = rng.random()
        if roll < 0.7:
            game.end(Outcome(Termination.RESIGNATION, rng.choice([Color.BLACK, Color.WHITE])))
        elif roll < 0.85 and base_s is not None:
            game.end(Outcome(Termination.TIMEOUT, game.position.turn.other))
        else:
            game.end(Outcome(Termination.AGREEMENT))
    outcome = game.outcome()
    assert outcome is not None
    clocks = [None if base_s is None else base_s * 1000] * 2
    plies = []
    elapsed = timedelta()
    for ply, move in enumerate(game.moves, start=1):
        think_ms = int(rng.expovariate(1 / 4000)) + 300
        elapsed += timedelta(milliseconds=think_ms)
        side = (ply - 1) % 2
        left = clocks[side]
        if left is not None:
            left = max(left - think_ms, 0) + inc_s * 1000
            clocks[side] = left
        plies.append((ply, str(move), left, elapsed))
    return PoolGame(
        variant=variant,
        result=outcome.result(),
        termination=outcome.termination.value,
        plies=plies,
        clocks=(clocks[0], clocks[1]),
        duration=elapsed,
    )


def build_pool(rng: random.Random, size: int) -> list[tuple[PoolGame, int | None, int]]:
    pool = []
    with Progress(*_columns(), console=console) as progress:
        task = progress.add_task("random playouts", total=size)
        for _ in range(size):
            base_s, inc_s = rng.choice(TIME_CONTROLS)
            variant = "english" if rng.random() < 0.75 else "pool"
            pool.append((playout(rng, variant, base_s, inc_s), base_s, inc_s))
            progress.advance(task)
    return pool


def _columns() -> tuple[Any, ...]:
    return (
        "{task.description}",
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
    )


class ZipfPlayers:
    """Player ids drawn with probability ~ 1/rank: a few very active players, a long tail."""

    def __init__(self, rng: random.Random, count: int) -> None:
        self._rng = rng
        self._cumulative = list(itertools.accumulate(1 / rank for rank in range(1, count + 1)))

    def pair(self) -> tuple[int, int]:
        total = self._cumulative[-1]
        black = bisect.bisect(self._cumulative, self._rng.random() * total) + 1
        while True:
            white = bisect.bisect(self._cumulative, self._rng.random() * total) + 1
            if white != black:
                return black, white


GAME_COLUMNS = [
    "id",
    "variant",
    "black_id",
    "white_id",
    "status",
    "result",
    "termination",
    "clock_base_s",
    "clock_increment_s",
    "black_clock_ms",
    "white_clock_ms",
    "rated",
    "ply_count",
    "source",
    "started_at",
    "last_move_at",
    "finished_at",
    "room_id",
    "table_id",
    "is_private",
]
PRIVATE_TABLES = 1_000  # the private games are spread over these tables (ids 1 …)
MOVE_COLUMNS = ["game_id", "ply", "move", "clock_ms", "played_at"]


def game_rows(
    rng: random.Random,
    pool: list[tuple[PoolGame, int | None, int]],
    players: ZipfPlayers,
    first_id: int,
    count: int,
    total: int,
    start: datetime,
    span: timedelta,
    first_with_moves: int,
) -> Iterator[tuple[tuple[Any, ...], list[tuple[Any, ...]]]]:
    """Game rows in id order, started at increasing times over `span`; the newest 0.1% are
    still being played (status `playing`, result `*`, their moves so far); one in a hundred
    at a private table; moves for the games from `first_with_moves` on."""
    step = span / total
    for game_id in range(first_id, first_id + count):
        private = rng.random() < 0.01
        entry, base_s, inc_s = rng.choice(pool)
        black, white = players.pair()
        started = start + step * game_id + timedelta(seconds=rng.random())
        playing = game_id > total * 0.999
        plies = entry.plies[: len(entry.plies) // 2] if playing else entry.plies
        last_move = started + plies[-1][3]
        yield (
            (
                game_id,
                entry.variant,
                black,
                white,
                "playing" if playing else "finished",
                "*" if playing else entry.result,
                None if playing else entry.termination,
                base_s,
                inc_s,
                entry.clocks[0],
                entry.clocks[1],
                rng.random() < 0.6,
                len(plies),
                "live",
                started,
                last_move,
                None if playing else last_move,
                1,
                1 + game_id % PRIVATE_TABLES if private else None,
                private,
            ),
            [(game_id, ply, move, clock, started + offset) for ply, move, clock, offset in plies]
            if game_id >= first_with_moves
            else [],
        )


async def load(
    url: str, games: int, players: int, pool_size: int, seed: int, moves_fraction: float
) -> float:
    """Fill the database; returns the seconds the COPY took."""
    rng = random.Random(seed)
    pool = build_pool(rng, pool_size)
    zipf = ZipfPlayers(rng, players)
    conn = await asyncpg.connect(dsn(url))
    began = time.perf_counter()
    try:
        created = datetime(2024, 1, 1, tzinfo=UTC)
        await conn.copy_records_to_table(
            "users",
            columns=["id", "name", "kind", "role", "banned", "created_at"],
            records=[
                (i, f"player{i:05d}", "registered", "player", False, created)
                for i in range(1, players + 1)
            ],
        )
        await conn.execute(
            "INSERT INTO rooms (id, slug, name, variant, clock_increment_s, table_limit,"
            " is_open, is_listed, created_at) VALUES"
            " (1, 'english-casual', 'English casual', 'english', 0, 50, true, true, $1)",
            created,
        )
        await conn.copy_records_to_table(
            "tables",
            columns=["id", "room_id", "owner_id", "variant", "clock_increment_s", "colour"]
            + ["is_private", "invite_code", "rated", "status", "created_at", "event_seq"],
            records=[
                (i, 1, i, "english", 0, "random", True, f"code{i}", False, "closed", created, 0)
                for i in range(1, PRIVATE_TABLES + 1)
            ],
        )
        first_with_moves = games - int(games * moves_fraction) + 1
        span = timedelta(days=730)
        start = datetime.now(UTC) - span
        chunk = 20_000
        with Progress(*_columns(), console=console) as progress:
            task = progress.add_task("COPY games and moves", total=games)
            for first in range(1, games + 1, chunk):
                count = min(chunk, games - first + 1)
                game_batch, move_batch = [], []
                rows = game_rows(
                    rng, pool, zipf, first, count, games, start, span, first_with_moves
                )
                for game, moves in rows:
                    game_batch.append(game)
                    move_batch.extend(moves)
                await conn.copy_records_to_table("games", columns=GAME_COLUMNS, records=game_batch)
                await conn.copy_records_to_table("moves", columns=MOVE_COLUMNS, records=move_batch)
                progress.advance(task, count)
        await conn.execute(f"SELECT setval('users_id_seq', {players})")
        await conn.execute(f"SELECT setval('tables_id_seq', {PRIVATE_TABLES})")
        await conn.execute(f"SELECT setval('games_id_seq', {games})")
        loaded = time.perf_counter() - began
        with console.status("VACUUM ANALYZE"):
            await conn.execute("VACUUM ANALYZE")
        return loaded
    finally:
        await conn.close()


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def start_server(url: str, port: int) -> subprocess.Popen[bytes]:
    env = {k: v for k, v in os.environ.items() if k != "REDIS_URL"}  # in-process broker
    env.update(DATABASE_URL=url, ENVIRONMENT="development")
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "uvicorn",
            "app.main:create_app",
            "--factory",
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--log-level",
            "warning",
            "--no-access-log",
        ],
        cwd=ROOT,
        env=env,
    )


async def wait_ready(client: httpx.AsyncClient) -> None:
    for _ in range(100):
        try:
            if (await client.get("/healthz")).status_code == 200:
                return
        except httpx.TransportError:
            pass
        await asyncio.sleep(0.1)
    raise RuntimeError("the server did not start")


async def timed(
    requests: list[str], send: Callable[[str], Awaitable[httpx.Response]]
) -> list[float]:
    times = []
    for path in requests:
        began = time.perf_counter()
        response = await send(path)
        times.append((time.perf_counter() - began) * 1000)
        if response.status_code != 200:
            raise RuntimeError(f"{path}: {response.status_code} {response.text[:200]}")
    return times


def percentiles(times: list[float]) -> tuple[float, float]:
    cuts = statistics.quantiles(times, n=100, method="inclusive")
    return statistics.median(times), cuts[98]


async def export_rate(client: httpx.AsyncClient, accept: str, games: int) -> tuple[float, float]:
    """Games per second and MB per second of one streamed export of `games` games."""
    began = time.perf_counter()
    received = 0
    lines = 0
    marker = b"[Event " if "pdn" in accept else b"\n"
    tail = b""  # the end of the previous chunk, in case a marker straddles two chunks
    async with client.stream(
        "GET", "/api/games/export", params={"max": games}, headers={"Accept": accept}
    ) as response:
        async for chunk in response.aiter_bytes():
            received += len(chunk)
            data = tail + chunk
            lines += data.count(marker)
            tail = data[-(len(marker) - 1) :] if len(marker) > 1 else b""
    elapsed = time.perf_counter() - began
    if lines != games:
        raise RuntimeError(f"export returned {lines} games, expected {games}")
    return games / elapsed, received / elapsed / 1e6


async def public_ids_with_moves(url: str, count: int, rng: random.Random) -> list[int]:
    """Ids of public games that have their moves, for the PDN requests."""
    conn = await asyncpg.connect(dsn(url))
    try:
        first = await conn.fetchval("SELECT game_id FROM moves ORDER BY game_id LIMIT 1")
        last = await conn.fetchval("SELECT max(id) FROM games")
        drawn = [rng.randint(first, last) for _ in range(count * 2)]
        rows = await conn.fetch(
            "SELECT id FROM games WHERE id = ANY($1) AND NOT is_private", list(set(drawn))
        )
    finally:
        await conn.close()
    public = {row["id"] for row in rows}
    return [game_id for game_id in drawn if game_id in public][:count]


async def measure(url: str, games: int, players: int, samples: int, export_games: int) -> None:
    rng = random.Random(7)
    pdn_ids = await public_ids_with_moves(url, samples, rng)
    port = free_port()
    server = start_server(url, port)
    table = Table(title=f"archive at {games:,} games (HTTP, one client, sequential)")
    for column in ("measurement", "requests", "p50 ms", "p99 ms"):
        table.add_column(column, justify="right" if column != "measurement" else "left")
    try:
        base = f"http://127.0.0.1:{port}"
        async with httpx.AsyncClient(base_url=base, timeout=600) as client:
            await wait_ready(client)
            names = [f"player{rng.randint(1, players):05d}" for _ in range(samples)]
            busiest = "player00001"
            cases: list[tuple[str, list[str]]] = [
                ("history page, random player", [f"/api/players/{n}/games" for n in names]),
                (
                    "history page, random player, count=false",
                    [f"/api/players/{n}/games?count=false" for n in names],
                ),
                ("history page, busiest player", [f"/api/players/{busiest}/games"] * samples),
                (
                    "history page, busiest player, count=false",
                    [f"/api/players/{busiest}/games?count=false"] * samples,
                ),
                (
                    "history page 2, random player",
                    [f"/api/players/{n}/games?count=false" for n in names],
                ),
                (
                    "search variant=pool&result=1-0&min_plies=60",
                    ["/api/games?variant=pool&result=1-0&min_plies=60"] * (samples // 5),
                ),
                (
                    "search (as above), count=false",
                    ["/api/games?variant=pool&result=1-0&min_plies=60&count=false"]
                    * (samples // 5),
                ),
                (
                    "one game's PDN",
                    [f"/api/games/{game_id}.pdn" for game_id in pdn_ids],
                ),
                ("player profile", [f"/api/players/{n}" for n in names[: samples // 5]]),
            ]
            for label, paths in cases:
                if label.startswith("history page 2"):
                    paths = [await _second_page(client, p) for p in paths]
                await timed(paths[:20], client.get)  # warm the cache and the connection
                p50, p99 = percentiles(await timed(paths, client.get))
                table.add_row(label, str(len(paths)), f"{p50:.1f}", f"{p99:.1f}")
            console.print(table)
            for accept in ("application/x-pdn", "application/x-ndjson"):
                rate, mbps = await export_rate(client, accept, min(export_games, games))
                console.print(
                    f"bulk export {accept}: {min(export_games, games):,} games, "
                    f"{rate:,.0f} games/s, {mbps:.1f} MB/s"
                )
    finally:
        server.terminate()
        server.wait(timeout=30)


async def _second_page(client: httpx.AsyncClient, path: str) -> str:
    first = (await client.get(path)).json()
    cursor = first["next_cursor"]
    return path if cursor is None else f"{path}&cursor={cursor}"


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_database_option(parser, "checkers_bench")
    parser.add_argument("--games", type=int, default=1_000_000)
    parser.add_argument("--players", type=int, default=10_000)
    parser.add_argument("--pool", type=int, default=3_000, help="distinct generated move lists")
    parser.add_argument("--samples", type=int, default=500, help="requests per measurement")
    parser.add_argument("--export-games", type=int, default=100_000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument(
        "--moves-fraction", type=float, default=1.0, help="the newest games with moves"
    )
    parser.add_argument("--skip-load", action="store_true", help="reuse the loaded database")
    parser.add_argument("--load-only", action="store_true", help="load, measure later")
    args = parser.parse_args()
    if not args.skip_load:
        await recreate_database(args.database_url)
        seconds = await load(
            args.database_url, args.games, args.players, args.pool, args.seed, args.moves_fraction
        )
        console.print(f"loaded {args.games:,} games in {seconds:.0f} s")
    if args.load_only:
        return
    await measure(args.database_url, args.games, args.players, args.samples, args.export_games)


if __name__ == "__main__":
    asyncio.run(main())
