"""Accounts over REST: registering, logging in and out, guests, tokens, throttling, bans."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
from fastapi import APIRouter, FastAPI
from sqlalchemy import func, select, update

from app.accounts.service import user_for_token
from app.api import auth
from app.api.common.deps import AdminUser, OptionalUser
from app.api.common.errors import install_error_handlers
from app.config import Settings
from app.db.models import AuthToken, User
from app.main import create_app, lifespan
from tests.conftest import make_settings

PASSWORD = "correct-horse-battery"


async def register(client: httpx.AsyncClient, name: str, password: str = PASSWORD) -> Any:
    response = await client.post("/api/auth/register", json={"name": name, "password": password})
    assert response.status_code == 201, response.text
    return response.json()


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


async def count(app: FastAPI, model: type[Any]) -> int:
    """Rows of `model` (for users: people's accounts, not the computer's)."""
    query = select(func.count()).select_from(model)
    if model is User:
        query = query.where(User.kind != "ai")
    async with app.state.db.session() as session:
        return int(await session.scalar(query) or 0)


async def test_register_then_me(client: httpx.AsyncClient) -> None:
    body = await register(client, "Marion_T-1")
    assert body["token_type"] == "bearer"
    assert body["user"]["name"] == "Marion_T-1"
    assert body["user"]["kind"] == "registered"
    assert body["user"]["role"] == "player"
    assert body["expires_at"].endswith("Z")
    assert "password_hash" not in body["user"]
    me = await client.get("/api/auth/me", headers=bearer(body["access_token"]))
    assert me.status_code == 200
    assert me.json() == body["user"]


async def test_duplicate_name_is_refused_whatever_the_case(
    client: httpx.AsyncClient, app: FastAPI
) -> None:
    await register(client, "alice")
    for name in ("alice", "ALICE", "Alice"):
        response = await client.post(
            "/api/auth/register", json={"name": name, "password": "another-good-one"}
        )
        assert response.status_code == 409
        assert response.json()["error"] == "name_taken"
    assert await count(app, User) == 1


@pytest.mark.parametrize(
    ("name", "why"),
    [
        ("ab", "too short"),
        ("a" * 21, "too long"),
        ("", "empty"),
        ("al ice", "space"),
        ("alice!", "punctuation"),
        ("élise", "not ASCII"),
        ("guest-123abc", "guest prefix"),
    ],
)
async def test_bad_names_are_refused(
    client: httpx.AsyncClient, app: FastAPI, name: str, why: str
) -> None:
    response = await client.post("/api/auth/register", json={"name": name, "password": PASSWORD})
    assert response.status_code == 422, why
    body = response.json()
    assert body["error"] in ("invalid_name", "bad_request"), why
    assert body["message"]
    assert await count(app, User) == 0


@pytest.mark.parametrize(
    "password",
    ["short1!", "password", "12345678", "Checkers1", "aaaaaaaaaaaa", "abababababab", "xxbobbyxx9"],
)
async def test_weak_passwords_are_refused(
    client: httpx.AsyncClient, app: FastAPI, password: str
) -> None:
    response = await client.post("/api/auth/register", json={"name": "bobby", "password": password})
    assert response.status_code == 422
    assert response.json()["error"] == "weak_password"
    assert await count(app, User) == 0
    assert await count(app, AuthToken) == 0


@pytest.mark.parametrize(
    "body",
    [
        {"name": "bobby"},
        {"password": PASSWORD},
        {"name": 12345, "password": PASSWORD},
        {"name": "bobby", "password": "x" * 257},
        ["bobby", PASSWORD],
    ],
)
async def test_malformed_bodies_get_json_422(client: httpx.AsyncClient, body: Any) -> None:
    response = await client.post("/api/auth/register", json=body)
    assert response.status_code == 422
    assert response.json()["error"] == "bad_request"


async def test_invalid_json_gets_json_422(client: httpx.AsyncClient) -> None:
    response = await client.post(
        "/api/auth/login", content=b"{not json", headers={"content-type": "application/json"}
    )
    assert response.status_code == 422
    assert response.json()["error"] == "bad_request"


async def test_login_and_logout(client: httpx.AsyncClient) -> None:
    await register(client, "carol")
    response = await client.post("/api/auth/login", json={"name": "CAROL", "password": PASSWORD})
    assert response.status_code == 200
    token = response.json()["access_token"]
    assert response.json()["user"]["name"] == "carol"

    assert (await client.post("/api/auth/logout", headers=bearer(token))).status_code == 204
    after = await client.get("/api/auth/me", headers=bearer(token))
    assert after.status_code == 401
    assert after.json()["error"] == "unauthorized"


async def test_each_login_is_a_separate_session(client: httpx.AsyncClient) -> None:
    first = (await register(client, "dave"))["access_token"]
    login = await client.post("/api/auth/login", json={"name": "dave", "password": PASSWORD})
    second = login.json()["access_token"]
    assert first != second
    await client.post("/api/auth/logout", headers=bearer(first))
    assert (await client.get("/api/auth/me", headers=bearer(second))).status_code == 200


@pytest.mark.parametrize(("name", "password"), [("erin", "wrong-password"), ("nobody", PASSWORD)])
async def test_bad_credentials(client: httpx.AsyncClient, name: str, password: str) -> None:
    await register(client, "erin")
    response = await client.post("/api/auth/login", json={"name": name, "password": password})
    assert response.status_code == 401
    # The same answer whether or not the name exists.
    assert response.json() == {"error": "bad_credentials", "message": "wrong name or password"}


async def test_guest_cannot_log_in_with_a_password(client: httpx.AsyncClient) -> None:
    guest = (await client.post("/api/auth/guest")).json()["user"]["name"]
    response = await client.post("/api/auth/login", json={"name": guest, "password": PASSWORD})
    assert response.status_code == 401


@pytest.fixture
async def throttled_client(db_url: str) -> AsyncIterator[httpx.AsyncClient]:
    app = create_app(
        make_settings(database_url=db_url, login_max_failures=3, login_window_seconds=600)
    )
    async with (
        app.router.lifespan_context(app),
        httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://t") as client,
    ):
        yield client


async def test_repeated_failures_are_throttled(throttled_client: httpx.AsyncClient) -> None:
    client = throttled_client
    await register(client, "frank")
    for _ in range(3):
        wrong = await client.post("/api/auth/login", json={"name": "frank", "password": "nope"})
        assert wrong.status_code == 401
    # Now even the right password waits: guessing cannot go on.
    response = await client.post("/api/auth/login", json={"name": "Frank", "password": PASSWORD})
    assert response.status_code == 429
    assert response.json()["error"] == "too_many_attempts"
    assert 0 < int(response.headers["Retry-After"]) <= 600
    # Other names are not affected.
    await register(client, "grace")
    ok = await client.post("/api/auth/login", json={"name": "grace", "password": PASSWORD})
    assert ok.status_code == 200


async def test_unknown_names_are_throttled_too(throttled_client: httpx.AsyncClient) -> None:
    for _ in range(3):
        await throttled_client.post("/api/auth/login", json={"name": "ghost", "password": "x"})
    response = await throttled_client.post(
        "/api/auth/login", json={"name": "ghost", "password": "x"}
    )
    assert response.status_code == 429


async def test_success_clears_earlier_failures(throttled_client: httpx.AsyncClient) -> None:
    client = throttled_client
    await register(client, "heidi")
    for _ in range(2):
        await client.post("/api/auth/login", json={"name": "heidi", "password": "nope"})
    ok = await client.post("/api/auth/login", json={"name": "heidi", "password": PASSWORD})
    assert ok.status_code == 200
    for _ in range(2):
        await client.post("/api/auth/login", json={"name": "heidi", "password": "nope"})
    ok = await client.post("/api/auth/login", json={"name": "heidi", "password": PASSWORD})
    assert ok.status_code == 200


async def ban(app: FastAPI, name: str, reason: str) -> None:
    async with app.state.db.session() as session:
        await session.execute(
            update(User).where(User.name == name).values(banned=True, ban_reason=reason)
        )
        await session.commit()


async def test_banned_user_cannot_log_in_and_tokens_stop_working(
    client: httpx.AsyncClient, app: FastAPI
) -> None:
    token = (await register(client, "ivan"))["access_token"]
    await ban(app, "ivan", "abusive chat")
    response = await client.post("/api/auth/login", json={"name": "ivan", "password": PASSWORD})
    assert response.status_code == 403
    assert response.json()["error"] == "banned"
    assert "abusive chat" in response.json()["message"]
    assert (await client.get("/api/auth/me", headers=bearer(token))).status_code == 401


async def test_guest_session(client: httpx.AsyncClient) -> None:
    response = await client.post("/api/auth/guest")
    assert response.status_code == 201
    body = response.json()
    assert re.fullmatch(r"guest-[0-9a-f]{6}", body["user"]["name"])
    assert body["user"]["kind"] == "guest"
    me = await client.get("/api/auth/me", headers=bearer(body["access_token"]))
    assert me.json()["name"] == body["user"]["name"]
    other = (await client.post("/api/auth/guest")).json()
    assert other["user"]["name"] != body["user"]["name"]


@pytest.mark.parametrize(
    "headers",
    [
        {},
        {"Authorization": "Bearer forged-token"},
        {"Authorization": "Bearer " + "x" * 5000},
        {"Authorization": "Basic YWxpY2U6c2VjcmV0"},
        {"Authorization": "Bearer"},
        {"Authorization": ""},
    ],
)
async def test_missing_or_forged_tokens_get_401(
    client: httpx.AsyncClient, headers: dict[str, str]
) -> None:
    response = await client.get("/api/auth/me", headers=headers)
    assert response.status_code == 401
    assert response.json()["error"] == "unauthorized"
    assert response.headers["WWW-Authenticate"] == "Bearer"


async def test_logout_without_token_gets_401(client: httpx.AsyncClient) -> None:
    assert (await client.post("/api/auth/logout")).status_code == 401


async def test_expired_token_is_refused(db_url: str) -> None:
    app = create_app(make_settings(database_url=db_url, token_ttl_hours=0))
    async with (
        app.router.lifespan_context(app),
        httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://t") as client,
    ):
        token = (await register(client, "judy"))["access_token"]
        assert (await client.get("/api/auth/me", headers=bearer(token))).status_code == 401
        async with app.state.db.session() as session:
            assert await user_for_token(session, token) is None


async def test_user_for_token(client: httpx.AsyncClient, app: FastAPI) -> None:
    token = (await register(client, "kate"))["access_token"]
    async with app.state.db.session() as session:
        user = await user_for_token(session, token)
        assert user is not None and user.name == "kate"
        assert await user_for_token(session, "unknown") is None
        assert await user_for_token(session, "") is None


@pytest.fixture
async def guarded(settings: Settings) -> AsyncIterator[tuple[FastAPI, httpx.AsyncClient]]:
    """An app with the auth routes and two routes guarded by the optional-user and admin deps."""
    router = APIRouter()

    @router.get("/probe/optional")
    async def optional(user: OptionalUser) -> dict[str, str | None]:
        return {"name": user.name if user else None}

    @router.get("/probe/admin")
    async def admin(user: AdminUser) -> dict[str, str]:
        return {"name": user.name}

    app = FastAPI(lifespan=lifespan)
    app.state.settings = settings
    install_error_handlers(app)
    app.include_router(auth.router)
    app.include_router(router)
    async with (
        app.router.lifespan_context(app),
        httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://t") as client,
    ):
        yield app, client


async def test_admin_and_optional_dependencies(
    guarded: tuple[FastAPI, httpx.AsyncClient],
) -> None:
    app, client = guarded
    token = (await register(client, "leo"))["access_token"]
    assert (await client.get("/probe/optional")).json() == {"name": None}
    assert (await client.get("/probe/optional", headers=bearer(token))).json() == {"name": "leo"}
    forged = await client.get("/probe/optional", headers=bearer("forged"))
    assert forged.status_code == 401

    assert (await client.get("/probe/admin")).status_code == 401
    refused = await client.get("/probe/admin", headers=bearer(token))
    assert refused.status_code == 403
    assert refused.json()["error"] == "forbidden"

    async with app.state.db.session() as session:
        await session.execute(update(User).where(User.name == "leo").values(role="admin"))
        await session.commit()
    assert (await client.get("/probe/admin", headers=bearer(token))).json() == {"name": "leo"}
