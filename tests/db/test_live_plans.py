"""The query plans of live play and of the periodic work on PostgreSQL: every statement is
served by indexes at a production-like size.

A database of 200,000 accounts with as many live tokens, 200,000 finished games (moves and
table events for the newest), 50,000 closed and 2,000 open tables, presence, attendance,
ratings, challenges, seeks, 20,000 finished tournaments and rate-limit counters is analysed.
Then each named query of the storage modules that live play and the sweeps use (moves, seats,
the sweep, heartbeats, presence, token and ban checks, pairing, challenges, the computer's
survey, lobby reads) is run once, its statements recorded and explained with the same
parameters, and the move writer's batch statement explained as it runs (a generic plan). No
plan may read a table that grows with the site by a sequential scan, nor walk a whole index of
one. A new function in those modules fails here until it is given a case (`CASES`), so a new
query without an index cannot slip in.
"""

from __future__ import annotations

import inspect
import json
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from datetime import UTC, datetime, timedelta
from types import ModuleType
from typing import Any

import asyncpg
import pytest
import pytest_asyncio
from sqlalchemy import event
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession

from app.accounts import addresses_store as addresses
from app.accounts import limits_store as limits
from app.accounts import store as accounts
from app.computer import store as ai
from app.db.engine import SERVER_SETTINGS, make_engine
from app.live import heartbeat_store as heartbeats
from app.live import log_store as table_log
from app.matchmaking import challenges_store as challenges
from app.matchmaking import seeks_store as seeks
from app.play import moves_store as moves
from app.play import store as games
from app.play import tables_store as tables
from app.ratings import store as ratings
from app.tables import attendance_store as attendance
from app.tables import presence_store as presence
from tests.conftest import _driver_url, postgres_database

ASYNC = pytest.mark.asyncio(loop_scope="module")

USERS = 200_000
FIRST = 1_000  # user ids FIRST … FIRST + USERS - 1, named 'player<id>'
CLOSED_TABLES = 50_000  # tables 1 … CLOSED_TABLES closed
OPEN_TABLES = 2_000  # the next ones open, the first half with a game in progress
GAMES = 200_000  # finished, at the closed tables; then one in progress per busy open table
LOGGED_TABLES = 20_000  # the newest closed tables and the open ones have 30 events each
INSTANCES = ("a1a1a1a1a1a1a1a1", "b2b2b2b2b2b2b2b2", "c3c3c3c3c3c3c3c3")
PLAYING = GAMES + 1  # the first game in progress (at table CLOSED_TABLES + 1)
OPEN = CLOSED_TABLES + 1  # the first open table
NOW = datetime(2026, 12, 5, 12, tzinfo=UTC)
# Tables that stay small whatever the site's size, read whole on purpose: the rooms, one
# heartbeat row per process, and the players waiting for pairing right now (the pools and
# their counts are the whole table; a few hundred rows).
SMALL = {"rooms", "server_heartbeats", "seeks"}
PLANNED = ("SELECT", "INSERT", "UPDATE", "DELETE", "WITH")  # what EXPLAIN takes

