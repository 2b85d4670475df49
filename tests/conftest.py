"""Fixtures shared by the whole suite.

- `--runslow`: run the tests marked `@pytest.mark.slow` (skipped by default).
- `db_url`: parametrized `sqlite` / `postgres`; each test gets a fresh, migrated database that
  holds only the seed rows (the three rooms). SQLite: a copy, in `tmp_path`, of a file migrated
  once per test process (`migrated_sqlite(path)` makes one anywhere). PostgreSQL (only when
  `TEST_DATABASE_URL` is set, else skipped with the reason): a uniquely named database created
  for the test process (and dropped at its end), emptied and re-seeded before each test. So
  concurrent test runs (and the workers of one) never share tables. `postgres_database()`
  makes another, empty or migrated (copied from a template migrated once).
- `module_db_url`: the same two kinds, one database for all the tests of a module (which then
  share one server: tests that change nothing the others look at).
- `blank_db_url`: the same two kinds, but empty and never migrated (for migration tests).
- `settings`: `Settings` for `db_url`, built from defaults only (never from the environment; CI
  exports REDIS_URL): embedded broker `memory://`, guests, registrations and the message budget
  per address practically unlimited (every test client is 127.0.0.1). `make_settings(**overrides)`
  builds others.
- `app`: `create_app(settings)` with its lifespan running (`app.state.db`, `app.state.broker`).
- `client`: an `httpx.AsyncClient` calling `app` in-process, for REST tests.
- `redis_url`: a real Redis, from `TEST_REDIS_URL` (default redis://127.0.0.1:6379/0). Tests
  sharing it use unique channel names.
- `private_redis`: a redis-server of the test's own on a free port (`.url`, `await .stop()`,
  `await .start()`), for tests of what happens when Redis goes away.
- `in_thread(fn, *args)`: run blocking code that starts its own event loop (alembic) from a test.
"""

from __future__ import annotations

import asyncio
import atexit
import functools
import os
import shutil
import socket
import tempfile
import time
import uuid
from collections import Counter
from collections.abc import AsyncIterator, Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import asyncpg
import httpx
import pytest
from fastapi import FastAPI
from pydantic_settings import BaseSettings, PydanticBaseSettingsSource
from sqlalchemy.engine import make_url

from app.config import Settings
from app.db.models import Base
from tests.support import tiers
from tests.support.ports import free_port

if TYPE_CHECKING:  # the web stack is imported by the tests that serve the app, not by all
    from app.db.engine import Database
    from tests.support.server import Served

T = TypeVar("T")
_STARTED = pytest.StashKey[float]()


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--runslow", action="store_true", help="run tests marked slow")
    parser.addoption(
        "--fast",
        action="store_true",
        help="the inner loop (make test-fast): SQLite and the in-process broker only; no browser,"
        " no Redis, no PostgreSQL, no real outages, nothing that must run alone, none of the"
        " exhaustive or generated checks marked thorough",
    )


# The three tiers (CONTRIBUTING.md): `core`, the pure cores alone; `service`, use cases through
# the app in this process (tests.support.inproc: ASGI, the in-process broker, a FakeClock);
# `server`, what needs real servers: the wire, several processes, real outages, the browser,
# namespaces. A test's tier follows from what it uses; a test that starts a real server by hand
# says so with `pytest.mark.server` (starting one in another tier fails: `real_servers_allowed`).
TIERS = ("core", "service", "server")
SERVER_DIRECTORIES = frozenset({"e2e", "deploy", "realtime", "cluster"})
SERVER_FIXTURES = frozenset({"real_server", "two_servers", "private_redis", "redis_url"})
APP_FIXTURES = frozenset(
    {"db_url", "module_db_url", "blank_db_url", "settings", "app", "client", "server", "db"}
)
# Parameters of the database and broker fixtures that name a server the fast loop does without.
SERVER_PARAMS = frozenset({"postgres", "redis"})


def tier_of(item: pytest.Item) -> str:
    fixtures = set(getattr(item, "fixturenames", ()))
    if (
        item.get_closest_marker("server")
        or SERVER_DIRECTORIES & set(item.path.parts)
        or SERVER_FIXTURES & fixtures
        or any(item.get_closest_marker(m) for m in ("e2e", "outage", "alone"))
    ):
        return "server"
    return "service" if APP_FIXTURES & fixtures else "core"


