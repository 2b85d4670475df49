"""The archive's query plans on PostgreSQL: every statement of every archive request is served
by indexes, whoever asks.

A database of 200,000 games (a busy player in a tenth of them, one in a hundred at a private
table, one in a hundred aborted before it began, which no listing shows, games against the
computer, moves for the newest) is analysed, then each request shape
(search and history pages with every filter, with and without the count, the export in both
formats, one game, its PDN, a player's profile) is sent as each kind of viewer: nobody, another
player, the player, an administrator. Every statement the requests ran is explained with the
same parameters: no plan may read `games` or `moves` by a sequential scan, nor sort rows of
them unless a limit bounds what reaches the sort (the merge of a page's index scans). A new
archive query without an index plan fails here.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from typing import Any

import asyncpg
import httpx
import pytest
import pytest_asyncio
from fastapi import FastAPI
from sqlalchemy import event

from app.accounts import service as accounts
from app.archive import counts_store as archive_counts
from app.db.engine import SERVER_SETTINGS
from app.main import create_app
from tests.conftest import _driver_url, make_settings, postgres_database
from tests.support.admin_client import ADMIN_NAME, ADMIN_PASSWORD, log_in

# The module seeds a production-sized database once (tens of seconds; minutes on a busy
# machine): the first test's set-up waits for it.
# One worker runs the whole module (`--dist loadfile`), so the seed is made once per run.
pytestmark = [pytest.mark.asyncio(loop_scope="module"), pytest.mark.timeout(900)]

GAMES = 200_000
PLAYERS = 2_000
FIRST_PLAYER = 1_000  # player ids FIRST_PLAYER … FIRST_PLAYER + PLAYERS - 1
BUSY = f"player{FIRST_PLAYER}"  # in a tenth of the games
WITH_MOVES = 5_000  # the newest finished games have moves
ARCHIVE_TABLES = {"games", "moves"}

SEED = f"""
INSERT INTO users (id, name, kind, role, banned, created_at)
SELECT i, 'player' || i, 'registered', 'player', false, now() - interval '3 years'
FROM generate_series({FIRST_PLAYER}, {FIRST_PLAYER + PLAYERS - 1}) AS i;

INSERT INTO tables (id, room_id, owner_id, variant, clock_increment_s, colour, is_private,
                    invite_code, rated, status, created_at, event_seq)
SELECT 100 + i, (SELECT min(id) FROM rooms), {FIRST_PLAYER} + i, 'english', 0, 'random', true,
       'invite-' || i, false, 'closed', now(), 0
FROM generate_series(1, 20) AS i;

WITH numbered AS (
    SELECT g,
           CASE WHEN g % 10 = 0 THEN {FIRST_PLAYER}
                ELSE {FIRST_PLAYER + 1} + (g * 7919) % {PLAYERS - 1} END AS black,
           CASE WHEN g % 50 = 1 THEN (SELECT min(id) FROM users WHERE kind = 'ai')
                ELSE {FIRST_PLAYER} + (g * 104729) % {PLAYERS} END AS white,
           g > {GAMES - 100} AS playing,
           g % 100 = 7 AND g <= {GAMES - 100} AS private,
           g % 100 = 20 AND g <= {GAMES - 100} AS aborted
    FROM generate_series(1::bigint, {GAMES}) AS g
)
INSERT INTO games (id, variant, room_id, table_id, black_id, white_id, status, result,
                   termination, clock_base_s, clock_increment_s, rated, ply_count, source,
                   started_at, last_move_at, finished_at, is_private, tags)
SELECT g,
       CASE WHEN g % 4 = 0 THEN 'pool' ELSE 'english' END,
       (SELECT min(id) FROM rooms) + g % 3,
       CASE WHEN private THEN 101 + g % 20 END,
       black, white,
       CASE WHEN playing THEN 'playing' WHEN aborted THEN 'aborted' ELSE 'finished' END,
       CASE WHEN playing OR aborted THEN '*'
            ELSE (ARRAY['1-0', '0-1', '1/2-1/2'])[1 + (g * 31) % 3] END,
       CASE WHEN playing THEN NULL WHEN aborted THEN 'aborted'
            ELSE (ARRAY['win', 'resignation', 'timeout', 'agreement', 'repetition'])
                 [1 + (g * 17) % 5] END,
       300, 3, (g * 11) % 5 < 3 AND NOT aborted,
       CASE WHEN aborted THEN 0 ELSE 30 + (g * 13) % 91 END, 'live',
       timestamptz '2024-01-01' + g * interval '5 minutes',
       timestamptz '2024-01-01' + g * interval '5 minutes' + interval '4 minutes',
       CASE WHEN playing THEN NULL
            ELSE timestamptz '2024-01-01' + g * interval '5 minutes' + interval '4 minutes' END,
       private, NULL
FROM numbered;

INSERT INTO moves (game_id, ply, move, clock_ms, played_at)
SELECT g, p, '11-15', 300000 - p * 1000, timestamptz '2024-01-01' + g * interval '5 minutes'
FROM generate_series({GAMES - WITH_MOVES + 1}, {GAMES - 100}) AS g, generate_series(1, 30) AS p;