SEED = f"""
INSERT INTO users (id, name, kind, role, banned, created_at, last_seen_at, is_bot)
SELECT i, 'player' || i, CASE WHEN i % 3 = 0 THEN 'guest' ELSE 'registered' END, 'player',
       i % 997 = 0, timestamptz '2024-01-01', timestamptz '2026-12-01', i % 5000 = 0
FROM generate_series({FIRST}, {FIRST + USERS - 1}) AS i;

INSERT INTO auth_tokens (token_hash, user_id, created_at, expires_at)
SELECT md5(i::text) || md5((i + 1)::text), i, timestamptz '2026-11-01',
       timestamptz '2026-12-01' + (i % 60) * interval '1 day'
FROM generate_series({FIRST}, {FIRST + USERS - 1}) AS i;

INSERT INTO tables (id, room_id, owner_id, guest_id, variant, clock_base_s, clock_increment_s,
                    colour, is_private, invite_code, rated, status, created_at, closed_at,
                    event_seq)
SELECT t, (SELECT min(id) FROM rooms) + t % 3, {FIRST} + (t * 7919) % {USERS},
       CASE WHEN t > {CLOSED_TABLES} AND t <= {CLOSED_TABLES + OPEN_TABLES // 2}
            THEN {FIRST} + (t * 104729) % {USERS} END,
       'english', 300, 3, 'random', t % 50 = 0, CASE WHEN t % 50 = 0 THEN 'code' || t END,
       false, CASE WHEN t > {CLOSED_TABLES} THEN 'open' ELSE 'closed' END,
       timestamptz '2024-01-01' + t * interval '20 minutes',
       CASE WHEN t <= {CLOSED_TABLES}
            THEN timestamptz '2024-01-01' + t * interval '20 minutes' + interval '1 hour' END,
       CASE WHEN t > {CLOSED_TABLES + OPEN_TABLES - LOGGED_TABLES} THEN 30 ELSE 0 END
FROM generate_series(1::bigint, {CLOSED_TABLES + OPEN_TABLES}) AS t;

INSERT INTO games (id, variant, room_id, table_id, black_id, white_id, status, result,
                   termination, clock_base_s, clock_increment_s, black_clock_ms, white_clock_ms,
                   rated, ply_count, source, started_at, last_move_at, finished_at, deadline_at,
                   is_private, ai_driver)
SELECT g, 'english', (SELECT min(id) FROM rooms), 1 + g % {CLOSED_TABLES},
       {FIRST} + (g * 7919) % {USERS}, {FIRST} + (g * 104729) % {USERS}, 'finished', '1-0',
       'resignation', 300, 3, 100000, 100000, g % 2 = 0, 40, 'live',
       timestamptz '2024-01-01' + g * interval '5 minutes',
       timestamptz '2024-01-01' + g * interval '5 minutes' + interval '4 minutes',
       timestamptz '2024-01-01' + g * interval '5 minutes' + interval '4 minutes', NULL,
       false, NULL
FROM generate_series(1::bigint, {GAMES}) AS g;

INSERT INTO games (id, variant, room_id, table_id, black_id, white_id, status, result,
                   clock_base_s, clock_increment_s, black_clock_ms, white_clock_ms, rated,
                   ply_count, source, started_at, last_move_at, deadline_at, is_private,
                   ai_driver, ai_address)
SELECT {GAMES} + n, 'english', t.room_id, t.id, t.owner_id,
       CASE WHEN n % 100 = 0 THEN (SELECT min(id) FROM users WHERE kind = 'ai') ELSE t.guest_id END,
       'playing', '*', 300, 3, 200000, 200000, false, 30, 'live', timestamptz '2026-12-05 11:50',
       timestamptz '2026-12-05 11:59', timestamptz '2026-12-05 12:00' + (n % 300) * interval '1 s',
       t.is_private, CASE WHEN n % 100 = 0 THEN '{INSTANCES[0]}' END,
       CASE WHEN n % 100 = 0 THEN '10.0.0.' || (n % 7) END
FROM tables AS t, LATERAL (SELECT t.id - {CLOSED_TABLES} AS n) AS k
WHERE t.status = 'open' AND t.guest_id IS NOT NULL;

INSERT INTO moves (game_id, ply, move, clock_ms, played_at)
SELECT g, p, '11-15', 100000, timestamptz '2024-01-01' + g * interval '5 minutes'
FROM generate_series({GAMES - 4000}, {GAMES + OPEN_TABLES}) AS g, generate_series(1, 30) AS p
WHERE g IN (SELECT id FROM games);

INSERT INTO table_events (table_id, seq, kind, payload, at)
SELECT t, s, CASE WHEN s % 10 = 0 THEN 'chat' ELSE 'move' END,
       '{{"type":"move","table":' || t || ',"ply":' || s || '}}', timestamptz '2026-12-05'
FROM generate_series({CLOSED_TABLES + OPEN_TABLES - LOGGED_TABLES + 1},
                     {CLOSED_TABLES + OPEN_TABLES}) AS t,
     generate_series(1, 30) AS s;

INSERT INTO server_heartbeats (instance, beat_at, stopped, connections, connected_users,
                               moves_last_minute)
SELECT i, timestamptz '{NOW.isoformat()}', false, 100, 100, 1000
FROM unnest(ARRAY{list(INSTANCES)}) AS i;

INSERT INTO presence (instance, user_id, since)
SELECT (ARRAY{list(INSTANCES)})[1 + i % 3], {FIRST} + (i * 7919) % {USERS}, timestamptz '2026-12-05'
FROM generate_series(1::bigint, 20000) AS i
ON CONFLICT DO NOTHING;

INSERT INTO attendance (table_id, user_id, instance, until)
SELECT t.id, t.owner_id, '{INSTANCES[0]}', CASE WHEN t.id % 2 = 0 THEN timestamptz '2026-12-05' END
FROM tables AS t WHERE t.status = 'open';

INSERT INTO ratings (user_id, variant, category, rating, rd, volatility, games, last_game_at)
SELECT i, v, 'blitz', 1500 + (i % 700), 50 + i % 200, 0.06, 10, timestamptz '2026-11-01'
FROM generate_series({FIRST}, {FIRST + USERS - 1}) AS i, unnest(ARRAY['english', 'pool']) AS v;

INSERT INTO rating_changes (game_id, user_id, variant, category, rating_before, rd_before,
                            rating_after, rd_after, volatility_after, at)
SELECT g.id, p, 'english', 'blitz', 1500, 60, 1510, 58, 0.06, g.finished_at
FROM games AS g, LATERAL (VALUES (g.black_id), (g.white_id)) AS x(p)
WHERE g.rated AND g.status = 'finished'
ON CONFLICT DO NOTHING;

INSERT INTO challenges (challenger_id, dest_id, variant, clock_base_s, clock_increment_s,
                        colour, rated, status, created_at, expires_at)
SELECT {FIRST} + (i * 7919) % {USERS}, {FIRST} + (i * 104729) % {USERS}, 'english', 300, 3,
       'random', false, CASE WHEN i % 100 = 0 THEN 'created' ELSE 'declined' END,
       timestamptz '2026-12-05' - (i % 1000) * interval '1 minute',
       timestamptz '2026-12-05 12:05' - (i % 1000) * interval '1 minute'
FROM generate_series(1::bigint, 100000) AS i;

INSERT INTO seeks (user_id, pool, rated, rating, instance, created_at)
SELECT {FIRST} + (i * 7919) % {USERS}, 'english-' || (i % 6), i % 2 = 0, 1500, '{INSTANCES[0]}',
       timestamptz '2026-12-05 11:59'
FROM generate_series(1, 3000) AS i;

INSERT INTO rate_limits (key, hits, at, expires_at)
SELECT 'login-address:10.0.' || (i / 256) || '.' || (i % 256), 1, timestamptz '2026-12-05',
       timestamptz '{NOW.isoformat()}' + (i % 100 - 1) * interval '1 minute'
FROM generate_series(1, 100000) AS i;

INSERT INTO account_addresses (user_id, address, first_seen, last_seen)
SELECT {FIRST} + i % {USERS}, '10.1.' || (i / 256 % 256) || '.' || (i % 256),
       timestamptz '2026-11-01', timestamptz '2026-12-01'
FROM generate_series(1, 200000) AS i
ON CONFLICT DO NOTHING;

INSERT INTO rating_reviews (user_id, variant, category, reason, created_at, resolved_at)
SELECT {FIRST} + (i * 7919) % {USERS}, 'english', 'blitz', 'rose', timestamptz '2026-11-01',
       CASE WHEN i % 10 > 0 THEN timestamptz '2026-11-02' END
FROM generate_series(1::bigint, 20000) AS i;

INSERT INTO tournaments (id, kind, name, variant, clock_base_s, clock_increment_s, rated, ballot,
                         status, starts_at, double, draw_after_move, round, created_at, reminded)
SELECT i, 'arena', 'cup ' || i, 'english', 180, 2, true, 'gayp', 'finished',
       timestamptz '2025-01-01' + i * interval '1 hour', false, 0, 0, timestamptz '2025-01-01',
       true
FROM generate_series(1, 20000) AS i;

SELECT setval('users_id_seq', {FIRST + USERS});
SELECT setval('tournaments_id_seq', 20000);
SELECT setval('games_id_seq', {GAMES + OPEN_TABLES + 1});
SELECT setval('tables_id_seq', {CLOSED_TABLES + OPEN_TABLES});
"""

