"""A production-sized database for the live-play benchmarks, loaded in minutes.

    .venv/bin/python bench/proddb.py                          # 1M accounts, 2M games (default)
    .venv/bin/python bench/proddb.py --accounts 10000 --games 20000 --open-tables 100  # a check
    .venv/bin/python bench/proddb.py --accounts 0 --database-url …/checkers_bench_empty  # empty
    .venv/bin/python bench/play.py --database checkers_bench_prod ...   # then play beside it

It recreates the database (`checkers_bench_prod` by default) by the migrations and fills it:
ACCOUNTS accounts (one in a thousand banned, a third of them guests) each with a live token;
GAMES finished games over the last two years, two per table, with their moves (random legal
playouts of 30-120 plies by the rules engine, a pool of a few thousand reused), their ratings
and rating changes (three in five rated); OPEN_TABLES open tables, each with an untimed game
in progress (so no clock runs out while a benchmark plays beside them). Each table's events
(game started, each move as the live server writes it, game ended) are kept for the tables
closed within the log's retention period and for the open ones; the older tables' logs are
noted pruned, as `app.live.retention` leaves them (`--all-events` keeps every event).

Players, tokens, tables and games go in by COPY from here; the moves and the events, a
hundred million rows, are expanded in the database from the copied pool (one INSERT … SELECT
each), which is what makes the load take minutes rather than an hour.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import random
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import asyncpg

sys.path.insert(0, str(Path(__file__).resolve().parent))

from archive import PoolGame, ZipfPlayers, build_pool  # noqa: E402
from benchdb import dsn, recreate_database  # noqa: E402

from app.rules import Game  # noqa: E402

GAMES_PER_TABLE = 2
FIRST_USER = 1_000  # account ids FIRST_USER …; the computer's levels come first
ROOMS = (1, 2, 3)  # the rooms the migrations make
SPAN = timedelta(days=730)


def say(text: str, began: float) -> None:
    print(f"{time.perf_counter() - began:7.1f} s  {text}", flush=True)


def pool_rows(pool: list[tuple[PoolGame, int | None, int]]) -> list[tuple[Any, ...]]:
    """Each ply of each pool game: (pool, ply, move, clock_ms, offset_ms, the tail of its move
    event: what follows the table and game ids, as the live server writes it)."""
    rows = []
    for index, (entry, _base, _inc) in enumerate(pool):
        game = Game(entry.variant)
        for ply, move, clock_ms, offset in entry.plies:
            game.play(move)
            position = game.position
            tail = json.dumps(
                {
                    "ply": ply,
                    "move": move,
                    "fen": position.fen(),
                    "turn": position.turn.value,
                    "clocks": None,
                    "legal_moves": [str(m) for m in position.legal_moves()],
                    "at": 1764892800000.0 + offset.total_seconds() * 1000,
                    "first_move_deadline": None,
                },
                separators=(",", ":"),
            )[1:]
            offset_ms = int(offset.total_seconds() * 1000)
            rows.append((index, ply, move, clock_ms, offset_ms, tail))
    return rows


async def load(args: argparse.Namespace) -> None:
    began = time.perf_counter()
    rng = random.Random(args.seed)
    await recreate_database(args.database_url, migrate=True)
    say("database migrated", began)
    pool = build_pool(rng, args.pool)
    plies = pool_rows(pool)
    say(f"{len(pool):,} playouts, {len(plies):,} plies", began)
    conn = await asyncpg.connect(dsn(args.database_url))
    try:
        # The rows are consistent by construction: no foreign-key check per row (a lookup of
        # the game for each of a hundred million moves), no waiting for each commit's flush.
        await conn.execute("SET session_replication_role = replica")
        await conn.execute("SET synchronous_commit = off")
        await conn.execute(
            "CREATE UNLOGGED TABLE seed_pool (pool INT, ply INT, move TEXT, clock_ms INT,"
            " offset_ms BIGINT, tail TEXT);"
            "CREATE UNLOGGED TABLE seed_games (game_id BIGINT, table_id BIGINT, pool INT,"
            " plies INT, started_at TIMESTAMPTZ, seq_base INT, logged BOOLEAN, ended BOOLEAN)"
        )
        await conn.copy_records_to_table("seed_pool", records=plies)
        await conn.execute("CREATE INDEX ON seed_pool (pool, ply)")
        await load_accounts(conn, args, began)
        await load_games(conn, rng, pool, args, began)
        await expand(conn, began)
        await conn.execute("DROP TABLE seed_pool; DROP TABLE seed_games")
        await conn.execute(
            "SELECT setval('users_id_seq', (SELECT max(id) FROM users));"
            "SELECT setval('auth_tokens_id_seq', (SELECT max(id) FROM auth_tokens));"
            "SELECT setval('tables_id_seq', (SELECT max(id) FROM tables));"
            "SELECT setval('games_id_seq', (SELECT max(id) FROM games));"
        )
        await conn.execute("VACUUM ANALYZE")
        say("vacuumed and analysed", began)
        sizes = await conn.fetch(
            "SELECT relname, n_live_tup, pg_size_pretty(pg_total_relation_size(relid)) AS size"
            " FROM pg_stat_user_tables ORDER BY pg_total_relation_size(relid) DESC LIMIT 10"
        )
        for row in sizes:
            print(f"    {row['relname']:<16} {row['n_live_tup']:>13,} rows  {row['size']}")
    finally:
        await conn.close()


async def load_accounts(conn: asyncpg.Connection, args: argparse.Namespace, began: float) -> None:
    created = datetime(2024, 1, 1, tzinfo=UTC)
    now = datetime.now(UTC)
    last = FIRST_USER + args.accounts
    await conn.copy_records_to_table(
        "users",
        columns=["id", "name", "kind", "role", "banned", "created_at", "last_seen_at", "is_bot"],
        records=(
            (
                i,
                f"user{i:07d}",
                "guest" if i % 3 == 0 else "registered",
                "player",
                i % 1000 == 0,
                created,
                now - timedelta(hours=i % 2000),
                False,
            )
            for i in range(FIRST_USER, last)
        ),
    )
    await conn.copy_records_to_table(
        "auth_tokens",
        columns=["id", "token_hash", "user_id", "created_at", "expires_at"],
        records=(
            (
                i,
                hashlib.sha256(f"token-{i}".encode()).hexdigest(),
                i,
                now - timedelta(days=1),
                now + timedelta(days=1 + i % 29),
            )
            for i in range(FIRST_USER, last)
        ),
    )
    say(f"{args.accounts:,} accounts and tokens", began)


async def load_games(
    conn: asyncpg.Connection,
    rng: random.Random,
    pool: list[tuple[PoolGame, int | None, int]],
    args: argparse.Namespace,
    began: float,
) -> None:
    """The finished games two per closed table, then the open tables with a game each."""
    if not args.accounts:  # an empty database, to compare with (the migrations' rows only)
        return
    zipf = ZipfPlayers(rng, args.accounts)
    now = datetime.now(UTC)
    start = now - SPAN
    kept_after = now - timedelta(days=args.retention_days)
    step = SPAN / max(args.games, 1)
    closed = (args.games + GAMES_PER_TABLE - 1) // GAMES_PER_TABLE
    chunk = 50_000 * GAMES_PER_TABLE
    for first in range(1, args.games + 1, chunk):
        games, seeds, tables = [], [], []
        for table_id in range((first - 1) // GAMES_PER_TABLE + 1, closed + 1):
            first_game = (table_id - 1) * GAMES_PER_TABLE + 1
            if first_game >= first + chunk:
                break
            black, white = (p + FIRST_USER - 1 for p in zipf.pair())
            seq = 0
            finished = start
            table_games = []
            for n, game_id in enumerate(range(first_game, first_game + GAMES_PER_TABLE)):
                if game_id > args.games:
                    break
                index = rng.randrange(len(pool))
                entry, base_s, inc_s = pool[index]
                started = start + step * game_id
                finished = started + entry.duration
                players = (black, white) if n % 2 == 0 else (white, black)
                rated = rng.random() < 0.6
                games.append(
                    finished_game(game_id, table_id, entry, base_s, inc_s, players, rated)
                    + (started, started + entry.plies[-1][3], finished)
                )
                table_games.append((game_id, index, len(entry.plies), started, seq))
                seq += len(entry.plies) + 2  # started, the moves, ended
            logged = args.all_events or finished >= kept_after
            seeds += [(g, table_id, i, n, s, b, logged, True) for g, i, n, s, b in table_games]
            tables.append(
                (table_id, ROOMS[table_id % 3], black, white, "english", None, 0, "random")
                + (False, None, False, "closed", start + step * first_game, finished, seq)
                + (not logged,)
            )
        await copy_chunk(conn, tables, games, seeds)
        say(f"{min(first + chunk - 1, args.games):,} finished games copied", began)
    await open_tables(conn, rng, pool, zipf, closed, args, now)
    say(f"{args.open_tables:,} open tables with a game in progress", began)


TABLE_COLUMNS = ["id", "room_id", "owner_id", "guest_id", "variant", "clock_base_s"]
TABLE_COLUMNS += ["clock_increment_s", "colour", "is_private", "invite_code", "rated", "status"]
TABLE_COLUMNS += ["created_at", "closed_at", "event_seq", "log_pruned"]
GAME_COLUMNS = ["id", "variant", "room_id", "table_id", "black_id", "white_id", "status"]
GAME_COLUMNS += ["result", "termination", "clock_base_s", "clock_increment_s", "black_clock_ms"]
GAME_COLUMNS += ["white_clock_ms", "rated", "ply_count", "source", "is_private"]
GAME_COLUMNS += ["started_at", "last_move_at", "finished_at"]


def finished_game(
    game_id: int,
    table_id: int,
    entry: PoolGame,
    base_s: int | None,
    inc_s: int,
    players: tuple[int, int],
    rated: bool,
) -> tuple[Any, ...]:
    return (
        (game_id, entry.variant, ROOMS[table_id % 3], table_id, *players, "finished")
        + (entry.result, entry.termination, base_s, inc_s, entry.clocks[0], entry.clocks[1])
        + (rated, len(entry.plies), "live", False)
    )


async def copy_chunk(
    conn: asyncpg.Connection,
    tables: list[tuple[Any, ...]],
    games: list[tuple[Any, ...]],
    seeds: list[tuple[Any, ...]],
) -> None:
    await conn.copy_records_to_table("tables", columns=TABLE_COLUMNS, records=tables)
    await conn.copy_records_to_table("games", columns=GAME_COLUMNS, records=games)
    await conn.copy_records_to_table("seed_games", records=seeds)


async def open_tables(
    conn: asyncpg.Connection,
    rng: random.Random,
    pool: list[tuple[PoolGame, int | None, int]],
    zipf: ZipfPlayers,
    closed: int,
    args: argparse.Namespace,
    now: datetime,
) -> None:
    """Open tables, each with an untimed game in progress half-way through a playout."""
    tables, games, seeds = [], [], []
    for n in range(args.open_tables):
        table_id, game_id = closed + 1 + n, args.games + 1 + n
        black, white = (p + FIRST_USER - 1 for p in zipf.pair())
        index = rng.randrange(len(pool))
        entry = pool[index][0]
        played = len(entry.plies) // 2
        started = now - timedelta(minutes=10)
        tables.append(
            (table_id, ROOMS[n % 3], black, white, entry.variant, None, 0, "random", False)
            + (None, False, "open", started, None, played + 1, False)
        )
        games.append(
            (game_id, entry.variant, ROOMS[n % 3], table_id, black, white, "playing", "*")
            + (None, None, 0, None, None, False, played, "live", False)
            + (started, started + entry.plies[played - 1][3], None)
        )
        seeds.append((game_id, table_id, index, played, started, 0, True, False))
    if tables:
        await copy_chunk(conn, tables, games, seeds)


async def expand(conn: asyncpg.Connection, began: float) -> None:
    """The moves and the table events of the copied games, from the pool, in the database."""
    await conn.execute(
        """
        INSERT INTO moves (game_id, ply, move, clock_ms, played_at)
        SELECT g.game_id, p.ply, p.move, p.clock_ms,
               g.started_at + p.offset_ms * interval '1 millisecond'
        FROM seed_games AS g JOIN seed_pool AS p ON p.pool = g.pool AND p.ply <= g.plies
        """
    )
    say("moves", began)
    await conn.execute(
        """
        INSERT INTO table_events (table_id, seq, kind, payload, at)
        SELECT e.table_id, e.seq, e.kind, e.payload, e.at FROM (
            SELECT g.table_id, g.seq_base + 1 AS seq, 'game_started' AS kind,
                   '{"type":"game_started","table":' || g.table_id || ',"game":{"id":'
                   || g.game_id || '}}' AS payload, g.started_at AS at
            FROM seed_games AS g WHERE g.logged
            UNION ALL
            SELECT g.table_id, g.seq_base + 1 + p.ply, 'move',
                   '{"type":"move","table":' || g.table_id || ',"game":' || g.game_id || ','
                   || p.tail, g.started_at + p.offset_ms * interval '1 millisecond'
            FROM seed_games AS g JOIN seed_pool AS p ON p.pool = g.pool AND p.ply <= g.plies
            WHERE g.logged
            UNION ALL
            SELECT g.table_id, g.seq_base + g.plies + 2, 'game_ended',
                   '{"type":"game_ended","table":' || g.table_id || ',"game":' || g.game_id
                   || '}', g.started_at
            FROM seed_games AS g WHERE g.logged AND g.ended
        ) AS e
        ORDER BY e.table_id, e.seq
        """
    )
    say("table events", began)
    await conn.execute(
        """
        INSERT INTO rating_changes (game_id, user_id, variant, category, rating_before,
                                    rd_before, rating_after, rd_after, volatility_after, at)
        SELECT g.id, p.user_id, g.variant, 'blitz', 1500 + g.id % 300, 60,
               1500 + g.id % 300 + CASE WHEN p.black = (g.result = '1-0') THEN 8 ELSE -8 END,
               59, 0.06, g.finished_at
        FROM games AS g,
             LATERAL (VALUES (g.black_id, true), (g.white_id, false)) AS p(user_id, black)
        WHERE g.rated AND g.status = 'finished' AND g.black_id <> g.white_id
        """
    )
    await conn.execute(
        """
        INSERT INTO ratings (user_id, variant, category, rating, rd, volatility, games,
                             last_game_at)
        SELECT user_id, variant, category, 1500 + count(*) % 400, 45 + count(*) % 100, 0.06,
               count(*), max(at)
        FROM rating_changes GROUP BY user_id, variant, category
        """
    )
    say("ratings", began)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--database-url",
        default="postgresql+asyncpg://postgres@127.0.0.1:5432/checkers_bench_prod",
        help="a database this script may drop and recreate",
    )
    parser.add_argument("--accounts", type=int, default=1_000_000)
    parser.add_argument("--games", type=int, default=2_000_000)
    parser.add_argument("--open-tables", type=int, default=10_000)
    parser.add_argument("--pool", type=int, default=3_000, help="distinct generated move lists")
    parser.add_argument("--retention-days", type=float, default=7.0)
    parser.add_argument("--all-events", action="store_true", help="keep every table's events")
    parser.add_argument("--seed", type=int, default=1)
    asyncio.run(load(parser.parse_args()))


if __name__ == "__main__":
    main()