@pytest.fixture(autouse=True)
def _tier(request: pytest.FixtureRequest) -> Iterator[None]:
    """Note the test's tier, so that a real server started outside the server tier fails."""
    tiers.current = tier_of(request.node)
    yield
    tiers.current = "server"


def _not_fast(item: pytest.Item) -> bool:
    """Whether `--fast` leaves the test out: the real servers' tier, the slow and thorough
    checks, PostgreSQL and Redis."""
    if tier_of(item) == "server":
        return True
    if any(item.get_closest_marker(m) for m in ("slow", "thorough")):
        return True
    callspec = getattr(item, "callspec", None)
    return callspec is not None and bool(SERVER_PARAMS & set(map(str, callspec.params.values())))


# The order test files are handed to the workers in (`--dist loadfile`): the long ones first, so
# that the run does not end with one worker busy on a long file while the others wait.
FILE_ORDER = {"server": 0, "service": 1, "core": 2}


def _file_rank(items: list[pytest.Item]) -> dict[Path, int]:
    rank: dict[Path, int] = {}
    for item in items:
        mine = 0 if item.get_closest_marker("thorough") else FILE_ORDER[tier_of(item)]
        rank[item.path] = min(rank.get(item.path, mine), mine)
    return rank


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        parts = item.path.parts
        if "e2e" in parts:
            item.add_marker(pytest.mark.e2e)
        if "deploy" in parts:
            item.add_marker(pytest.mark.alone)
            item.add_marker(pytest.mark.outage)
        item.add_marker(getattr(pytest.mark, f"tier_{tier_of(item)}"))
    rank = _file_rank(items)
    items.sort(key=lambda item: rank[item.path])  # stable: each file's own order kept
    if config.getoption("--fast"):
        kept = [item for item in items if not _not_fast(item)]
        config.hook.pytest_deselected(items=[item for item in items if _not_fast(item)])
        items[:] = kept
    if config.getoption("--runslow"):
        return
    skip_slow = pytest.mark.skip(reason="slow: run with --runslow")
    for item in items:
        if "slow" in item.keywords:
            item.add_marker(skip_slow)


def require_redis(url: str) -> None:
    """Skip the test, saying why, unless a Redis server answers PING at `url`."""
    parsed = make_url(url.replace("redis://", "redis+any://", 1))
    address = (parsed.host or "127.0.0.1", parsed.port or 6379)
    try:
        with socket.create_connection(address, timeout=2) as probe:
            probe.sendall(b"PING\r\n")
            answer = probe.recv(64)
    except OSError as exc:
        pytest.skip(f"redis: no Redis server at {url} ({exc}); start one or set TEST_REDIS_URL")
    if not answer.startswith((b"+PONG", b"-NOAUTH")):
        pytest.skip(f"redis: {url} does not answer PING like a Redis server ({answer!r})")


def skip_reason(report: pytest.TestReport) -> str:
    """The reason a skipped test gave, without pytest's "Skipped: " prefix."""
    longrepr = report.longrepr
    reason = longrepr[2] if isinstance(longrepr, tuple) else str(longrepr)
    return reason.removeprefix("Skipped: ")


def pytest_sessionstart(session: pytest.Session) -> None:
    session.config.stash[_STARTED] = time.monotonic()


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: pytest.Config) -> None:
    """The skips counted by reason, so that a run says plainly what it did not test (a missing
    PostgreSQL, Redis, Chromium or namespaces; a test that applies to one database only); then
    one line with the run's wall time and its tests per tier, so that each change sees what
    it cost."""
    stats = terminalreporter.stats
    skipped = [r for r in stats.get("skipped", ()) if r.when != "teardown"]
    if skipped:
        terminalreporter.section(f"{len(skipped)} skipped, by reason")
        for reason, count in Counter(skip_reason(r) for r in skipped).most_common():
            terminalreporter.write_line(f"{count:6d}  {reason}")
    ran: Counter[str] = Counter()
    for key in ("passed", "failed", "error"):
        for report in stats.get(key, ()):
            if report.when == "call" or (report.when == "setup" and report.outcome != "passed"):
                tier = next((t for t in TIERS if f"tier_{t}" in report.keywords), "core")
                ran[tier] += 1
    wall = time.monotonic() - config.stash.get(_STARTED, time.monotonic())
    counts = ", ".join(f"{tier} {ran[tier]}" for tier in TIERS)
    terminalreporter.write_line(f"suite: {wall:.0f} s wall; tests run per tier: {counts}")


