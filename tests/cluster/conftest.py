"""Several processes and real outages: servers killed, database connections cut, Redis stopped.
Here `server` is a real uvicorn server, as in tests/realtime."""

from __future__ import annotations

import pytest

from tests.support.server import Served


@pytest.fixture
async def server(real_server: Served) -> Served:
    return real_server
