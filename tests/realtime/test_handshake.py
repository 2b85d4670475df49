"""Opening `/ws`: the token travels in `Sec-WebSocket-Protocol` (never in the URL, so never in a
log), and a browser page of another site is refused before the upgrade."""

from __future__ import annotations

import asyncio
import json
import logging
import os
import socket
import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest
import websockets
from websockets.exceptions import ConnectionClosed, InvalidStatus

from app.config import Settings
from tests.conftest import make_settings
from tests.support.logs import server_log
from tests.support.ports import free_port
from tests.support.server import ROOT, Served, http_client
from tests.support.ws import guest_token


def ws_url(served: Served | str, query: str = "") -> str:
    base = served if isinstance(served, str) else served.url
    return base.replace("http://", "ws://") + "/ws" + query


def offer(token: str) -> list[Any]:
    """What a client offers: the protocol, and its token as a second subprotocol."""
    return ["checkers", f"token.{token}"]


async def welcome(ws: websockets.ClientConnection) -> dict[str, Any]:
    message: dict[str, Any] = json.loads(await asyncio.wait_for(ws.recv(), 10))
    assert message["type"] == "welcome", message
    return message


async def refused(ws: websockets.ClientConnection) -> tuple[dict[str, Any], int, str]:
    """The error the server sends before closing, and its close code and reason."""
    error = json.loads(await asyncio.wait_for(ws.recv(), 10))
    with pytest.raises(ConnectionClosed) as closed:
        await asyncio.wait_for(ws.recv(), 10)
    frame = closed.value.rcvd
    assert frame is not None
    return error, frame.code, frame.reason


# --- the token -------------------------------------------------------------------------------


async def test_the_token_is_offered_as_a_subprotocol(server: Served) -> None:
    token = await guest_token(server.url)
    async with websockets.connect(ws_url(server), subprotocols=offer(token)) as ws:
        greeting = await welcome(ws)
        assert greeting["user"]["name"].startswith("guest-")
        # The server picks `checkers` (browsers require one of those offered) and never
        # sends the token back.
        assert ws.subprotocol == "checkers"
        assert ws.response is not None
        assert token not in str(ws.response.headers)


async def test_checkers_alone_is_an_anonymous_spectator(server: Served) -> None:
    async with websockets.connect(ws_url(server), subprotocols=["checkers"]) as ws:
        assert (await welcome(ws))["user"] is None
        assert ws.subprotocol == "checkers"


async def test_a_bad_token_in_the_header_is_refused_with_1008(server: Served) -> None:
    async with websockets.connect(ws_url(server), subprotocols=offer("forged")) as ws:
        error, code, _ = await refused(ws)
        assert (error["type"], error["code"], code) == ("error", "unauthorized", 1008)


async def test_two_tokens_are_refused(server: Served) -> None:
    one, two = await guest_token(server.url), await guest_token(server.url)
    protocols: list[Any] = ["checkers", f"token.{one}", f"token.{two}"]
    async with websockets.connect(ws_url(server), subprotocols=protocols) as ws:
        error, code, _ = await refused(ws)
        assert (error["code"], code) == ("unauthorized", 1008)
        assert "one token" in error["message"]


async def test_a_token_in_the_url_is_refused_with_a_pointer_to_the_header(server: Served) -> None:
    token = await guest_token(server.url)
    async with websockets.connect(ws_url(server, f"?token={token}")) as ws:
        error, code, reason = await refused(ws)
    assert (error["code"], code) == ("unauthorized", 1008)
    assert "Sec-WebSocket-Protocol" in error["message"] and "Sec-WebSocket-Protocol" in reason


async def wait_http(url: str, process: asyncio.subprocess.Process) -> None:
    async with http_client(url) as client:
        for _ in range(600):
            if process.returncode is not None:
                raise RuntimeError(f"the server exited with {process.returncode}")
            try:
                if (await client.get("/healthz")).status_code == 200:
                    return
            except httpx.TransportError:
                pass
            await asyncio.sleep(0.05)
    raise RuntimeError("the server did not start")