@pytest.fixture(scope="session")
def redis_url() -> str:
    """The shared Redis server of `TEST_REDIS_URL`; the test is skipped if none answers."""
    url = os.environ.get("TEST_REDIS_URL", "redis://127.0.0.1:6379/0")
    require_redis(url)
    return url


class PrivateRedis:
    """A redis-server of the test's own, which the test may stop and start again."""

    def __init__(self) -> None:
        self.port = free_port()
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self._process: asyncio.subprocess.Process | None = None

    async def start(self) -> None:
        self._process = await asyncio.create_subprocess_exec(
            *("redis-server", "--port", str(self.port), "--bind", "127.0.0.1"),
            *("--save", "", "--appendonly", "no"),
            stdout=asyncio.subprocess.DEVNULL,
        )
        for _ in range(200):
            try:
                _, writer = await asyncio.open_connection("127.0.0.1", self.port)
            except OSError:
                await asyncio.sleep(0.05)
                continue
            writer.close()
            await writer.wait_closed()
            return
        raise RuntimeError("redis-server did not start")

    async def stop(self) -> None:
        if self._process is not None and self._process.returncode is None:
            self._process.terminate()
            await self._process.wait()


@pytest.fixture
async def private_redis() -> AsyncIterator[PrivateRedis]:
    if shutil.which("redis-server") is None:
        pytest.skip("redis: no redis-server program to run a private Redis (apt install redis)")
    server = PrivateRedis()
    await server.start()
    try:
        yield server
    finally:
        await server.stop()


# --- databases -------------------------------------------------------------------------------

TEST_DATABASE_URL = os.environ.get("TEST_DATABASE_URL")
NO_POSTGRES = "postgres: set TEST_DATABASE_URL (e.g. postgresql+asyncpg://postgres@127.0.0.1/test)"


def in_thread(fn: Callable[..., T], *args: Any) -> T:
    """Run blocking code that starts its own event loop (alembic, asyncio.run) off this one."""
    with ThreadPoolExecutor(1) as pool:
        return pool.submit(fn, *args).result()


def _driver_url(url: str) -> str:
    """The URL asyncpg itself accepts (no `+asyncpg`)."""
    return make_url(url).set(drivername="postgresql").render_as_string(hide_password=False)


def _database_named(name: str) -> str:
    assert TEST_DATABASE_URL is not None
    return make_url(TEST_DATABASE_URL).set(database=name).render_as_string(hide_password=False)


async def _create_postgres_database(name: str, template: str | None = None) -> None:
    conn = await asyncpg.connect(_driver_url(_database_named("postgres")))
    try:
        copy = f' TEMPLATE "{template}"' if template is not None else ""
        await conn.execute(f'CREATE DATABASE "{name}"{copy}')
    finally:
        await conn.close()


async def _drop_postgres_database(name: str) -> None:
    conn = await asyncpg.connect(_driver_url(_database_named("postgres")))
    try:
        await conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    finally:
        await conn.close()


def _migrated(url: str) -> None:
    """Migrate the database at `url` and store the shipped puzzles in it, as a server's start
    does (`app.puzzles.service.load`): every test database copied from it, or reset to its
    rows, then starts with them, and a server's start finds nothing to add."""
    from app.db.engine import Database
    from app.db.migrate import upgrade
    from app.puzzles import service as puzzles
    from app.puzzles import shipped

    async def store() -> None:
        db = Database(url)
        try:
            await puzzles.load(db, shipped())
        finally:
            await db.dispose()

    in_thread(upgrade, url)
    in_thread(asyncio.run, store())