# The module seeds a production-sized database once (tens of seconds; minutes on a busy
# machine): the first test's set-up waits for it. One worker runs the whole module (the suite
# runs with `--dist loadfile`), so the seed is made once per run.
pytestmark = pytest.mark.timeout(900)


@pytest.fixture(scope="module")
def url() -> Iterator[str]:
    with postgres_database(migrated=True) as database_url:
        yield database_url


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def seeded(url: str) -> str:
    conn = await asyncpg.connect(_driver_url(url))
    try:
        await conn.execute(SEED)
        await conn.execute("VACUUM ANALYZE")
    finally:
        await conn.close()
    return url


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def engine(seeded: str) -> AsyncIterator[AsyncEngine]:
    made = make_engine(seeded)
    yield made
    await made.dispose()


Case = Callable[[AsyncSession], Awaitable[object]]
P, G, T = FIRST + 7, PLAYING + 3, OPEN + 3  # a player, a game in progress and its table
DAY = timedelta(days=1)
AI_USERS = [1, 2, 3, 4, 5, 6, 7, 8]


def move_commit(game_id: int = G, table_id: int = T) -> moves.MoveCommit:
    return moves.MoveCommit(
        game_id, table_id, 31, "11-15", NOW, ({"type": "move", "ply": 31},), 1000, 1000, 1000
    )


