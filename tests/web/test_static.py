"""The browser client is served by the app itself, next to the API, without shadowing it."""

from __future__ import annotations

import httpx


async def test_the_client_is_served_at_the_root(client: httpx.AsyncClient) -> None:
    page = await client.get("/")
    assert page.status_code == 200
    assert page.headers["content-type"].startswith("text/html")
    assert '<script type="module" src="js/main.js">' in page.text
    # Revalidated on every visit, so an upgrade is never hidden by a cached module.
    assert page.headers["cache-control"] == "no-cache"

    module = await client.get("/js/main.js")
    assert module.status_code == 200
    assert "javascript" in module.headers["content-type"]


async def test_the_api_keeps_its_own_routes_and_json_errors(client: httpx.AsyncClient) -> None:
    assert (await client.get("/healthz")).status_code == 200
    missing = await client.get("/api/no-such-thing")
    assert missing.status_code == 404
    assert missing.json()["error"] == "not_found"
    assert (await client.get("/js/no-such-module.js")).json()["error"] == "not_found"