@functools.cache
def _postgres_template() -> str:
    """The name of a PostgreSQL database migrated once per test process (dropped when it
    exits), which `postgres_database(migrated=True)` copies."""

    name = f"checkers_template_{os.getpid()}_{uuid.uuid4().hex[:8]}"
    in_thread(asyncio.run, _create_postgres_database(name))
    _TEMPLATES.append(name)
    _migrated(_database_named(name))
    return name


_TEMPLATES: list[str] = []  # dropped when the session ends


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    for name in _TEMPLATES:
        in_thread(asyncio.run, _drop_postgres_database(name))
    _TEMPLATES.clear()


@contextmanager
def postgres_database(*, migrated: bool = False) -> Iterator[str]:
    """A new, uniquely named PostgreSQL database for the duration of the block: empty, or
    `migrated` (a copy of a template migrated once, far quicker than migrating)."""
    if TEST_DATABASE_URL is None:
        pytest.skip(NO_POSTGRES)
    template = _postgres_template() if migrated else None
    name = f"checkers_test_{os.getpid()}_{uuid.uuid4().hex[:8]}"
    in_thread(asyncio.run, _create_postgres_database(name, template))
    try:
        yield _database_named(name)
    finally:
        in_thread(asyncio.run, _drop_postgres_database(name))


@dataclass
class _SeededPostgres:
    url: str
    seed: dict[str, list[asyncpg.Record]]  # the rows the migrations inserted, per table


async def _read_seed(url: str) -> dict[str, list[asyncpg.Record]]:
    conn = await asyncpg.connect(_driver_url(url))
    try:
        seed = {}
        for table in Base.metadata.sorted_tables:
            rows = await conn.fetch(f'SELECT * FROM "{table.name}"')
            if rows:
                seed[table.name] = rows
        return seed
    finally:
        await conn.close()


async def _reset(db: _SeededPostgres) -> None:
    """Empty every table and put the seed rows back: far cheaper than migrating again."""
    names = ", ".join(f'"{t.name}"' for t in Base.metadata.sorted_tables)
    conn = await asyncpg.connect(_driver_url(db.url))
    try:
        async with conn.transaction():
            # A connection left open by a test would otherwise make this wait forever.
            await conn.execute("SET LOCAL lock_timeout = '10s'")
            await conn.execute(f"TRUNCATE {names} RESTART IDENTITY CASCADE")
            for table, rows in db.seed.items():
                await conn.copy_records_to_table(
                    table, records=[tuple(r) for r in rows], columns=list(rows[0].keys())
                )
                if "id" in Base.metadata.tables[table].c:
                    await conn.execute(
                        f"SELECT setval(pg_get_serial_sequence('{table}', 'id'), "
                        f'(SELECT max(id) FROM "{table}"))'
                    )
    finally:
        await conn.close()


@pytest.fixture(scope="session")
def _postgres_session_database() -> Iterator[_SeededPostgres]:

    with postgres_database() as url:
        _migrated(url)
        yield _SeededPostgres(url, in_thread(asyncio.run, _read_seed(url)))


@functools.cache
def sqlite_template() -> Path:
    """A SQLite database migrated once per test process (removed when it exits)."""

    directory = Path(tempfile.mkdtemp(prefix="checkers-template-"))
    atexit.register(shutil.rmtree, directory, ignore_errors=True)
    path = directory / "checkers.db"
    _migrated(f"sqlite+aiosqlite:///{path}")
    return path


def migrated_sqlite(path: Path) -> str:
    """A migrated SQLite database at `path` (a copy of the template); its URL."""
    shutil.copyfile(sqlite_template(), path)
    return f"sqlite+aiosqlite:///{path}"