SELECT setval('users_id_seq', {FIRST_PLAYER + PLAYERS});
SELECT setval('games_id_seq', {GAMES});
SELECT setval('tables_id_seq', 200);
"""


@dataclass
class Recorded:
    """The statements an app ran (with their parameters) since the last `take`."""

    statements: list[tuple[str, Any]] = field(default_factory=list)

    def take(self) -> list[tuple[str, Any]]:
        taken, self.statements = self.statements, []
        return taken


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
async def app(seeded: str) -> AsyncIterator[FastAPI]:
    application = create_app(make_settings(database_url=seeded))
    async with application.router.lifespan_context(application):
        yield application


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def client(app: FastAPI) -> AsyncIterator[httpx.AsyncClient]:
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as c:
        yield c


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def viewers(app: FastAPI, client: httpx.AsyncClient) -> dict[str, dict[str, str]]:
    """Request headers of each kind of viewer."""

    async def token_of(name: str, password: str) -> dict[str, str]:
        response = await log_in(client, name, password)
        assert response.status_code == 200, response.text
        return {"Authorization": f"Bearer {response.json()['access_token']}"}

    password = "a-long-passphrase-9"
    async with app.state.db.session() as session:
        await accounts.create_admin(session, ADMIN_NAME, ADMIN_PASSWORD)
        # Give the busy player and another player passwords, to sign in as them.
        for name in (BUSY, f"player{FIRST_PLAYER + 5}"):
            user = await accounts.find_user(session, name)
            assert user is not None
            user.password_hash = await accounts.hash_password(password)
        await session.commit()
    return {
        "anonymous": {},
        "another player": await token_of(f"player{FIRST_PLAYER + 5}", password),
        "the player": await token_of(BUSY, password),
        "administrator": await token_of(ADMIN_NAME, ADMIN_PASSWORD),
    }


@pytest.fixture(scope="module")
def recorded(app: FastAPI) -> Iterator[Recorded]:
    seen = Recorded()

    def record(conn: Any, cursor: Any, statement: str, parameters: Any, *args: Any) -> None:
        seen.statements.append((statement, parameters))

    engine = app.state.archive_db.engine.sync_engine
    event.listen(engine, "before_cursor_execute", record)
    yield seen
    event.remove(engine, "before_cursor_execute", record)


FILTERS: list[dict[str, str]] = [
    {},
    {"variant": "pool"},
    {"result": "1-0"},
    {"termination": "timeout"},
    {"room": "english-casual"},
    {"rated": "true"},
    {"rated": "false"},
    {"ai": "true"},
    {"ai": "false"},
    {"status": "playing"},
    {"since": "2025-01-01"},
    {"until": "2024-06-30"},
    {"since": "2024-03-01", "until": "2024-03-31"},
    {"min_plies": "60"},
    {"variant": "pool", "result": "1-0", "min_plies": "60"},
    {"order": "asc"},
]
PLAYER_FILTERS: list[dict[str, str]] = [
    *FILTERS,
    {"result": "win"},
    {"result": "draw"},
    {"colour": "white"},
    {"colour": "black", "result": "loss"},
    {"opponent": f"player{FIRST_PLAYER + 5}"},
]


def requests() -> list[tuple[str, dict[str, str]]]:
    """Every request shape: (path, query parameters)."""
    shapes: list[tuple[str, dict[str, str]]] = []
    for count in ("true", "false"):
        shapes += [("/api/games", {**f, "count": count}) for f in FILTERS]
        shapes += [(f"/api/players/{BUSY}/games", {**f, "count": count}) for f in PLAYER_FILTERS]
        shapes += [(f"/api/players/player{FIRST_PLAYER + 77}/games", {"count": count})]
    shapes += [
        ("/api/games/export", {"max": "1200", "format": fmt, **f})
        for fmt in ("pdn", "ndjson")
        for f in ({}, {"player": BUSY}, {"variant": "pool", "min_plies": "60"})
    ]
    shapes += [(f"/api/games/{GAMES - 150}", {}), (f"/api/games/{GAMES - 151}.pdn", {})]
    shapes += [(f"/api/players/{BUSY}", {}), (f"/api/players/player{FIRST_PLAYER + 77}", {})]
    return shapes


def scans_and_sorts(plan: dict[str, Any], limited: bool = False) -> Iterator[tuple[str, Any]]:
    """(problem, node) for each node of `plan` that reads an archive table without an index,
    or sorts such rows with no limit between the sort and the table."""
    kind = plan["Node Type"]
    if kind == "Seq Scan" and plan.get("Relation Name") in ARCHIVE_TABLES:
        yield "sequential scan", plan
    if kind in ("Sort", "Incremental Sort") and not limited and _reads_archive(plan):
        yield "sort", plan
    below_limit = limited and kind != "Sort" or kind == "Limit"
    for child in plan.get("Plans", []):
        yield from scans_and_sorts(child, below_limit)


def _reads_archive(plan: dict[str, Any]) -> bool:
    """Whether the subtree reads `games` or `moves` rows not bounded by a limit or by a list
    of keys (the moves of a page's games, `game_id = ANY ('{…}')`)."""
    if plan["Node Type"] == "Limit":
        return False
    if plan.get("Relation Name") in ARCHIVE_TABLES:
        keys = plan.get("Index Cond", "") + plan.get("Recheck Cond", "")
        return "= ANY ('{" not in keys
    children = plan.get("Plans", [])
    if plan["Node Type"] == "Nested Loop":
        # The inner side runs once per outer row: bounded by what the outer side reads.
        children = [c for c in children if c.get("Parent Relationship") == "Outer"]
    return any(_reads_archive(child) for child in children)


async def explain(url: str, statement: str, parameters: Any) -> dict[str, Any]:
    conn = await asyncpg.connect(_driver_url(url), server_settings=SERVER_SETTINGS)
    try:
        text = await conn.fetchval(f"EXPLAIN (FORMAT JSON) {statement}", *(parameters or ()))
    finally:
        await conn.close()
    plan: dict[str, Any] = json.loads(text)[0]["Plan"]
    return plan


def touches_archive(statement: str) -> bool:
    """Whether a statement reads the archive's tables (an EXPLAIN of one only plans it)."""
    lowered = statement.lower()
    reads = " games" in lowered or " moves" in lowered
    return reads and not lowered.startswith("explain")


async def test_every_archive_request_is_served_by_indexes(
    seeded: str,
    client: httpx.AsyncClient,
    viewers: dict[str, dict[str, str]],
    recorded: Recorded,
) -> None:
    problems = []
    explained = 0
    for viewer, headers in viewers.items():
        for path, params in requests():
            recorded.take()
            response = await client.get(path, params=params, headers=headers)
            assert response.status_code == 200, (viewer, path, params, response.text)
            statements = [s for s in recorded.take() if touches_archive(s[0])]
            assert statements, (path, params)
            for statement, parameters in statements:
                plan = await explain(seeded, statement, parameters)
                explained += 1
                for problem, node in scans_and_sorts(plan):
                    problems.append(
                        (
                            f"{viewer} {path} {params}: {problem} {node.get('Relation Name', '')}",
                            f"{statement}\n{json.dumps(plan, indent=1)[:3000]}",
                        )
                    )
    assert not problems, "\n".join(
        [f"{len(problems)} of {explained} plans:", *(p[0] for p in problems), *problems[0]]
    )


async def test_the_check_catches_a_query_that_reads_the_whole_table(seeded: str) -> None:
    """What the test above rejects: a filter no index serves, or a sort of many games."""

    async def problems(statement: str, *parameters: Any) -> set[str]:
        return {p for p, _ in scans_and_sorts(await explain(seeded, statement, parameters))}

    assert await problems("SELECT count(*) FROM games WHERE clock_base_s = $1", 300) == {
        "sequential scan"
    }
    assert await problems("SELECT game_id FROM moves WHERE game_id > $1 ORDER BY move", 10) == {
        "sequential scan",
        "sort",
    }
    assert await problems(
        "SELECT id FROM games WHERE black_id = $1 AND is_private = false ORDER BY ply_count",
        FIRST_PLAYER,
    ) == {"sort"}
    assert not await problems(
        "SELECT id FROM games WHERE is_private = false ORDER BY started_at DESC, id DESC LIMIT 20"
    )


def shown(game_id: int) -> bool:
    """Whether the seeded game is listed to anyone: public, and not aborted before it began."""
    return game_id > GAMES - 100 or game_id % 100 not in (7, 20)


async def test_a_count_no_index_serves_is_the_estimate_and_says_so(
    client: httpx.AsyncClient,
) -> None:
    """A search count on the number of plies would read every game: the planner's estimate
    comes back, marked as such; a player's count is exact."""
    page = (await client.get("/api/games", params={"min_plies": "60"})).json()
    exact = sum(1 for g in range(1, GAMES + 1) if 30 + (g * 13) % 91 >= 60 and shown(g))
    assert page["count_exact"] is False
    assert abs(page["count"] - exact) < exact * 0.2
    page = (await client.get(f"/api/players/{BUSY}/games")).json()
    assert page["count_exact"] is True
    assert page["count"] == sum(1 for g in range(10, GAMES + 1, 10) if shown(g))
    assert (await client.get("/api/games", params={"count": "false"})).json()["count_exact"] is None


async def test_a_count_of_a_very_long_history_is_the_estimate_and_says_so(
    client: httpx.AsyncClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Past what an index range is counted in quickly (here lowered so the busy player's
    20,000 games pass it; the server's limit is some 400,000), the count is the estimate."""
    monkeypatch.setattr(archive_counts, "COUNT_INDEX_COST_LIMIT", 100.0)
    page = (await client.get(f"/api/players/{BUSY}/games")).json()
    exact = sum(1 for g in range(10, GAMES + 1, 10) if shown(g))
    assert page["count_exact"] is False
    assert abs(page["count"] - exact) < exact * 0.2
    quiet = (await client.get(f"/api/players/player{FIRST_PLAYER + 77}/games")).json()
    assert quiet["count_exact"] is True
