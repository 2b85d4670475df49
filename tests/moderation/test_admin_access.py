"""Who may call `/api/admin`, and how its bad requests are answered.

The routes are enumerated from the application itself, so a route added later is checked too.
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator

import httpx
import pytest
from fastapi import FastAPI
from fastapi.routing import iter_route_contexts

from tests.support.admin_client import admin_client, ok


def admin_routes(app: FastAPI) -> list[tuple[str, str]]:
    """(method, path template) of every route under /api/admin, from whichever router."""
    return sorted(
        (method, route.path)
        for route in iter_route_contexts(app.routes)
        if route.path is not None and route.path.startswith("/api/admin")
        for method in route.methods or {"GET"}
        if method != "HEAD"
    )


def concrete(path: str) -> str:
    return re.sub(r"\{[^}]+\}", "1", path)


@pytest.fixture
async def admin(app: FastAPI) -> AsyncIterator[httpx.AsyncClient]:
    async with admin_client(app, "http://testserver", httpx.ASGITransport(app=app)) as client:
        yield client


async def test_every_admin_route_refuses_anonymous_callers_and_players(
    app: FastAPI, client: httpx.AsyncClient
) -> None:
    routes = admin_routes(app)
    assert ("POST", "/api/admin/users/{user_id}/ban") in routes
    assert ("GET", "/api/admin/audit") in routes
    player = ok(await client.post("/api/auth/guest"))["access_token"]
    spec = app.openapi()
    for method, path in routes:
        url = concrete(path)
        anonymous = await client.request(method, url)
        assert anonymous.status_code == 401, (method, path)
        assert anonymous.json()["error"] == "unauthorized"
        as_player = await client.request(method, url, headers={"Authorization": f"Bearer {player}"})
        assert as_player.status_code == 403, (method, path)
        assert as_player.json() == {
            "error": "forbidden",
            "message": "only administrators may do this",
        }
        documented = spec["paths"][path][method.lower()]["responses"]
        assert {"401", "403"} <= documented.keys(), (method, path)


async def test_an_administrator_reaches_every_read_route(
    app: FastAPI, admin: httpx.AsyncClient
) -> None:
    reads = [path for method, path in admin_routes(app) if method == "GET"]
    for path in reads:
        assert (await admin.get(concrete(path))).status_code == 200, path


@pytest.mark.parametrize(
    ("method", "path", "body", "status", "code"),
    [
        ("POST", "/api/admin/rooms", "{not json", 422, "bad_request"),
        ("POST", "/api/admin/rooms", {"slug": "Bad Slug!", "name": "x"}, 422, "bad_request"),
        (
            "POST",
            "/api/admin/rooms",
            {"slug": "fast", "name": "Fast", "variant": "english", "clock": {"base": 0}},
            422,
            "bad_request",
        ),
        ("PATCH", "/api/admin/rooms/1", {}, 422, "bad_request"),
        ("PATCH", "/api/admin/rooms/1", {"name": None}, 422, "bad_request"),
        ("PATCH", "/api/admin/rooms/1", {"colour": "red"}, 422, "bad_request"),
        ("PATCH", "/api/admin/rooms/999", {"name": "Nowhere"}, 404, "not_found"),
        ("POST", "/api/admin/rooms/999/close", {"reason": "gone"}, 404, "not_found"),
        ("POST", "/api/admin/rooms/1/close", {"reason": "  "}, 422, "bad_request"),
        ("POST", "/api/admin/rooms/1/close", {"reason": "x", "result": "2-0"}, 422, "bad_request"),
        ("POST", "/api/admin/tables/999/close", {"reason": "gone"}, 404, "not_found"),
        ("POST", "/api/admin/games/999/abort", {"reason": "gone"}, 404, "not_found"),
        (
            "POST",
            "/api/admin/games/1/adjudicate",
            {"reason": "no", "result": "*"},
            422,
            "bad_request",
        ),
        ("POST", "/api/admin/users/999/ban", {"reason": "who?"}, 404, "not_found"),
        (
            "POST",
            "/api/admin/users/1/kick",
            {"reason": "x", "table": 1, "room": 1},
            422,
            "bad_request",
        ),
        ("POST", "/api/admin/users/1/kick", {}, 422, "bad_request"),
        ("GET", "/api/admin/tables?room=999", None, 404, "not_found"),
        ("GET", "/api/admin/users?limit=0", None, 422, "bad_request"),
        ("GET", "/api/admin/users?kind=robot", None, 422, "bad_request"),
        ("GET", "/api/admin/audit?cursor=abc", None, 400, "bad_cursor"),
        ("GET", "/api/admin/audit?since=yesterday", None, 422, "bad_request"),
    ],
)
async def test_bad_requests_get_a_clear_error(
    admin: httpx.AsyncClient,
    method: str,
    path: str,
    body: object,
    status: int,
    code: str,
) -> None:
    if isinstance(body, str):
        response = await admin.request(
            method, path, content=body, headers={"Content-Type": "application/json"}
        )
    else:
        response = await admin.request(method, path, json=body)
    assert response.status_code == status, response.text
    assert response.json()["error"] == code
    assert response.json()["message"]


async def test_administrators_cannot_ban_or_kick_themselves(admin: httpx.AsyncClient) -> None:
    me = ok(await admin.get("/api/auth/me"))["id"]
    for action in ("ban", "kick"):
        response = await admin.post(f"/api/admin/users/{me}/{action}", json={"reason": "oops"})
        assert response.status_code == 409
        assert response.json()["error"] == "own_account"
    assert ok(await admin.get("/api/admin/audit"))["data"] == []
