"""Fixtures of the browser tests: a real uvicorn server and Debian's Chromium driven by Playwright.

- `server`: the whole application served by uvicorn on a free port (port 0) in a thread of its
  own, on a migrated SQLite database in `tmp_path` (copied from one migrated once per test
  process) and the in-process broker (`.url`, `.database_url`, `.clock`); `server_url` is its
  URL. `running_server(directory, **settings)` starts one with other settings.
- `browser`: headless Chromium from `CHROMIUM_PATH` (default `/usr/bin/chromium`). Playwright
  gives every launch a fresh temporary profile, and every `new_context()` is as isolated as a
  separate browser: one context per person in a test. Skipped, with the reason, only when the
  browser binary is absent.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import uvicorn
from playwright.sync_api import Browser, sync_playwright

from app.clock import FakeClock
from app.main import create_app
from tests.conftest import make_settings, migrated_sqlite
from tests.e2e.people import JOURNAL, PAGES
from tests.support.server import QuickServer

CHROMIUM_PATH = os.environ.get("CHROMIUM_PATH", "/usr/bin/chromium")
# Without the background-networking flags Chromium keeps calling home on a closed network.
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
SERVER_START_TIMEOUT_S = 30.0


# Module scope, not session: Playwright's sync API keeps an event loop running in this thread
# while it is open, which would stop every async test collected after the browser tests.
@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    if not Path(CHROMIUM_PATH).is_file():
        pytest.skip(f"no Chromium at {CHROMIUM_PATH}: install it (apt) or set CHROMIUM_PATH")
    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(
            executable_path=CHROMIUM_PATH, headless=True, args=CHROMIUM_ARGS
        )
        try:
            yield chromium
        finally:
            chromium.close()


@dataclass(frozen=True)
class LiveServer:
    url: str  # e.g. http://127.0.0.1:41234
    database_url: str
    clock: FakeClock  # the server's time: advance it to pass a deadline at once


@contextmanager
def running_server(directory: Path, **settings: Any) -> Iterator[LiveServer]:
    """Serve the app on a fresh database in `directory` (a copy of one migrated once), with
    `settings` overriding defaults, on a `FakeClock`."""
    clock = FakeClock()
    database_url = migrated_sqlite(directory / "e2e.db")
    app = create_app(make_settings(database_url=database_url, **settings), clock)
    config = uvicorn.Config(
        app, host="127.0.0.1", port=0, log_level="warning", ws_per_message_deflate=False
    )
    uvicorn_server = QuickServer(config)
    thread = threading.Thread(target=uvicorn_server.run, name="e2e-server", daemon=True)
    thread.start()
    deadline = time.monotonic() + SERVER_START_TIMEOUT_S
    while not uvicorn_server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError("the server did not start")
        time.sleep(0.05)
    port = uvicorn_server.servers[0].sockets[0].getsockname()[1]
    try:
        yield LiveServer(f"http://127.0.0.1:{port}", database_url, clock)
    finally:
        uvicorn_server.stop()
        thread.join(timeout=SERVER_START_TIMEOUT_S)


@pytest.fixture
def server(tmp_path: Path) -> Iterator[LiveServer]:
    with running_server(tmp_path) as live_server:
        yield live_server


@pytest.fixture
def server_url(server: LiveServer) -> str:
    return server.url


@pytest.fixture(autouse=True)
def _journal() -> Iterator[None]:
    """Each browser test starts a fresh journal of its pages (see `tests.e2e.people`)."""
    JOURNAL.clear()
    PAGES.clear()
    yield


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
    report = yield
    if report.failed and JOURNAL:
        report.sections.append(("what the pages did", "\n".join(JOURNAL)))
    return report
