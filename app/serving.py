"""uvicorn's HTTP protocol with a deadline for each request's head, for `checkers serve`.

uvicorn closes a connection idle between requests (`timeout_keep_alive`), but not one that has
begun a request and never finishes its head: exposed without a proxy, a crowd of such
half-sent requests (slow loris) holds the process's open files until nothing else can connect.
This protocol closes a connection whose request line and headers are not complete
`HTTP_HEADER_TIMEOUT_SECONDS` after it opened, or after its previous response, as HAProxy's
`timeout http-request` does (deploy/haproxy.cfg). Upgrades (websockets) and bodies are not
concerned: the deadline ends with the head.
"""

from __future__ import annotations

import asyncio

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from app.config import get_settings


class HeadDeadlineProtocol(HttpToolsProtocol):
    """`HttpToolsProtocol`, closing a connection that does not complete a request head in
    time."""

    _head_timer: asyncio.TimerHandle | None = None

    def _arm(self) -> None:
        self._disarm()
        seconds = get_settings().http_header_timeout_seconds
        self._head_timer = self.loop.call_later(seconds, self._head_late)

    def _disarm(self) -> None:
        if self._head_timer is not None:
            self._head_timer.cancel()
            self._head_timer = None

    def _head_late(self) -> None:
        self._head_timer = None
        if not self.transport.is_closing():
            self.transport.close()

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._arm()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)

    def on_headers_complete(self) -> None:
        self._disarm()
        super().on_headers_complete()

    def on_response_complete(self) -> None:
        pipelined = bool(self.pipeline)  # the next request's head has come already
        super().on_response_complete()
        if not pipelined and not self.transport.is_closing():
            self._arm()  # the next request's head, if the connection is kept
