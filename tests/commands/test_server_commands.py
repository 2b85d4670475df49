"""`checkers migrate`, `checkers create-admin` and `checkers serve`, run as an operator would."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from sqlalchemy import select
from websockets.sync.client import connect

from app.db.engine import Database
from app.db.models import User
from tests.support.ports import free_port

REPO = Path(__file__).resolve().parents[2]
PASSWORD = "correct-horse-battery"


def environment(database_url: str, **extra: str) -> dict[str, str]:
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("REDIS_URL", "CHECKERS_ADMIN_PASSWORD", "DATABASE_URL")
    }
    return env | {"DATABASE_URL": database_url, "PYTHONPATH": str(REPO)} | extra


def checkers(
    *args: str, database_url: str, cwd: Path, stdin: str = "", **env: str
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "app.cli", *args],
        cwd=cwd,
        env=environment(database_url, **env),
        input=stdin,
        capture_output=True,
        text=True,
        timeout=60,
    )


async def role_of(database_url: str, name: str) -> str | None:
    db = Database(database_url)
    try:
        async with db.session() as session:
            return await session.scalar(select(User.role).where(User.name == name))
    finally:
        await db.dispose()


def test_migrate_creates_the_sqlite_database_and_can_run_again(tmp_path: Path) -> None:
    url = "sqlite+aiosqlite:///./var/checkers.db"
    first = checkers("migrate", database_url=url, cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    assert (tmp_path / "var" / "checkers.db").is_file()
    again = checkers("migrate", database_url=url, cwd=tmp_path)
    assert again.returncode == 0, again.stderr
    assert "up to date" in again.stdout


def test_migrate_says_what_it_did(tmp_path: Path) -> None:
    from app.db.migrate import head_revision, upgrade

    head = head_revision()
    url = f"sqlite+aiosqlite:///{tmp_path / 'new.db'}"
    created = checkers("migrate", database_url=url, cwd=tmp_path)
    assert created.returncode == 0, created.stderr
    assert f"created the database schema at revision {head}" in created.stdout
    again = checkers("migrate", database_url=url, cwd=tmp_path)
    assert f"already up to date at revision {head}" in again.stdout

    older = f"sqlite+aiosqlite:///{tmp_path / 'older.db'}"
    upgrade(older, "0001")
    upgraded = checkers("migrate", database_url=older, cwd=tmp_path)
    assert upgraded.returncode == 0, upgraded.stderr
    assert f"upgraded the database schema from revision 0001 to {head}" in upgraded.stdout


def test_migrate_without_a_usable_database_is_a_one_line_error(tmp_path: Path) -> None:
    for url in (
        "postgresql+asyncpg://postgres@127.0.0.1:5432/no_such_db",  # the server says so
        f"postgresql+asyncpg://postgres@127.0.0.1:{free_port()}/test",  # nothing listening
    ):
        done = checkers("migrate", database_url=url, cwd=tmp_path)
        assert done.returncode == 3, done.stderr
        assert done.stdout == "" and "Traceback" not in done.stderr
        (line,) = done.stderr.splitlines()
        assert line.startswith("checkers: error: cannot use the database")
        assert "DATABASE_URL" in line


def test_serve_on_an_unmigrated_database_says_to_migrate(tmp_path: Path) -> None:
    url = "sqlite+aiosqlite:///./never-migrated.db"
    done = checkers("serve", "--port", str(free_port()), database_url=url, cwd=tmp_path)
    assert done.returncode == 3 and "Traceback" not in done.stderr
    (line,) = done.stderr.splitlines()
    assert "checkers migrate" in line
    assert not (tmp_path / "never-migrated.db").exists()


async def test_create_admin_from_the_environment(db_url: str, tmp_path: Path) -> None:
    done = checkers(
        "create-admin", "boss", database_url=db_url, cwd=tmp_path, CHECKERS_ADMIN_PASSWORD=PASSWORD
    )
    assert done.returncode == 0, done.stderr
    assert "boss is an administrator (created)" in done.stdout
    assert await role_of(db_url, "boss") == "admin"


async def test_create_admin_promotes_an_existing_account(db_url: str, tmp_path: Path) -> None:
    from app.accounts import service as accounts
    from tests.conftest import make_settings

    db = Database(db_url)
    try:
        async with db.session() as session:
            await accounts.register(session, make_settings(), "alice", PASSWORD)
    finally:
        await db.dispose()
    done = checkers("create-admin", "ALICE", database_url=db_url, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "alice is an administrator (promoted)" in done.stdout
    assert await role_of(db_url, "alice") == "admin"


@pytest.mark.parametrize(
    ("env", "stdin", "message"),
    [
        ({"CHECKERS_ADMIN_PASSWORD": "short"}, "", "at least 8 characters"),
        ({}, f"{PASSWORD}\nsomething-else\n", "the two passwords differ"),
    ],
)
async def test_create_admin_refuses_bad_passwords(
    db_url: str, tmp_path: Path, env: dict[str, str], stdin: str, message: str
) -> None:
    done = checkers("create-admin", "boss", database_url=db_url, cwd=tmp_path, stdin=stdin, **env)
    assert done.returncode == 2
    assert message in done.stderr
    assert await role_of(db_url, "boss") is None


def test_create_admin_asks_to_migrate_first(tmp_path: Path) -> None:
    url = f"sqlite+aiosqlite:///{tmp_path / 'empty.db'}"
    done = checkers(
        "create-admin", "boss", database_url=url, cwd=tmp_path, CHECKERS_ADMIN_PASSWORD=PASSWORD
    )
    assert done.returncode == 2
    assert "checkers migrate" in done.stderr


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """`checkers serve` on a free port over a migrated SQLite file; yields its base URL."""
    tmp_path = tmp_path_factory.mktemp("serve")
    url = f"sqlite+aiosqlite:///{tmp_path / 'checkers.db'}"
    assert checkers("migrate", database_url=url, cwd=tmp_path).returncode == 0
    port = free_port()
    log = tmp_path / "serve.log"
    with log.open("w") as log_file:
        process = subprocess.Popen(
            [sys.executable, "-m", "app.cli", "serve", "--port", str(port)],
            cwd=tmp_path,
            env=environment(url, HTTP_HEADER_TIMEOUT_SECONDS="1"),
            stdout=log_file,
            stderr=subprocess.STDOUT,
        )
    base = f"http://127.0.0.1:{port}"
    try:
        for _ in range(300):
            if process.poll() is not None:
                pytest.fail(f"checkers serve exited:\n{log.read_text()}")
            try:
                httpx.get(f"{base}/healthz", timeout=1)
                break
            except httpx.TransportError:
                time.sleep(0.1)
        yield base
    finally:
        process.terminate()
        process.wait(timeout=30)


def test_serve_answers_over_http(server: str) -> None:
    assert httpx.get(f"{server}/healthz").json()["status"] == "ok"
    guest = httpx.post(f"{server}/api/auth/guest")
    assert guest.status_code == 201
    me = httpx.get(
        f"{server}/api/auth/me",
        headers={"Authorization": f"Bearer {guest.json()['access_token']}"},
    )
    assert me.json()["kind"] == "guest"


def test_serve_turns_websocket_compression_off(server: str) -> None:
    """Small game frames cost more to compress than they save (docs/benchmarks.md)."""
    ws_url = server.replace("http://", "ws://") + "/ws"
    with connect(ws_url, compression="deflate", open_timeout=10) as ws:
        assert ws.response is not None
        assert "Sec-WebSocket-Extensions" not in ws.response.headers
        assert json.loads(ws.recv(timeout=10))["type"] == "welcome"


def closed_within(sock: socket.socket, seconds: float) -> bool:
    """Whether the server closes the connection within `seconds` (reading what it sends)."""
    sock.settimeout(seconds)
    try:
        while sock.recv(4096):
            pass
    except TimeoutError:
        return False
    except ConnectionResetError:
        return True
    return True


def test_serve_closes_a_connection_that_never_finishes_its_request_head(server: str) -> None:
    """Exposed without the proxy, a crowd of half-sent requests (slow loris) must not hold the
    process's files: `checkers serve` closes a connection whose request head is not complete
    HTTP_HEADER_TIMEOUT_SECONDS (1 here) after it opened or after its previous response."""
    port = int(server.rsplit(":", 1)[1])
    with socket.create_connection(("127.0.0.1", port)) as slow:
        slow.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n")
        time.sleep(0.5)
        slow.sendall(b"X-Slow: 1\r\n")  # trickling in does not extend the deadline
        assert closed_within(slow, 3.0)
    with socket.create_connection(("127.0.0.1", port)) as kept:
        kept.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
        kept.settimeout(3)
        assert kept.recv(4096).startswith(b"HTTP/1.1 200")
        kept.sendall(b"GET /healthz HTTP/1.1\r\n")  # the next request, never finished
        assert closed_within(kept, 3.0)
    # A request sent at once is answered as ever.
    assert httpx.get(f"{server}/healthz").status_code == 200
