"""A real uvicorn server per test (on the parametrized database) and real websocket clients."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from app.config import Settings
from tests.conftest import PrivateRedis, make_settings
from tests.support.server import Served, cluster, serve


@pytest.fixture
def settings(db_url: str) -> Settings:
    # Short heartbeats, so that a server killed for a few seconds is seen to have been down.
    return make_settings(database_url=db_url, disconnect_grace_seconds=0.5, heartbeat_seconds=0.5)


@pytest.fixture
async def server(settings: Settings) -> AsyncIterator[Served]:
    async with serve(settings) as served:
        yield served


@pytest.fixture
async def real_server(settings: Settings) -> AsyncIterator[Served]:
    """A real uvicorn server on a loopback port: for what only the wire shows."""
    async with serve(settings) as served:
        yield served


@pytest.fixture
async def two_servers(db_url: str, private_redis: PrivateRedis) -> AsyncIterator[list[Served]]:
    """Two servers on one database and one Redis: two processes of a cluster."""
    settings = make_settings(
        database_url=db_url, redis_url=private_redis.url, disconnect_grace_seconds=0.5
    )
    async with cluster(settings) as servers:
        yield servers