# Each query by its storage function; what the case calls is what live play calls.
CASES: dict[str, Case] = {
    # games
    "games.create": lambda s: games.create(
        s, variant="english", table_id=T, black_id=P, white_id=P + 1, is_private=False
    ),
    "games.load": lambda s: games.load(s, G),
    "games.tournament_of": lambda s: games.tournament_of(s, G),
    "games.get": lambda s: games.get(s, G),
    "games.since_ply": lambda s: _with_conn(s, lambda c: games.since_ply(c, G, 20)),
    "games.in_progress_turns": lambda s: _with_conn(s, games.in_progress_turns),
    "games.move_turns": lambda s: _with_conn(
        s, lambda c: games.move_turns(c, [{"game": G, "turn_started": NOW, "deadline": NOW}])
    ),
    "games.playing_for": lambda s: games.playing_for(s, P),
    "games.due": lambda s: games.due(s, NOW),
    "games.count_playing": lambda s: games.count_playing(s),
    "games.locked": lambda s: games.locked(s, G),
    "games.playing_at": lambda s: games.playing_at(s, [T, T + 1], P),
    "games.absences": lambda s: games.absences(s, P),
    "games.set_away": lambda s: games.set_away(s, G, True, NOW),
    "games.move_clocks": lambda s: games.move_clocks(s, G, 30),
    "games.take_back": lambda s: _take_back(s),
    # moves (the batch statement is explained apart, as prepared)
    "moves.write_each": lambda s: _with_conn(s, lambda c: _write_each(c)),
    "moves.write_one": lambda s: moves.write_one(s, move_commit()),
    "moves.confirm": lambda s: _with_conn(s, lambda c: _confirm(c)),
    # tables and their log
    "tables.read": lambda s: tables.read(s, T, lock=True),
    "tables.read_listed": lambda s: tables.read_listed(s, [1, 2, 3]),
    "tables.listed_rooms": lambda s: tables.listed_rooms(s),
    "tables.lock_host": lambda s: tables.lock_host(s, P),
    "tables.hosted": lambda s: tables.hosted(s, P),
    "tables.count_open": lambda s: tables.count_open(s, 1),
    "tables.open_ids": lambda s: tables.open_ids(s, 1),
    "tables.create": lambda s: tables.create(s, room_id=1, owner_id=P, variant="english"),
    "tables.get": lambda s: tables.get(s, T),
    "tables.locked": lambda s: tables.locked(s, T),
    "tables.locked_open_in_room": lambda s: tables.locked_open_in_room(s, 1),
    "tables.is_seated": lambda s: tables.is_seated(s, T, P),
    "tables.seat": lambda s: tables.seat(s, T, P, P + 1),
    "tables.ask_rematch": lambda s: tables.ask_rematch(s, T, [P]),
    "tables.hand_over": lambda s: tables.hand_over(s, T, P),
    "tables.close": lambda s: tables.close(s, T, NOW),
    "tables.seats_without_game": lambda s: tables.seats_without_game(s, [P, P + 1]),
    "tables.seats_without_game(all)": lambda s: tables.seats_without_game(s, None),
    "table_log.append": lambda s: table_log.append(s, T, [{"type": "chat", "text": "hi"}], NOW),
    "table_log.since": lambda s: table_log.since(s, T, 20, 100),
    "table_log.head": lambda s: table_log.head(s, T),
    "table_log.heads": lambda s: table_log.heads(s, range(T, T + 50)),
    "table_log.prune": lambda s: table_log.prune(s, NOW - timedelta(days=7)),
    "table_log.latest_of_kind": lambda s: table_log.latest_of_kind(s, T, "chat", 30, 50),
    # presence and attendance
    "presence.lock_user": lambda s: presence.lock_user(s, P),
    "presence.add": lambda s: presence.add(s, INSTANCES[0], P, NOW),
    "presence.users_at": lambda s: presence.users_at(s, INSTANCES[0]),
    "presence.remove": lambda s: presence.remove(s, INSTANCES[0], P),
    "presence.connected_to_any": lambda s: presence.connected_to_any(s, P, INSTANCES),
    "presence.online": lambda s: presence.online(s, range(P, P + 50), INSTANCES),
    "presence.set_last_seen": lambda s: presence.set_last_seen(s, P, NOW),
    "presence.last_seen": lambda s: presence.last_seen(s, range(P, P + 50)),
    "presence.instances": lambda s: presence.instances(s),
    "presence.users_of": lambda s: presence.users_of(s, [INSTANCES[2]]),
    "presence.banned_at": lambda s: presence.banned_at(s, INSTANCES[0]),
    "presence.seated_in_room": lambda s: presence.seated_in_room(s, 1, INSTANCES),
    "attendance.close": lambda s: attendance.close(s, T, P, INSTANCES[0], NOW),
    "attendance.open_": lambda s: attendance.open_(s, T, P, INSTANCES[0]),
    "attendance.of_seats": lambda s: attendance.of_seats(s, [(T, P), (T + 1, P + 1)]),
    "attendance.forget": lambda s: attendance.forget(s, T, P),
    # heartbeats
    "heartbeats.take_lock": lambda s: _with_conn(s, lambda c: heartbeats.take_lock(c, "a1a1a1a1")),
    "heartbeats.holds_lock": lambda s: _with_conn(
        s, lambda c: heartbeats.holds_lock(c, "b2b2b2b2")
    ),
    "heartbeats.write": lambda s: _with_conn(s, lambda c: heartbeats.write(c, INSTANCES[0], NOW)),
    "heartbeats.others": lambda s: _with_conn(s, lambda c: heartbeats.others(c, INSTANCES[0])),
    "heartbeats.of": lambda s: heartbeats.of(s, set(INSTANCES)),
    "heartbeats.fresh": lambda s: heartbeats.fresh(s, NOW - timedelta(seconds=15)),
    "heartbeats.others_load": lambda s: _with_conn(
        s, lambda c: heartbeats.others_load(c, INSTANCES[0], NOW - timedelta(seconds=15))
    ),
    # pairing
    "seeks.put": lambda s: seeks.put(s, P, "english-1", False, 1500.0, INSTANCES[0], NOW),
    "seeks.remove": lambda s: seeks.remove(s, FIRST + 5),
    "seeks.pools": lambda s: seeks.pools(s),
    "seeks.lock_pool": lambda s: seeks.lock_pool(s, "english-1"),
    "seeks.take": lambda s: seeks.take(s, [FIRST + 1, FIRST + 7]),
    "seeks.remove_dead": lambda s: seeks.remove_dead(s, INSTANCES),
    "seeks.waiting": lambda s: seeks.waiting(s),
    # challenges
    "challenges.create": lambda s: challenges.create(
        s, challenger_id=P, dest_id=P + 1, variant="english", expires_at=NOW
    ),
    "challenges.get": lambda s: challenges.get(s, 500),
    "challenges.answer": lambda s: challenges.answer(s, 500, NOW, "declined"),
    "challenges.waiting_for": lambda s: challenges.waiting_for(s, P, NOW),
    "challenges.count_waiting_by": lambda s: challenges.count_waiting_by(s, P, NOW),
    # the computer's survey and its limits
    "ai.players": lambda s: ai.players(s),
    "ai.drivers": lambda s: ai.drivers(s, AI_USERS),
    "ai.claim": lambda s: ai.claim(s, G, INSTANCES[1], INSTANCES[0]),
    "ai.lock_address": lambda s: ai.lock_address(s, "10.0.0.1"),
    "ai.playing_against": lambda s: ai.playing_against(s, P, AI_USERS),
    "ai.playing_from": lambda s: ai.playing_from(s, "10.0.0.1"),
    "ai.forget_addresses": lambda s: ai.forget_addresses(s),
    # accounts: guests, tokens and bans
    "accounts.find_user": lambda s: accounts.find_user(s, "guest-7f3a2c"),
    "accounts.kind_of": lambda s: accounts.kind_of(s, P),
    "accounts.lock_user": lambda s: accounts.lock_user(s, P),
    "accounts.user_by_token": lambda s: accounts.user_by_token(s, "ab" * 32, NOW),
    "accounts.token_expiries": lambda s: accounts.token_expiries(s, ["ab" * 32, "cd" * 32]),
    "accounts.delete_token": lambda s: accounts.delete_token(s, "ab" * 32),
    "accounts.delete_expired_tokens": lambda s: accounts.delete_expired_tokens(s, P, NOW),
    "accounts.delete_tokens_of": lambda s: accounts.delete_tokens_of(s, P),
    "accounts.is_bot": lambda s: accounts.is_bot(s, P),
    "accounts.bots_online": lambda s: accounts.bots_online(s, NOW, INSTANCES, 50),
    "accounts.has_games": lambda s: accounts.has_games(s, P),
    "accounts.set_takebacks": lambda s: accounts.set_takebacks(s, P, False),
    "accounts.takeback_refusers": lambda s: accounts.takeback_refusers(s, [P, P + 1]),
    "limits.lock": lambda s: limits.lock(s, ["guest:10.0.0.1"], NOW),
    "limits.prune": lambda s: limits.prune(s, NOW),
    "addresses.note": lambda s: addresses.note(s, P, "10.1.0.1", NOW),
    "addresses.shared_since": lambda s: addresses.shared_since(s, P, P + 1, NOW),
    # ratings, written and read with every rated game
    "ratings.lock_pair": lambda s: ratings.lock_pair(s, (P, P + 1), "english", "blitz"),
    "ratings.already_rated": lambda s: ratings.already_rated(s, 10),
    "ratings.changes_of_game": lambda s: ratings.changes_of_game(s, 10),
    "ratings.of_user": lambda s: ratings.of_user(s, P),
    "ratings.pair_rated_since": lambda s: ratings.pair_rated_since(s, P, P + 1, NOW),
    "ratings.met_since": lambda s: ratings.met_since(s, P, P + 1, NOW - DAY, NOW - 30 * DAY),
    "ratings.met_since(players only)": lambda s: ratings.met_since(s, P, P + 1, NOW - DAY, None),
    "ratings.linked_gain_since": lambda s: ratings.linked_gain_since(
        s, P, "english", "blitz", NOW - DAY
    ),
    "ratings.recent": lambda s: ratings.recent(s, P, "english", "blitz", NOW - 7 * DAY, NOW - DAY),
    "ratings.rating_of": lambda s: ratings.rating_of(s, P, "english", "blitz"),
    "ratings.open_review": lambda s: ratings.open_review(s, P, "english", "blitz"),
}

