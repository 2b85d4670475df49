"""An administrator's HTTP client for the `/api/admin` tests: the account, its token, calls."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import httpx
from fastapi import FastAPI

from app.accounts import service as accounts
from tests.support.server import http_client

ADMIN_NAME = "root"
ADMIN_PASSWORD = "operator-passphrase-2026"


async def log_in(client: httpx.AsyncClient, name: str, password: str) -> httpx.Response:
    return await client.post("/api/auth/login", json={"name": name, "password": password})


@asynccontextmanager
async def admin_client(
    app: FastAPI, base_url: str, transport: httpx.AsyncBaseTransport | None = None
) -> AsyncIterator[httpx.AsyncClient]:
    """Create the administrator as `checkers create-admin` does, log in, and send its token."""
    async with app.state.db.session() as session:
        await accounts.create_admin(session, ADMIN_NAME, ADMIN_PASSWORD)
    client_of = (
        http_client(base_url)
        if transport is None
        else httpx.AsyncClient(base_url=base_url, transport=transport)
    )
    async with client_of as client:
        response = await log_in(client, ADMIN_NAME, ADMIN_PASSWORD)
        assert response.status_code == 200, response.text
        client.headers["Authorization"] = f"Bearer {response.json()['access_token']}"
        yield client


def ok(response: httpx.Response) -> Any:
    """The JSON body of a successful answer (the body is shown when it is not)."""
    assert response.status_code in (200, 201), response.text
    return response.json()


async def rooms_by_slug(admin: httpx.AsyncClient) -> dict[str, dict[str, Any]]:
    return {room["slug"]: room for room in ok(await admin.get("/api/admin/rooms"))["data"]}
