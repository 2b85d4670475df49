"""Hostile requests against a real server: absurd ids, malformed parameters and bodies, NUL bytes.

Each answer must be a 4xx with the README's JSON error shape, nothing may change, and the
server's log must hold no error or traceback. Run on SQLite and PostgreSQL, whose limits differ
(PostgreSQL refuses NUL in text; both refuse ids beyond BIGINT).
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from logging import LogRecord
from typing import Any

import httpx
import pytest
import pytest_asyncio
from fastapi.routing import iter_route_contexts

from app.config import Settings
from app.db.models import MAX_ID
from tests.conftest import make_settings
from tests.support.admin_client import admin_client, ok
from tests.support.logs import failures, server_log
from tests.support.server import Served, serve

ABSURD_IDS = ["-1", "0", str(MAX_ID + 1), str(2**64), "abc", "%00", "1.5", "%E2%80%AE", "1e3"]
# Spellings of the id 1 other than its decimal digits: pydantic's lax mode reads most as 1.
LOOSE_IDS = ["1.0", "true", "%2B1", "%201", "1%20", "1_0", "01", "%EF%BC%91"]


@dataclass
class Site:
    served: Served
    admin: httpx.AsyncClient  # an administrator's client of the real server
    log: list[LogRecord]


# One server for the module (a hostile request must change nothing, and each test checks that
# the others' did not either); each test reads the server's log of its own requests.
# A real server: the requests are read from its access log, as an operator reads them.
pytestmark = [pytest.mark.asyncio(loop_scope="module"), pytest.mark.server]


@pytest.fixture(scope="module")
def settings(module_db_url: str) -> Settings:
    return make_settings(database_url=module_db_url)


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def served(settings: Settings) -> AsyncIterator[tuple[Served, httpx.AsyncClient]]:
    async with serve(settings) as server, admin_client(server.app, server.url) as admin:
        yield server, admin


@pytest.fixture
def site(served: tuple[Served, httpx.AsyncClient]) -> Iterator[Site]:
    with server_log() as log:
        yield Site(*served, log)


def assert_error(response: httpx.Response, status: int | set[int], code: str | None = None) -> None:
    """A refusal as the README promises: the status, and `{"error", "message"}` in JSON."""
    expected = {status} if isinstance(status, int) else status
    where = f"{response.request.method} {response.request.url}"
    assert response.status_code in expected, f"{where}: {response.status_code} {response.text}"
    body = response.json()
    assert isinstance(body["error"], str) and isinstance(body["message"], str), where
    if code is not None:
        assert body["error"] == code, f"{where}: {body}"


def id_routes(site: Site) -> list[tuple[str, str]]:
    """(method, path) of every route with a path parameter, enumerated from the app itself."""
    return sorted(
        (method, route.path)
        for route in iter_route_contexts(site.served.app.routes)
        if route.path is not None and "{" in route.path
        for method in route.methods or {"GET"}
        if method != "HEAD"
    )


def valid_body(method: str, path: str) -> dict[str, Any] | None:
    """A body the route accepts, so that only the path parameter is wrong."""
    if method == "PATCH":
        return {"listed": True}
    if method == "PUT" and path == "/api/tournaments/{tournament_id}":  # a tournament's settings
        return {"kind": "arena", "name": "Testing", "minutes": 10, "clock": {"base": 60}}
    if method == "PUT" and path == "/api/games/{game_id}/conditional":  # conditional moves
        return {"lines": [["22-18", "15x22"]]}
    if method != "POST":
        return None
    if path.endswith("/adjudicate"):
        return {"result": "1-0", "reason": "testing"}
    if path.endswith("/decline"):  # a challenge's: one of lichess's reasons
        return {"reason": "later"}
    if path == "/api/challenge/{name}":  # a challenge's fields
        return {"rated": False}
    if path == "/api/puzzles/{puzzle_id}/moves":  # a puzzle's line so far
        return {"moves": ["11-15"]}
    return {"reason": "testing"}


@pytest.mark.parametrize("bad_id", ABSURD_IDS)
async def test_an_absurd_id_in_any_path_is_a_clear_4xx(site: Site, bad_id: str) -> None:
    routes = id_routes(site)
    assert ("POST", "/api/admin/users/{user_id}/kick") in routes
    for method, path in routes:
        url = re.sub(r"\{[^}]+\}", bad_id, path)
        response = await site.admin.request(method, url, json=valid_body(method, path))
        assert_error(response, {404, 422})
    assert failures(site.log) == []


@pytest.mark.parametrize("loose_id", LOOSE_IDS)
async def test_an_id_is_written_in_decimal_digits_only(site: Site, loose_id: str) -> None:
    """Room 1 exists: read leniently, `1.0` would rename it; it is refused before any lookup."""
    for method, path in id_routes(site):
        if "{name}" in path:
            continue
        url = re.sub(r"\{[^}]+\}", loose_id, path)
        response = await site.admin.request(method, url, json=valid_body(method, path))
        assert_error(response, 422, "bad_request")
    assert failures(site.log) == []


async def test_the_largest_id_is_simply_not_found(site: Site) -> None:
    for method, path in id_routes(site):
        if "{name}" in path:
            continue
        url = re.sub(r"\{[^}]+\}", str(MAX_ID), path)
        response = await site.admin.request(method, url, json=valid_body(method, path))
        assert_error(response, 404, "not_found")
    assert failures(site.log) == []


@pytest.mark.parametrize(
    ("query", "status", "code"),
    [
        ("/api/games?limit=0", 422, "bad_request"),
        ("/api/games?limit=99999999999999999999999", 422, "bad_request"),
        ("/api/games?cursor=abc", 400, "bad_cursor"),
        ("/api/games?cursor=%00", 400, "bad_cursor"),
        ("/api/games?since=2026-13-01", 422, "bad_request"),
        ("/api/games?order=sideways&count=maybe", 422, "bad_request"),
        ("/api/games?player=x%00y", 422, "bad_request"),
        ("/api/games?room=%00", 422, "bad_request"),
        ("/api/games/export?format=xml", 422, "bad_request"),
        ("/api/games/export?max=0", 422, "bad_request"),
        ("/api/players/root/games?min_plies=-1", 422, "bad_request"),
        ("/api/admin/users?offset=1180591620717411303424", 422, "bad_request"),
        ("/api/admin/users?q=%00", 422, "bad_request"),
        ("/api/admin/tables?room=9223372036854775808", 422, "bad_request"),
        ("/api/admin/audit?actor=%00", 422, "bad_request"),
        ("/api/admin/audit?action=user.%00", 422, "bad_request"),
        ("/api/admin/audit?target_id=%00", 422, "bad_request"),
        ("/api/admin/audit?cursor=99999999999999999999", 400, "bad_cursor"),
        ("/api/admin/audit?cursor=%C2%B2", 400, "bad_cursor"),  # "²" is a digit to Python
        ("/api/admin/audit?since=0001-01-01T00:00:00%2B14:00", 422, "bad_request"),
        ("/api/admin/audit?until=9999-12-31T23:59:59-14:00", 422, "bad_request"),
        # Numbers and booleans are written one way: no float, sign, blank or `yes` for them.
        *(
            (f"/api/games?limit={value}", 422, "bad_request")
            for value in ["1.0", "5.0", "true", "%2B5", "%205", "5%20", "5_0", "%EF%BC%95"]
        ),
        *(
            (f"/api/games?{name}={value}", 422, "bad_request")
            for name in ["count", "rated"]
            for value in ["1", "0", "yes", "no", "on", "off", "t", "f", "True", "FALSE", ""]
        ),
        ("/api/games/1?positions=1", 422, "bad_request"),
        ("/api/games/export?max=1.0", 422, "bad_request"),
        ("/api/players/root/games?min_plies=0.0", 422, "bad_request"),
        ("/api/players/root/games?limit=true", 422, "bad_request"),
        ("/api/admin/users?offset=0.0", 422, "bad_request"),
        ("/api/admin/users?limit=10.0", 422, "bad_request"),
        ("/api/admin/users?banned=1", 422, "bad_request"),
        ("/api/admin/tables?room=1.0", 422, "bad_request"),
        ("/api/admin/tables?room=true", 422, "bad_request"),
        ("/api/admin/audit?limit=5.0", 422, "bad_request"),
        *(
            (f"/api/games?status={value}", 422, "bad_request")
            for value in ["", "Playing", "PLAYING", "true", "1", "playing%20", "live"]
        ),
        # Dates are ISO 8601: a number is not read as seconds since 1970.
        ("/api/games?since=0", 422, "bad_request"),
        ("/api/games?until=1700000000", 422, "bad_request"),
        ("/api/games?since=20260101", 422, "bad_request"),
        ("/api/admin/audit?since=1700000000", 422, "bad_request"),
        ("/api/admin/audit?until=0", 422, "bad_request"),
        ("/api/admin/audit?since=1.5", 422, "bad_request"),
    ],
)
async def test_malformed_query_parameters_are_refused(
    site: Site, query: str, status: int, code: str
) -> None:
    assert_error(await site.admin.get(query), status, code)
    assert failures(site.log) == []


NESTED = '{"reason":' * 3000 + '"x"' + "}" * 3000


@pytest.mark.parametrize(
    ("method", "path", "body"),
    [
        ("POST", "/api/auth/login", {"name": "a\x00bc", "password": "long enough pass"}),
        ("POST", "/api/auth/register", {"name": "a\x00bc", "password": "long enough pass"}),
        ("POST", "/api/auth/register", b"not json"),
        ("POST", "/api/auth/login", {"name": 5, "password": ["x"]}),
        ("POST", "/api/admin/rooms", {"slug": "zz-top", "name": "n\x00", "variant": "english"}),
        ("PATCH", "/api/admin/rooms/1", {"name": "\x00"}),
        ("PATCH", "/api/admin/rooms/1", {"open": False, "reason": "why\x00"}),
        ("POST", "/api/admin/rooms/1/close", {"reason": "x\x00y"}),
        ("POST", "/api/admin/rooms/1/close", NESTED.encode()),
        ("POST", "/api/admin/rooms/1/close", b"\x00\xff"),
        ("POST", "/api/admin/rooms/1/close", b"1e999"),
        ("POST", "/api/admin/users/{user}/kick", {"reason": "ok", "table": MAX_ID + 1}),
        ("POST", "/api/admin/users/{user}/kick", {"reason": "ok", "room": 2**64}),
        ("POST", "/api/admin/users/{user}/kick", {"reason": "\x1b[2J"}),
        ("POST", "/api/admin/users/{user}/ban", {"reason": "x\x00y"}),
        ("POST", "/api/admin/users/{user}/ban", {"reason": "\t\n"}),
        ("POST", "/api/admin/users/{user}/ban", b"x" * 2_000_000),
        # Wrong JSON types are refused, not converted (room 1 exists: a kick from it would pass).
        *(
            ("PATCH", "/api/admin/rooms/1", change)
            for change in [
                {"table_limit": True},
                {"table_limit": "7"},
                {"table_limit": 7.0},
                {"open": 0},
                {"listed": "false"},
                {"clock": {"base": "300"}},
                {"clock": {"base": 300.0}},
                {"clock": {"base": 300, "increment": True}},
                {"name": 5},
                {"listed": True, "reason": 1},
            ]
        ),
        ("POST", "/api/admin/rooms", {"slug": "zz", "name": "n", "variant": "english", "open": 1}),
        (
            "POST",
            "/api/admin/rooms",
            {"slug": "zz", "name": "n", "variant": "english", "table_limit": "5"},
        ),
        ("POST", "/api/admin/rooms/1/close", {"reason": "x", "result": 1}),
        ("POST", "/api/admin/users/{user}/kick", {"reason": "ok", "room": 1.0}),
        ("POST", "/api/admin/users/{user}/kick", {"reason": "ok", "room": True}),
        ("POST", "/api/admin/users/{user}/kick", {"reason": "ok", "room": "1"}),
        ("POST", "/api/admin/users/{user}/kick", {"reason": True}),
        ("POST", "/api/auth/login", {"name": "root", "password": True}),
        ("POST", "/api/ai/games", {"level": 1, "room": MAX_ID + 1}),
        ("POST", "/api/ai/games", {"level": 1, "room": 2**70}),
    ],
)
async def test_malformed_bodies_are_refused_and_change_nothing(
    site: Site, method: str, path: str, body: dict[str, Any] | bytes
) -> None:
    async with site.served.http() as guest_client:
        user = ok(await guest_client.post("/api/auth/guest"))["user"]["id"]
    url = path.replace("{user}", str(user))
    rooms_before = ok(await site.admin.get("/api/admin/rooms"))
    if isinstance(body, bytes):
        headers = {"content-type": "application/json"}
        response = await site.admin.request(method, url, content=body, headers=headers)
    else:
        response = await site.admin.request(method, url, json=body)
    assert_error(response, {400, 422}, "bad_request")  # 400: a body too deep to even parse
    assert ok(await site.admin.get("/api/admin/rooms")) == rooms_before
    assert ok(await site.admin.get("/api/admin/users?banned=true"))["data"] == []
    assert ok(await site.admin.get("/api/admin/audit"))["data"] == []
    assert failures(site.log) == []


@pytest.mark.parametrize(
    "authorization",
    [
        b"Bearer forged",
        b"Bearer",
        b"Basic cm9vdDpyb290",
        b"Bearer \xe9\xff",
        b"bearer" + b"x" * 4000,
    ],
)
async def test_forged_credentials_are_401(site: Site, authorization: bytes) -> None:
    async with site.served.http() as client:
        for method, path in [("GET", "/api/auth/me"), ("GET", "/api/admin/status")]:
            response = await client.request(method, path, headers={"Authorization": authorization})
            assert_error(response, 401, "unauthorized")
    assert failures(site.log) == []


@pytest.mark.parametrize(
    ("method", "path", "status"),
    [
        ("DELETE", "/api/games", 405),
        ("PUT", "/api/auth/login", 405),
        ("POST", "/api/rooms", 405),
        ("DELETE", "/api/admin/rooms/1", 405),
        ("GET", "/api/auth/logout", 404),  # a GET that no route takes goes to the web client
    ],
)
async def test_a_wrong_method_is_refused_in_json(
    site: Site, method: str, path: str, status: int
) -> None:
    assert_error(await site.admin.request(method, path), status)
    assert failures(site.log) == []