# The modules whose every query live play or the periodic work runs; functions run no query,
# or none of live play, as said.
LIVE_MODULES: dict[str, ModuleType] = {
    "games": games,
    "moves": moves,
    "tables": tables,
    "table_log": table_log,
    "presence": presence,
    "heartbeats": heartbeats,
    "attendance": attendance,
    "seeks": seeks,
    "challenges": challenges,
    "ai": ai,
}
NOT_QUERIES = {
    "attendance.add_closed": "an insert by primary key",
    "games.in_progress": "reads a row in hand",
    "games.end": "writes the row in hand (the ORM's update by primary key)",
    "games.offer_draw": "changes the row in hand",
    "games.withdraw_offer": "changes the row in hand",
    "games.ask_takeback": "changes the row in hand",
    "moves.prepare_batch": "prepares the batch statement, explained apart",
    "moves.write_batch": "runs the batch statement, explained apart",
    "moves.ping_driver": "SELECT 1",
    "tables.rating_in_table_category": "a join condition, part of `read`",
    "table_log.encode": "JSON text",
    "table_log.numbered": "numbers events in hand",
    "table_log.append_ctes": "SQL text, planned within `append` and the move batch",
    "heartbeats.lock_key": "arithmetic",
    "heartbeats.lock": "LOCK TABLE of the small heartbeats table: nothing to plan",
}