async def test_tokens_never_reach_the_log(db_url: str, tmp_path: Path) -> None:
    """`checkers serve` as operators run it, logging everything (debug): neither the header
    way nor the URL of an older client leaves the token in its output."""
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    env = os.environ | {
        "PYTHONPATH": str(ROOT),
        "ENVIRONMENT": "test",
        "DATABASE_URL": db_url,
        "PORT": str(port),
        "LOG_LEVEL": "debug",
    }
    env.pop("REDIS_URL", None)
    log_path = tmp_path / "server.log"
    with log_path.open("wb") as log:
        process = await asyncio.create_subprocess_exec(
            *(sys.executable, "-m", "app.cli", "serve", "--host", "127.0.0.1"),
            cwd=tmp_path,  # no stray .env is read
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        try:
            await wait_http(url, process)
            token = await guest_token(url)
            async with websockets.connect(ws_url(url), subprotocols=offer(token)) as ws:
                await welcome(ws)
            for query in (f"?token={token}", f"?room=1&token={token}&x=1"):
                async with websockets.connect(ws_url(url, query)) as ws:
                    await ws.recv()
            async with http_client(url) as http:
                await http.get(f"/api/auth/me?token={token}")
        finally:
            process.terminate()
            await process.wait()
    text = log_path.read_text()
    assert '"WebSocket /ws' in text and "GET /api/auth/me" in text  # the requests are logged
    assert token not in text
    assert "token=[redacted]" in text


# --- the Origin --------------------------------------------------------------------------------


@pytest.fixture
def settings(db_url: str) -> Settings:
    return make_settings(database_url=db_url, allowed_origins="https://play.example.com")


async def test_a_program_sending_no_origin_is_accepted(server: Served) -> None:
    async with websockets.connect(ws_url(server)) as ws:
        await welcome(ws)


async def test_the_servers_own_origin_is_accepted(server: Served) -> None:
    async with websockets.connect(ws_url(server), origin=server.url) as ws:  # type: ignore[arg-type]
        await welcome(ws)


async def test_a_listed_origin_is_accepted(server: Served) -> None:
    origin: Any = "https://play.example.com"
    async with websockets.connect(ws_url(server), origin=origin) as ws:
        await welcome(ws)


@pytest.mark.parametrize(
    "origin",
    [
        "https://evil.example",
        "http://127.0.0.1",  # another port
        "https://127.0.0.1:{port}",  # another scheme
        "http://play.example.com",  # listed with https
        "null",  # a sandboxed page or a file
    ],
)
async def test_another_origin_is_refused_before_the_upgrade(server: Served, origin: str) -> None:
    port = server.url.rsplit(":", 1)[1]
    with server_log() as records, pytest.raises(InvalidStatus) as refused_:
        async with websockets.connect(ws_url(server), origin=origin.format(port=port)):  # type: ignore[arg-type]
            pass
    assert refused_.value.response.status_code == 403
    # A refusal is the client's doing: nothing at ERROR in the server's log.
    assert [r.getMessage() for r in records if r.levelno >= logging.ERROR] == []


@asynccontextmanager
async def connect_via(server: Served, host: str, **options: Any) -> AsyncIterator[None]:
    """Connect as a proxy would: to the server's socket, with `host` in the Host header."""
    port = int(server.url.rsplit(":", 1)[1])
    sock = socket.create_connection(("127.0.0.1", port))
    async with websockets.connect(f"ws://{host}/ws", sock=sock, **options) as ws:
        await welcome(ws)
        yield


async def test_the_public_origin_behind_a_trusted_proxy_is_accepted(server: Served) -> None:
    """A TLS-terminating proxy (trusted, here 127.0.0.1) passes the Host on and says
    `X-Forwarded-Proto: https`: the page at https://<host> is the server's own."""
    origin: Any = "https://checkers.example.org"
    forwarded = {"X-Forwarded-Proto": "https"}
    async with connect_via(
        server, "checkers.example.org", origin=origin, additional_headers=forwarded
    ):
        pass
    with pytest.raises(InvalidStatus) as refused_:  # the same without the proxy's word
        async with connect_via(server, "checkers.example.org", origin=origin):
            pass
    assert refused_.value.response.status_code == 403
