"""The in-process harness: the app served in the test's own event loop, without a socket.

`serve_here(settings, clock)` runs the app's lifespan and yields a `Served` like a real server
does, at a URL of its own (`http://in-process-N.test`) that the test helpers recognise: HTTP
goes through `Transport` (an ASGI transport for httpx that streams, so NDJSON streams and
server-sent bodies arrive as they are written) and websockets through `AsgiSocket` (the
messages of the ASGI websocket protocol on two queues). Both carry the client's address in the
scope, as uvicorn puts it there, so the limits per address apply.

What only a real server shows stays with the real servers of `tests.support.server`: frame
sizes and compression (uvicorn's), the handshake's HTTP, slow readers and the TCP buffers,
several processes, outages.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
from collections.abc import AsyncIterator
from typing import Any

import httpx
from fastapi import FastAPI
from starlette.types import Message
from websockets.exceptions import ConnectionClosedError, ConnectionClosedOK, InvalidStatus
from websockets.frames import Close
from websockets.http11 import Response as HandshakeResponse

from app.clock import FakeClock
from app.config import Settings
from app.main import create_app

HOST = "in-process.test"
_numbers = itertools.count(1)
# The apps served here, by the base URL they answer at.
APPS: dict[str, FastAPI] = {}


def app_at(base_url: str) -> FastAPI | None:
    """The in-process app answering at `base_url` (None: a real server's URL)."""
    return APPS.get(base_url.rstrip("/"))


def _headers(base_url: str, extra: list[tuple[bytes, bytes]]) -> list[tuple[bytes, bytes]]:
    host = base_url.split("://", 1)[1].encode()
    return [(b"host", host), *extra]


class Transport(httpx.AsyncBaseTransport):
    """httpx's transport to an ASGI app in this event loop, streaming the response body: the
    response is returned as soon as its headers are sent, and its body read as it comes."""

    def __init__(self, app: FastAPI, client: tuple[str, int] = ("127.0.0.1", 50000)) -> None:
        self.app = app
        self.client = client

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        body = await request.aread()
        scope = {
            "type": "http",
            "asgi": {"version": "3.0", "spec_version": "2.4"},
            "http_version": "1.1",
            "method": request.method,
            "scheme": request.url.scheme,
            "path": request.url.path,
            "raw_path": request.url.raw_path.split(b"?")[0],
            "query_string": request.url.query,
            "root_path": "",
            "headers": [(k.lower(), v) for k, v in request.headers.raw],
            "client": self.client,
            "server": (request.url.host, request.url.port or 80),
            "state": {},
        }
        requested = False
        disconnected = asyncio.Event()
        head: asyncio.Future[Message] = asyncio.get_running_loop().create_future()
        chunks: asyncio.Queue[bytes | BaseException | None] = asyncio.Queue()

        async def receive() -> Message:
            nonlocal requested
            if not requested:
                requested = True
                return {"type": "http.request", "body": body, "more_body": False}
            await disconnected.wait()
            return {"type": "http.disconnect"}

        async def send(message: Message) -> None:
            if message["type"] == "http.response.start":
                head.set_result(message)
            elif message["type"] == "http.response.body":
                if message.get("body"):
                    chunks.put_nowait(message["body"])
                if not message.get("more_body", False):
                    chunks.put_nowait(None)

        async def run() -> None:
            try:
                await self.app(scope, receive, send)
            except BaseException as exc:
                if not head.done():
                    head.set_exception(exc)
                chunks.put_nowait(exc)
                if not isinstance(exc, Exception):
                    raise
            else:
                chunks.put_nowait(None)

        task = asyncio.create_task(run(), name=f"asgi {request.method} {request.url.path}")
        try:
            start = await head
        except BaseException:
            task.cancel()
            raise

        class Body(httpx.AsyncByteStream):
            async def __aiter__(self) -> AsyncIterator[bytes]:
                while True:
                    chunk = await chunks.get()
                    if chunk is None:
                        return
                    if isinstance(chunk, BaseException):
                        raise httpx.ReadError(str(chunk)) from chunk
                    yield chunk

            async def aclose(self) -> None:
                disconnected.set()
                if not task.done():
                    task.cancel()
                    with contextlib.suppress(BaseException):
                        await task

        return httpx.Response(
            start["status"], headers=start.get("headers", []), stream=Body(), request=request
        )


class AsgiSocket:
    """A websocket to an in-process app, offering what the tests use of a `websockets`
    client connection: `send`, `recv`, `close`, `close_code`, `close_reason`, `subprotocol`.

    `recv` may be cancelled without losing a message (a queue's `get`)."""

    def __init__(
        self,
        app: FastAPI,
        base_url: str,
        path: str = "/ws",
        subprotocols: list[str] | None = None,
        client: tuple[str, int] = ("127.0.0.1", 50000),
        headers: list[tuple[bytes, bytes]] | None = None,
    ) -> None:
        self._scope = {
            "type": "websocket",
            "asgi": {"version": "3.0", "spec_version": "2.4"},
            "http_version": "1.1",
            "scheme": "ws",
            "path": path,
            "raw_path": path.encode(),
            "query_string": b"",
            "root_path": "",
            "headers": _headers(base_url, headers or []),
            "client": client,
            "server": (HOST, 80),
            "subprotocols": subprotocols or [],
            "state": {},
        }
        self._app = app
        self._incoming: asyncio.Queue[Message] = asyncio.Queue()  # to the app
        self._outgoing: asyncio.Queue[Message | None] = asyncio.Queue()  # to the client
        self._disconnected = False
        self._task: asyncio.Task[None] | None = None
        self.subprotocol: str | None = None
        self.close_code: int | None = None
        self.close_reason: str = ""

    async def _receive(self) -> Message:
        if self._disconnected:
            return {"type": "websocket.disconnect", "code": self.close_code or 1006}
        message = await self._incoming.get()
        if message["type"] == "websocket.disconnect":
            self._disconnected = True
        return message

    async def _send(self, message: Message) -> None:
        """Never suspends (the app's connection writes frames in its caller's turn)."""
        if self._disconnected and message["type"] != "websocket.close":
            raise OSError("the client went away")
        self._outgoing.put_nowait(message)

    async def _run(self) -> None:
        try:
            await self._app(self._scope, self._receive, self._send)
        finally:
            self._outgoing.put_nowait(None)

    async def open(self) -> AsgiSocket:
        self._task = asyncio.create_task(self._run(), name="asgi websocket")
        self._incoming.put_nowait({"type": "websocket.connect"})
        first = await self._outgoing.get()
        if first is not None and first["type"] == "websocket.accept":
            self.subprotocol = first.get("subprotocol")
            return self
        self._disconnected = True
        await self._task  # an app that refused the socket has ended
        raise InvalidStatus(HandshakeResponse(403, "Forbidden", []))  # type: ignore[arg-type]

    async def send(self, data: str | bytes) -> None:
        if self.close_code is not None or self._disconnected:
            raise self._closed()
        key = "text" if isinstance(data, str) else "bytes"
        self._incoming.put_nowait({"type": "websocket.receive", key: data})

    async def recv(self) -> str | bytes:
        if self.close_code is not None:
            raise self._closed()
        message = await self._outgoing.get()
        if message is None:
            self.close_code = 1006 if self.close_code is None else self.close_code
            raise self._closed()
        if message["type"] == "websocket.close":
            self.close_code = message.get("code", 1000)
            self.close_reason = message.get("reason") or ""
            self._outgoing.put_nowait(None) if self._outgoing.empty() else None
            raise self._closed()
        if message["type"] == "websocket.send":
            return message.get("text") if message.get("text") is not None else message["bytes"]
        raise AssertionError(f"unexpected ASGI message {message['type']}")

    def _closed(self) -> ConnectionClosedOK | ConnectionClosedError:
        code = self.close_code or 1006
        rcvd = Close(code, self.close_reason) if code != 1006 else None
        kind = ConnectionClosedOK if code in (1000, 1001) else ConnectionClosedError
        return kind(rcvd, None)

    async def close(self, code: int = 1000, reason: str = "") -> None:
        if not self._disconnected:
            self._disconnected_by_client(code)
        if self._task is not None:
            with contextlib.suppress(BaseException):
                await asyncio.wait_for(asyncio.shield(self._task), 5)
        if self.close_code is None:
            self.close_code = code
            self.close_reason = reason

    def _disconnected_by_client(self, code: int) -> None:
        self._incoming.put_nowait({"type": "websocket.disconnect", "code": code})

    async def __aenter__(self) -> AsgiSocket:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()


@contextlib.asynccontextmanager
async def served_here(settings: Settings, clock: FakeClock | None = None) -> AsyncIterator[Any]:
    """The app with its lifespan running in this event loop, at a URL of its own: a `Served`
    (`tests.support.server`)."""
    from tests.support.server import Served

    clock = clock or FakeClock()
    app = create_app(settings, clock)
    url = f"http://in-process-{next(_numbers)}.test"
    async with app.router.lifespan_context(app):
        APPS[url] = app
        try:
            yield Served(url, app, clock)
        finally:
            del APPS[url]