async def _with_conn(s: AsyncSession, call: Callable[[Any], Awaitable[object]]) -> object:
    return await call(await s.connection())


async def _write_each(conn: Any) -> object:
    # `write_each` begins its own transaction: run it on a connection of its own.
    async with conn.engine.connect() as own:
        try:
            return await moves.write_each(own, [move_commit()])
        finally:
            await own.rollback()


async def _take_back(session: Any) -> None:
    row = await games.locked(session, G)
    assert row is not None and row.ply_count > 0
    await games.take_back(session, row, row.ply_count - 1, NOW, None, None)


async def _confirm(conn: Any) -> object:
    async with conn.engine.connect() as own:
        try:
            return await moves.confirm(own, [move_commit()], [None])
        finally:
            await own.rollback()


def test_every_query_of_the_live_modules_has_a_case() -> None:
    named = set(CASES) | set(NOT_QUERIES)
    missing = [
        f"{alias}.{name}"
        for alias, module in LIVE_MODULES.items()
        for name, function in vars(module).items()
        if inspect.isfunction(function)
        and function.__module__ == module.__name__
        and not name.startswith("_")
    ]
    assert [name for name in missing if name not in named] == []


async def connect(url: str) -> asyncpg.Connection:
    """A connection that plans as the server's do."""
    return await asyncpg.connect(_driver_url(url), server_settings=SERVER_SETTINGS)


