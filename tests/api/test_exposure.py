"""What the server shows beyond the game: the API docs (API_DOCS, off in production by default)
and the Prometheus metrics (METRICS_ALLOW: loopback and private networks by default)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import httpx
import pytest
from pydantic import ValidationError

from app.main import create_app
from tests.conftest import make_settings
from tests.support.server import serve

DOCS = ("/docs", "/redoc", "/openapi.json")
PUBLIC = ("203.0.113.7", 40000)  # an address of the Internet (TEST-NET-3)


@asynccontextmanager
async def client_with(
    db_url: str, peer: tuple[str, int] = ("127.0.0.1", 40000), **overrides: Any
) -> AsyncIterator[httpx.AsyncClient]:
    """A client of an app with these settings, calling from `peer`."""
    app = create_app(make_settings(database_url=db_url, **overrides))
    transport = httpx.ASGITransport(app=app, client=peer)
    async with (
        app.router.lifespan_context(app),
        httpx.AsyncClient(transport=transport, base_url="http://testserver") as client,
    ):
        yield client


@pytest.mark.parametrize(
    ("environment", "api_docs", "served"),
    [
        ("development", None, True),
        ("test", None, True),
        ("production", None, False),
        ("production", True, True),
        ("development", False, False),
    ],
)
async def test_api_docs_follow_api_docs(
    db_url: str, environment: str, api_docs: bool | None, served: bool
) -> None:
    async with client_with(db_url, environment=environment, api_docs=api_docs) as client:
        for path in DOCS:
            response = await client.get(path)
            assert response.status_code == (200 if served else 404), path
        # The API itself is there either way.
        assert (await client.get("/api/games")).status_code == 200


@pytest.mark.parametrize(
    ("allow", "peer", "allowed"),
    [
        (None, ("127.0.0.1", 1), True),  # the default: loopback and private networks
        (None, ("10.1.2.3", 1), True),
        (None, ("172.20.0.5", 1), True),
        (None, ("::1", 1), True),
        (None, PUBLIC, False),
        ("*", PUBLIC, True),
        ("203.0.113.0/24", PUBLIC, True),
        ("203.0.113.0/24", ("127.0.0.1", 1), False),
        ("192.0.2.1, 203.0.113.7", PUBLIC, True),
    ],
)
async def test_metrics_answer_only_allowed_addresses(
    db_url: str, allow: str | None, peer: tuple[str, int], allowed: bool
) -> None:
    overrides = {} if allow is None else {"metrics_allow": allow}
    async with client_with(db_url, peer, **overrides) as client:
        response = await client.get("/metrics")
    if allowed:
        assert response.status_code == 200
        assert "checkers_http_requests_total" in response.text
    else:
        assert response.status_code == 403
        assert response.json()["error"] == "forbidden"
        assert "METRICS_ALLOW" in response.json()["message"]


@pytest.mark.server  # uvicorn reads X-Forwarded-For from a trusted proxy
async def test_metrics_judge_the_client_behind_a_trusted_proxy(db_url: str) -> None:
    """Through a proxy (trusted by FORWARDED_ALLOW_IPS), the address is the client's own."""
    async with (
        serve(make_settings(database_url=db_url)) as served,
        served.http() as client,
    ):
        direct = await client.get("/metrics")
        forwarded = await client.get("/metrics", headers={"X-Forwarded-For": PUBLIC[0]})
    assert direct.status_code == 200
    assert forwarded.status_code == 403


def test_a_bad_metrics_allow_is_refused_at_start() -> None:
    with pytest.raises(ValidationError, match="not an address or network: 'localhost'"):
        make_settings(metrics_allow="127.0.0.1,localhost")
