"""The application shell: health check, metrics, JSON errors, lifespan."""

from __future__ import annotations

from pathlib import Path

import httpx
from fastapi import FastAPI
from sqlalchemy import text

from app.config import Settings
from app.db.engine import Database
from app.main import create_app
from tests.conftest import PrivateRedis, make_settings
from tests.support.ports import free_port


def dependencies(response: httpx.Response) -> dict[str, str]:
    """What `/healthz` says of the server and its dependencies (leaving out its load)."""
    body = response.json()
    return {key: body[key] for key in ("status", "database", "broker")}


def client_for(app: FastAPI) -> httpx.AsyncClient:
    return httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://testserver")


async def test_healthy(client: httpx.AsyncClient) -> None:
    response = await client.get("/healthz")
    assert response.status_code == 200
    assert dependencies(response) == {"status": "ok", "database": "ok", "broker": "ok"}


async def test_unusable_database_is_reported(settings: Settings, tmp_path: Path) -> None:
    if settings.database_url.startswith("sqlite"):
        garbage = tmp_path / "garbage.db"
        garbage.write_bytes(b"this is not a database" * 100)
        broken = f"sqlite+aiosqlite:///{garbage}"
    else:
        broken = f"postgresql+asyncpg://postgres@127.0.0.1:{free_port()}/nowhere"
    app = create_app(settings)
    async with app.router.lifespan_context(app), client_for(app) as client:
        working = app.state.db
        app.state.db = Database(broken)  # the database goes away while the server runs
        try:
            response = await client.get("/healthz")
        finally:
            await app.state.db.dispose()
            app.state.db = working
    assert response.status_code == 503
    assert dependencies(response) == {"status": "down", "database": "down", "broker": "ok"}


async def test_redis_going_away_is_reported(db_url: str, private_redis: PrivateRedis) -> None:
    app = create_app(make_settings(database_url=db_url, redis_url=private_redis.url))
    async with app.router.lifespan_context(app), client_for(app) as client:
        assert (await client.get("/healthz")).status_code == 200
        await private_redis.stop()
        response = await client.get("/healthz")
        assert response.status_code == 503
        assert dependencies(response) == {"status": "down", "database": "ok", "broker": "down"}
        await private_redis.start()
        assert (await client.get("/healthz")).status_code == 200


async def test_lifespan_opens_and_closes_database_and_broker(settings: Settings) -> None:
    app = create_app(settings)
    async with app.router.lifespan_context(app):
        assert app.state.settings is settings
        assert await app.state.broker.ping()
        async with app.state.db.session() as session:
            assert await session.scalar(text("SELECT count(*) FROM rooms")) == 3
        broker = app.state.broker
    assert not await broker.ping()


async def test_metrics_count_requests_by_route(client: httpx.AsyncClient) -> None:
    await client.get("/healthz")
    await client.get("/no/such/page")
    response = await client.get("/metrics")
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/plain")
    text = response.text
    assert 'checkers_http_requests_total{method="GET",route="/healthz",status="200"}' in text
    assert 'status="404"' in text
    assert "/no/such/page" not in text  # labelled by route pattern: no series per URL
    for name in ("checkers_ws_connections", "checkers_moves_accepted_total", "checkers_games_live"):
        assert name in text


async def test_unknown_path_gets_a_json_404(client: httpx.AsyncClient) -> None:
    response = await client.get("/no/such/page")
    assert response.status_code == 404
    assert response.json() == {"error": "not_found", "message": "Not Found"}


async def test_wrong_method_gets_a_json_405(client: httpx.AsyncClient) -> None:
    response = await client.delete("/healthz")
    assert response.status_code == 405
    assert response.json()["error"] == "method_not_allowed"