def problems_of(plan: dict[str, Any], big: set[str], partial: set[str]) -> Iterator[str]:
    """What reads a big table whole: a sequential scan, or an index walked without a
    condition on it (a full index scan; a partial index holds only the rows its predicate
    names)."""
    kind, relation, index = plan["Node Type"], plan.get("Relation Name"), plan.get("Index Name")
    if relation in big:
        if kind == "Seq Scan":
            yield f"sequential scan of {relation}"
        elif kind.endswith("Index Scan") and "Index Cond" not in plan and index not in partial:
            yield f"whole index {index} of {relation}"
    for child in plan.get("Plans", []):
        yield from problems_of(child, big, partial)


async def explain(conn: asyncpg.Connection, statement: str, parameters: Any) -> dict[str, Any]:
    text = await conn.fetchval(f"EXPLAIN (FORMAT JSON) {statement}", *(parameters or ()))
    plan: dict[str, Any] = json.loads(text)[0]["Plan"]
    return plan


async def big_tables(conn: asyncpg.Connection) -> tuple[set[str], set[str]]:
    """The tables that grow with the site, and the partial indexes."""
    rows = await conn.fetch("SELECT relname FROM pg_stat_user_tables")
    partial = await conn.fetch(
        "SELECT indexrelid::regclass::text AS name FROM pg_index WHERE indpred IS NOT NULL"
    )
    return {row["relname"] for row in rows} - SMALL, {row["name"] for row in partial}


