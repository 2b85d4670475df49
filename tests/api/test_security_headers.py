"""Security headers on every HTTP response: the browser client's page and files, the API, errors;
HSTS only over TLS (directly, or through a trusted proxy's `X-Forwarded-Proto`)."""

from __future__ import annotations

import httpx
import pytest
from fastapi import FastAPI

from app.config import Settings
from tests.support.server import serve

PATHS = [
    "/",
    "/index.html",
    "/js/main.js",
    "/css/app.css",
    "/healthz",
    "/api/games",
    "/api/auth/me",  # 401
    "/api/games/999999",  # 404
    "/no/such/page",
]


def directives(policy: str) -> dict[str, str]:
    parts = (part.strip().split(" ", 1) for part in policy.split(";") if part.strip())
    return {part[0]: part[1] if len(part) > 1 else "" for part in parts}


@pytest.mark.parametrize("path", PATHS)
async def test_every_response_carries_the_headers(client: httpx.AsyncClient, path: str) -> None:
    response = await client.get(path)
    headers = response.headers
    assert headers["X-Content-Type-Options"] == "nosniff"
    assert headers["X-Frame-Options"] == "DENY"
    assert headers["Referrer-Policy"] == "no-referrer"
    policy = directives(headers["Content-Security-Policy"])
    assert policy["default-src"] == "'self'"
    assert policy["script-src"] == "'self'"  # no inline script, no eval
    assert policy["style-src"] == "'self'"
    assert policy["connect-src"] == "'self'"
    assert policy["frame-ancestors"] == "'none'"
    assert policy["base-uri"] == "'none'"
    assert policy["form-action"] == "'self'"
    assert policy["object-src"] == "'none'"
    assert "Strict-Transport-Security" not in headers  # plain HTTP


async def test_hsts_only_over_tls(app: FastAPI) -> None:
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="https://testserver") as client:
        response = await client.get("/")
    assert response.headers["Strict-Transport-Security"].startswith("max-age=")


@pytest.mark.server  # uvicorn takes the scheme from a trusted proxy's header
async def test_hsts_behind_a_trusted_proxy_terminating_tls(settings: Settings) -> None:
    """uvicorn takes the scheme from X-Forwarded-Proto when the peer is a trusted proxy
    (FORWARDED_ALLOW_IPS, 127.0.0.1 by default): that is what the browser used."""
    async with serve(settings) as served, served.http() as client:
        plain = await client.get("/healthz")
        tls = await client.get("/healthz", headers={"X-Forwarded-Proto": "https"})
    assert "Strict-Transport-Security" not in plain.headers
    assert tls.headers["Strict-Transport-Security"].startswith("max-age=")
    assert tls.headers["X-Content-Type-Options"] == "nosniff"


async def test_the_api_docs_may_load_their_cdn_scripts(client: httpx.AsyncClient) -> None:
    """Swagger UI and ReDoc (development) start with an inline script from a CDN."""
    for path in ("/docs", "/redoc"):
        response = await client.get(path)
        assert response.status_code == 200
        policy = directives(response.headers["Content-Security-Policy"])
        assert "https://cdn.jsdelivr.net" in policy["script-src"]
        assert policy["frame-ancestors"] == "'none'"
