"""Every REST operation, fuzzed from the OpenAPI document by schemathesis: no input gets a 5xx.

The server is real (uvicorn in a process of its own, on SQLite and on PostgreSQL, each with its
own database for the module), so schemathesis' synchronous calls never share an event loop with
the app. Calls carry a registered user's token, an administrator's on `/api/admin` routes; a
logout gets a fresh guest token so that it revokes neither. The budget is small
(`MAX_EXAMPLES` per operation, no shrinking): a regression guard, not an exhaustive search.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import httpx
import pytest
import schemathesis
from hypothesis import HealthCheck, Phase, settings
from schemathesis.checks import not_a_server_error

from app.analysis.board import SEARCH_WAIT_S
from tests.conftest import make_settings, migrated_sqlite, postgres_database
from tests.support.admin_client import ADMIN_NAME, ADMIN_PASSWORD
from tests.support.ports import free_port

pytestmark = pytest.mark.thorough  # generated inputs: seconds of CPU

ROOT = Path(__file__).resolve().parents[2]
MAX_EXAMPLES = 6
# The longest documented wait for an answer: the analysis board waits up to SEARCH_WAIT_S for a
# search on a machine whose cores are busy (schemathesis' own default is 10 s).
REPLY_SECONDS = SEARCH_WAIT_S + 15
USER_NAME, USER_PASSWORD = "fuzzer", "fuzzing-passphrase-2026"


class Fuzzed:
    """The server under test and the tokens its calls carry."""

    def __init__(self, url: str) -> None:
        self.url = url
        with httpx.Client(base_url=url) as client:
            user = {"name": USER_NAME, "password": USER_PASSWORD}
            self.user = client.post("/api/auth/register", json=user).json()["access_token"]
            admin = {"name": ADMIN_NAME, "password": ADMIN_PASSWORD}
            self.admin = client.post("/api/auth/login", json=admin).json()["access_token"]

    def token_for(self, method: str, path: str) -> str:
        if path.startswith("/api/admin"):
            return self.admin
        if path == "/api/auth/logout":
            with httpx.Client(base_url=self.url) as client:
                token: str = client.post("/api/auth/guest").json()["access_token"]
                return token
        return self.user


def _run(env: dict[str, str], *args: str) -> None:
    command = [sys.executable, "-m", "app.cli", *args]
    subprocess.run(command, env=env, cwd=ROOT, check=True, stdout=subprocess.DEVNULL)


@pytest.fixture(scope="module", params=["sqlite", "postgres"])
def fuzzed(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Fuzzed]:
    """A migrated database of the module's own, an administrator, and a server on it."""

    with ExitStack() as stack:
        if request.param == "sqlite":
            database_url = migrated_sqlite(tmp_path_factory.mktemp("fuzz") / "checkers.db")
        else:
            database_url = stack.enter_context(postgres_database(migrated=True))
        env = os.environ | {
            "PYTHONPATH": str(ROOT),
            "ENVIRONMENT": "test",
            "DATABASE_URL": database_url,
            "CHECKERS_ADMIN_PASSWORD": ADMIN_PASSWORD,
            "LOG_LEVEL": "warning",
            # Every call comes from 127.0.0.1, and logout needs a fresh guest per example.
            "GUESTS_PER_ADDRESS": "1000000",
            "REGISTRATIONS_PER_ADDRESS": "1000000",
        }
        env.pop("REDIS_URL", None)
        _run(env, "create-admin", ADMIN_NAME)
        port = free_port()
        server = subprocess.Popen(
            [sys.executable, "-m", "app.cli", "serve", "--port", str(port)],
            env=env,
            cwd=tmp_path_factory.mktemp("cwd"),  # no stray .env is read
        )
        try:
            url = f"http://127.0.0.1:{port}"
            _wait_healthy(url, server)
            yield Fuzzed(url)
        finally:
            server.terminate()
            server.wait(timeout=30)


def _wait_healthy(url: str, server: subprocess.Popen[bytes]) -> None:
    for _ in range(600):
        if server.poll() is not None:
            raise RuntimeError(f"the server exited with {server.returncode}")
        try:
            if httpx.get(url + "/healthz").status_code == 200:
                return
        except httpx.TransportError:
            pass
        time.sleep(0.05)
    raise RuntimeError("the server did not start")


def _openapi() -> dict[str, Any]:
    """The app's OpenAPI document (it depends on the code only, not on a database)."""
    from app.main import create_app

    document: dict[str, Any] = create_app(make_settings()).openapi()
    return document


# Every route but the bot API's NDJSON streams, which answer a valid request with a stream that
# never ends (tests/bots/test_bots.py covers their refusals: a bad or unknown id, no token).
schema = schemathesis.openapi.from_dict(_openapi()).exclude(path_regex=r"/stream/")


@schema.parametrize()
@settings(
    max_examples=MAX_EXAMPLES,
    deadline=None,
    phases=[Phase.explicit, Phase.generate],
    suppress_health_check=list(HealthCheck),
)
def test_no_input_gets_a_server_error(case: schemathesis.Case, fuzzed: Fuzzed) -> None:
    token = fuzzed.token_for(case.method.upper(), case.path)
    case.call_and_validate(
        base_url=fuzzed.url,
        headers={"Authorization": f"Bearer {token}"},
        checks=[not_a_server_error],
        timeout=REPLY_SECONDS,
    )