@ASYNC
@pytest.mark.parametrize("name", list(CASES))
async def test_the_query_is_served_by_indexes(name: str, seeded: str, engine: AsyncEngine) -> None:
    recorded: list[tuple[str, Any]] = []

    def record(
        conn: Any, cursor: Any, statement: str, parameters: Any, context: Any, executemany: bool
    ) -> None:
        recorded.append((statement, parameters[0] if executemany else parameters))

    event.listen(engine.sync_engine, "before_cursor_execute", record)
    try:
        async with AsyncSession(engine, expire_on_commit=False) as session:
            try:
                await CASES[name](session)
                await session.flush()
            finally:
                await session.rollback()
    finally:
        event.remove(engine.sync_engine, "before_cursor_execute", record)
    statements = [(s, p) for s, p in recorded if s.lstrip().upper().startswith(PLANNED)]
    assert statements, name
    conn = await connect(seeded)
    try:
        big, partial = await big_tables(conn)
        found = []
        for statement, parameters in statements:
            plan = await explain(conn, statement, parameters)
            for problem in problems_of(plan, big, partial):
                found.append(f"{problem}\n{statement}\n{json.dumps(plan, indent=1)[:4000]}")
    finally:
        await conn.close()
    assert not found, "\n\n".join(found)


@ASYNC
async def batch_plan(conn: asyncpg.Connection) -> dict[str, Any]:
    """The writer's statement as it runs: prepared with a generic plan."""
    await conn.execute(moves.WRITER_SETTINGS)
    await conn.execute(f"PREPARE batch AS {moves._BATCH_SQL}")
    args = ", ".join(
        ["ARRAY[1]::BIGINT[]", "ARRAY[1]::BIGINT[]", "ARRAY[1]", "ARRAY['a']", "ARRAY[1]"]
        + ["ARRAY[now()]", "ARRAY[1]", "ARRAY[1]", "ARRAY['a']", "ARRAY['a']", "ARRAY['a']"]
        + ["ARRAY[now()]", "ARRAY[1]", "ARRAY[1]::BIGINT[]", "ARRAY[1]", "ARRAY['a']"]
        + ["ARRAY['a']"]
    )
    text = await conn.fetchval(f"EXPLAIN (FORMAT JSON) EXECUTE batch({args})")
    plan: dict[str, Any] = json.loads(text)[0]["Plan"]
    return plan


def reads_of(plan: dict[str, Any], relation: str) -> Iterator[dict[str, Any]]:
    if plan.get("Relation Name") == relation and "Scan" in plan["Node Type"]:
        yield plan
    for child in plan.get("Plans", []):
        yield from reads_of(child, relation)


@ASYNC
async def test_the_move_batch_finds_games_by_id_on_a_fresh_database() -> None:
    """Planned while `games` is empty (a new install, a benchmark's database, statistics never
    refreshed), the batch still finds each game by its id: the plan made on the code before
    read every game in progress through `ix_games_status` for every batch, whose cost grew with
    each game played (PostgreSQL's CPU per move rising during a run)."""
    with postgres_database(migrated=True) as url:
        conn = await connect(url)
        try:
            await conn.execute("ANALYZE")
            plan = await batch_plan(conn)
        finally:
            await conn.close()
    reads = list(reads_of(plan, "games"))
    assert reads and all(r.get("Index Name") == "pk_games" for r in reads), reads
    assert all("id = ANY" in r.get("Index Cond", "") for r in reads), reads


@ASYNC
async def test_the_move_batch_is_served_by_indexes(seeded: str) -> None:
    """The writer's statement as it runs: prepared once with a generic plan."""
    conn = await connect(seeded)
    try:
        plan = await batch_plan(conn)
        found = list(problems_of(plan, *await big_tables(conn)))
    finally:
        await conn.close()
    assert not found, json.dumps(plan, indent=1)


@ASYNC
async def test_the_check_catches_a_query_that_reads_a_whole_table(seeded: str) -> None:
    conn = await connect(seeded)
    try:
        big, partial = await big_tables(conn)
        plan = await explain(conn, "SELECT id FROM users WHERE last_seen_at > $1", [NOW])
        assert list(problems_of(plan, big, partial)) == ["sequential scan of users"]
        plan = await explain(conn, "SELECT id FROM users WHERE id = $1", [P])
        assert list(problems_of(plan, big, partial)) == []
    finally:
        await conn.close()
