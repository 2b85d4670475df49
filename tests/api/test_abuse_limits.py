"""Limits against abuse of the accounts face: log-in throttling per address and per name,
registrations and guests per address, reserved names.

Each client address is set on the ASGI transport, as uvicorn sets `request.client` (from
`X-Forwarded-For` only for trusted proxies). Passwords are hashed by a cheap Argon2 that counts
its checks, so these tests can count how many guesses reached the hasher.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from datetime import timedelta
from typing import Any

import httpx
import pytest
from argon2 import PasswordHasher
from fastapi import FastAPI
from sqlalchemy import func, select

from app.accounts import service as accounts
from app.db.models import RateLimit, User
from app.main import create_app
from tests.conftest import make_settings

PASSWORD = "correct-horse-battery"
OWNER = "10.0.0.1"
STRANGER = "10.0.0.66"


class CountingHasher(PasswordHasher):
    """Argon2 at its cheapest, counting the checks and hashes it does."""

    def __init__(self) -> None:
        super().__init__(time_cost=1, memory_cost=8, parallelism=1)
        self.verified = 0
        self.hashed = 0

    def verify(self, hash: str | bytes, password: str | bytes) -> bool:  # noqa: A002
        self.verified += 1
        return super().verify(hash, password)

    def hash(self, password: str | bytes, *, salt: bytes | None = None) -> str:
        self.hashed += 1
        return super().hash(password, salt=salt)


@pytest.fixture
def hasher(monkeypatch: pytest.MonkeyPatch) -> CountingHasher:
    counting = CountingHasher()
    monkeypatch.setattr(accounts, "password_hasher", counting)
    return counting


AppFactory = Callable[..., Any]


@pytest.fixture
async def make_app(db_url: str, hasher: CountingHasher) -> AsyncIterator[AppFactory]:
    """`await make_app(**settings)`: the app with these settings, its lifespan running."""
    opened: list[Any] = []

    async def start(**overrides: Any) -> FastAPI:
        app = create_app(make_settings(database_url=db_url, **overrides))
        context = app.router.lifespan_context(app)
        await context.__aenter__()
        opened.append(context)
        return app

    yield start
    for context in reversed(opened):
        await context.__aexit__(None, None, None)


@asynccontextmanager
async def client_at(app: FastAPI, address: str) -> AsyncIterator[httpx.AsyncClient]:
    transport = httpx.ASGITransport(app=app, client=(address, 40000))
    async with httpx.AsyncClient(transport=transport, base_url="http://t") as client:
        yield client


async def post(app: FastAPI, address: str, path: str, body: Any = None) -> httpx.Response:
    async with client_at(app, address) as client:
        return await client.post(path, json=body)


async def log_in(app: FastAPI, address: str, name: str, password: str) -> httpx.Response:
    return await post(app, address, "/api/auth/login", {"name": name, "password": password})


async def register(app: FastAPI, address: str, name: str) -> None:
    body = {"name": name, "password": PASSWORD}
    response = await post(app, address, "/api/auth/register", body)
    assert response.status_code == 201, response.text


def assert_throttled(response: httpx.Response, code: str = "too_many_attempts") -> int:
    assert response.status_code == 429, response.text
    assert response.json()["error"] == code
    retry_after = int(response.headers["Retry-After"])
    assert retry_after >= 1
    return retry_after


async def age_limits(app: FastAPI, seconds: float) -> None:
    """Move every stored limit `seconds` into the past, as if that much time had gone by."""
    shift = timedelta(seconds=seconds)
    async with app.state.db.session() as session:
        for row in (await session.scalars(select(RateLimit))).all():
            row.at = row.at - shift if row.at is not None else None
            row.expires_at = row.expires_at - shift
            if row.trusted_until is not None:
                row.trusted_until = row.trusted_until - shift
        await session.commit()


# --- log-in ----------------------------------------------------------------------------------


async def test_a_strangers_failures_do_not_lock_the_owner_out(make_app: AppFactory) -> None:
    app = await make_app(login_max_failures=5)
    await register(app, OWNER, "frank")
    for _ in range(5):
        assert (await log_in(app, STRANGER, "frank", "wrong-guess")).status_code == 401
    assert_throttled(await log_in(app, STRANGER, "frank", "wrong-guess"))
    # The stranger is locked out, even with the right password …
    assert_throttled(await log_in(app, STRANGER, "frank", PASSWORD))
    # … the owner, from their own address, is not.
    assert (await log_in(app, OWNER, "frank", PASSWORD)).status_code == 200


async def test_concurrent_guesses_check_at_most_the_limit(
    make_app: AppFactory, hasher: CountingHasher
) -> None:
    app = await make_app(login_max_failures=5)
    await register(app, OWNER, "frank")
    hasher.verified = 0
    responses = await asyncio.gather(
        *(log_in(app, STRANGER, "frank", f"guess-{n}") for n in range(30))
    )
    statuses = sorted(r.status_code for r in responses)
    assert statuses == [401] * 5 + [429] * 25
    assert hasher.verified == 5


async def test_one_address_trying_many_names_is_refused(
    make_app: AppFactory, hasher: CountingHasher
) -> None:
    app = await make_app(login_address_max_failures=20, login_window_seconds=3600)
    for n in range(40):
        await register(app, f"10.1.0.{n}", f"player{n}")
    hasher.verified = 0
    statuses = [
        (await log_in(app, STRANGER, f"player{n}", "Summer2024!")).status_code for n in range(40)
    ]
    assert statuses == [401] * 20 + [429] * 20
    assert hasher.verified == 20
    last = await log_in(app, STRANGER, "player0", PASSWORD)
    assert_throttled(last)
    # Other addresses are not affected.
    assert (await log_in(app, OWNER, "player0", PASSWORD)).status_code == 200


async def test_unknown_names_cost_no_password_check(
    make_app: AppFactory, hasher: CountingHasher
) -> None:
    app = await make_app()
    response = await log_in(app, STRANGER, "nobody_here", PASSWORD)
    assert response.status_code == 401
    assert response.json() == {"error": "bad_credentials", "message": "wrong name or password"}
    assert (hasher.verified, hasher.hashed) == (0, 0)


async def test_many_addresses_on_one_name_delay_those_that_failed_but_not_the_owner(
    make_app: AppFactory,
) -> None:
    app = await make_app(login_max_failures=5, login_name_max_failures=3)
    await register(app, OWNER, "frank")
    # The owner logged in from OWNER before, then mistyped once.
    assert (await log_in(app, OWNER, "frank", PASSWORD)).status_code == 200
    assert (await log_in(app, OWNER, "frank", "typo")).status_code == 401
    for n in range(6):  # guesses from many addresses, one each
        assert (await log_in(app, f"10.2.0.{n}", "frank", "wrong-guess")).status_code == 401
    # An address that failed on the name waits while the name is under attack, longer the
    # more it is attacked …
    first = assert_throttled(await log_in(app, "10.2.0.0", "frank", "wrong-guess"))
    for n in range(6, 12):
        assert (await log_in(app, f"10.2.0.{n}", "frank", "wrong-guess")).status_code == 401
    assert assert_throttled(await log_in(app, "10.2.0.0", "frank", "wrong-guess")) > first
    # … but the owner gets in from a new address, and from one that logged in before.
    assert (await log_in(app, "10.3.0.1", "frank", PASSWORD)).status_code == 200
    assert (await log_in(app, OWNER, "frank", PASSWORD)).status_code == 200


async def test_a_locked_pair_waits_longer_each_time(make_app: AppFactory) -> None:
    app = await make_app(login_max_failures=2, login_window_seconds=300)
    await register(app, OWNER, "frank")
    for _ in range(2):
        assert (await log_in(app, STRANGER, "frank", "wrong-guess")).status_code == 401
    first = assert_throttled(await log_in(app, STRANGER, "frank", "wrong-guess"))
    assert 290 <= first <= 300
    await age_limits(app, first + 1)
    assert (await log_in(app, STRANGER, "frank", "wrong-guess")).status_code == 401
    second = assert_throttled(await log_in(app, STRANGER, "frank", "wrong-guess"))
    assert 590 <= second <= 600


async def test_old_failures_are_pruned(make_app: AppFactory) -> None:
    app = await make_app()
    for n in range(10):
        assert (await log_in(app, f"10.4.0.{n}", f"ghost{n}", "wrong-guess")).status_code == 401

    async def rows() -> int:
        async with app.state.db.session() as session:
            return int(await session.scalar(select(func.count()).select_from(RateLimit)) or 0)

    assert await rows() > 0
    await age_limits(app, 2 * 86400)
    assert (await log_in(app, OWNER, "ghost0", "wrong-guess")).status_code == 401
    # Only the counters of that last attempt remain.
    assert await rows() == 3


async def test_success_clears_the_pairs_failures_and_refunds_the_address(
    make_app: AppFactory,
) -> None:
    app = await make_app(login_max_failures=3, login_address_max_failures=3)
    await register(app, OWNER, "frank")
    for _ in range(10):
        assert (await log_in(app, OWNER, "frank", "typo")).status_code == 401
        assert (await log_in(app, OWNER, "frank", "typo")).status_code == 401
        assert (await log_in(app, OWNER, "frank", PASSWORD)).status_code == 200
        await age_limits(app, 300)  # the address's failures drain with time


async def test_existing_reserved_account_still_logs_in(make_app: AppFactory) -> None:
    app = await make_app()
    async with app.state.db.session() as session:
        session.add(
            User(name="admin", password_hash=accounts.password_hasher.hash(PASSWORD), role="admin")
        )
        await session.commit()
    assert (await log_in(app, OWNER, "admin", PASSWORD)).status_code == 200


# --- registration and guests ---------------------------------------------------------------


async def test_guests_are_limited_per_address(make_app: AppFactory) -> None:
    app = await make_app(guests_per_address=3, accounts_window_seconds=3600)
    for _ in range(3):
        assert (await post(app, STRANGER, "/api/auth/guest")).status_code == 201
    retry_after = assert_throttled(
        await post(app, STRANGER, "/api/auth/guest"), "too_many_accounts"
    )
    assert retry_after <= 3600
    assert (await post(app, OWNER, "/api/auth/guest")).status_code == 201
    async with app.state.db.session() as session:
        guests = await session.scalar(select(func.count()).where(User.kind == "guest"))
    assert guests == 4


async def test_concurrent_guests_do_not_exceed_the_limit(make_app: AppFactory) -> None:
    app = await make_app(guests_per_address=3)
    responses = await asyncio.gather(*(post(app, STRANGER, "/api/auth/guest") for _ in range(12)))
    assert sorted(r.status_code for r in responses) == [201] * 3 + [429] * 9


async def test_registrations_are_limited_per_address(make_app: AppFactory) -> None:
    app = await make_app(registrations_per_address=2)
    await register(app, STRANGER, "first")
    await register(app, STRANGER, "second")
    body = {"name": "third", "password": PASSWORD}
    response = await post(app, STRANGER, "/api/auth/register", body)
    assert_throttled(response, "too_many_accounts")
    # A refused name does not use up the address's registrations.
    taken = await post(app, OWNER, "/api/auth/register", {"name": "FIRST", "password": PASSWORD})
    assert taken.status_code == 409
    await register(app, OWNER, "third")
    await age_limits(app, 3600)
    await register(app, STRANGER, "fourth")


@pytest.mark.parametrize(
    "name",
    [
        "admin",
        "Administrator",
        "ROOT",
        "system",
        "moderator",
        "mod",
        "staff",
        "support",
        "checkers",
        "server",
        "null",
        "anonymous",
        "Admin_1",
        "ad-min",
        "sys_op",
    ],
)
async def test_reserved_names_are_refused(make_app: AppFactory, name: str) -> None:
    app = await make_app()
    response = await post(app, OWNER, "/api/auth/register", {"name": name, "password": PASSWORD})
    assert response.status_code == 422
    assert response.json()["error"] == "invalid_name"
    async with app.state.db.session() as session:
        people = select(func.count()).select_from(User).where(User.kind != "ai")
        assert await session.scalar(people) == 0


@pytest.mark.parametrize("name", ["modern", "rooted", "systems_fan", "adminton"])
async def test_names_that_only_contain_a_reserved_word_are_accepted(
    make_app: AppFactory, name: str
) -> None:
    app = await make_app()
    await register(app, OWNER, name)
