"""The websocket face's wire: here `server` is a real uvicorn server on a loopback port (frames,
handshakes, slow readers, connection caps are uvicorn's and the socket's), where the rest of
the suite serves the app in-process. `real_server` and `two_servers` are the suite's."""

from __future__ import annotations

import pytest

from tests.support.server import Served


@pytest.fixture
async def server(real_server: Served) -> Served:
    return real_server