@pytest.fixture(params=["sqlite", "postgres"])
def db_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A migrated database holding only the seed rows (the rooms) and the shipped puzzles,
    fresh for each test."""
    if request.param == "sqlite":
        return migrated_sqlite(tmp_path / "checkers.db")
    db: _SeededPostgres = request.getfixturevalue("_postgres_session_database")
    in_thread(asyncio.run, _reset(db))
    return db.url


@pytest.fixture(scope="module", params=["sqlite", "postgres"])
def module_db_url(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> str:
    """`db_url`, shared by the tests of a module: for modules whose tests change nothing the
    others look at, and share one server (`pytest.mark.asyncio(loop_scope="module")`)."""
    if request.param == "sqlite":
        return migrated_sqlite(tmp_path_factory.mktemp("module-db") / "checkers.db")
    database = postgres_database(migrated=True)
    url = database.__enter__()
    request.addfinalizer(lambda: database.__exit__(None, None, None))
    return url


@pytest.fixture(params=["sqlite", "postgres"])
def blank_db_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """An empty database that was never migrated, for the migration tests themselves."""
    if request.param == "sqlite":
        yield f"sqlite+aiosqlite:///{tmp_path / 'blank.db'}"
        return
    with postgres_database() as url:
        yield url


# --- the application -------------------------------------------------------------------------


class IsolatedSettings(Settings):
    """Settings from the constructor's arguments and defaults only, never the environment."""

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        return (init_settings,)


def make_settings(**overrides: Any) -> Settings:
    """Test settings: the embedded defaults plus `overrides`; CI's REDIS_URL is ignored."""
    values: dict[str, Any] = {
        "environment": "test",
        "redis_url": None,
        # Every test client comes from 127.0.0.1: tests of these limits set them lower.
        "guests_per_address": 10_000,
        "registrations_per_address": 10_000,
        "ws_messages_per_second_per_ip": 1_000_000.0,
        # Every test account shares 127.0.0.1 and plays its partners often: the fair-play
        # rules (tests/ratings/test_fair_play.py) would make every rated game casual, and their
        # short games' gains would be withheld (tests/ratings/test_farming.py).
        "rated_shared_address_days": 0.0,
        "rated_games_per_pair_per_day": 1_000_000,
        "rated_linked_gain_per_day": 1_000_000.0,
    }
    return IsolatedSettings(**(values | overrides))


# The fixtures that serve the app to clients, and the server tier (which starts processes of its
# own from `settings`): their settings beat and notice departures quickly, so that a server
# killed for a few seconds is seen to have been down.
SERVING = frozenset({"server", "real_server", "two_servers"})


@pytest.fixture
def settings(request: pytest.FixtureRequest, db_url: str) -> Settings:
    if SERVING & set(request.fixturenames) or tier_of(request.node) == "server":
        return make_settings(
            database_url=db_url, disconnect_grace_seconds=0.5, heartbeat_seconds=0.5
        )
    return make_settings(database_url=db_url)


@pytest.fixture
async def app(settings: Settings) -> AsyncIterator[FastAPI]:
    """The application with its lifespan running (database and broker open)."""
    from app.main import create_app  # here, so that rules tests do not import the web stack

    application = create_app(settings)
    async with application.router.lifespan_context(application):
        yield application


@pytest.fixture
async def client(app: FastAPI) -> AsyncIterator[httpx.AsyncClient]:
    """An HTTP client calling the app in-process, for REST tests."""
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as c:
        yield c


@pytest.fixture
async def server(settings: Settings) -> AsyncIterator[Served]:
    """The app served in this event loop (tests.support.inproc): HTTP and websockets through
    ASGI, no socket, no uvicorn; its clock a `FakeClock`."""
    from tests.support.inproc import served_here

    async with served_here(settings) as served:
        yield served


@pytest.fixture
async def real_server(settings: Settings) -> AsyncIterator[Served]:
    """A real uvicorn server on a loopback port: for what only the wire shows."""
    from tests.support.server import serve

    async with serve(settings) as served:
        yield served


@pytest.fixture
async def two_servers(db_url: str, private_redis: PrivateRedis) -> AsyncIterator[list[Served]]:
    """Two servers on one database and one Redis: two processes of a cluster."""
    from tests.support.server import cluster

    settings = make_settings(
        database_url=db_url, redis_url=private_redis.url, disconnect_grace_seconds=0.5
    )
    async with cluster(settings) as servers:
        yield servers


@pytest.fixture
async def db(db_url: str) -> AsyncIterator[Database]:
    """The migrated database of `db_url`, opened for the test (use cases called directly)."""
    from app.db.engine import Database

    database = Database(db_url)
    try:
        yield database
    finally:
        await database.dispose()
