"""Reading a socket's frames: each within the size limit and the connection's own rate, read
ahead while the address's budget makes a message wait, so that a closed or flooding socket is
seen at once."""

from __future__ import annotations

import asyncio
import logging
from collections import deque
from typing import Any

from fastapi import WebSocket

from app.errors import Code
from app.realtime.connections import (
    CLOSE_POLICY,
    CLOSE_SERVICE_RESTART,
    CLOSE_TOO_BIG,
    CLOSE_UNSUPPORTED,
    FLOOD_LIMIT,
    Connection,
    ConnectionState,
)

logger = logging.getLogger(__name__)


def _admit(conn: Connection) -> bool:
    """The socket's own message rate: a message past it is answered `rate_limited` and
    dropped, and FLOOD_LIMIT dropped ones close the socket (1008)."""
    if conn.messages.take():
        return True
    _drop(conn)
    return False


def _drop(conn: Connection) -> None:
    """A message dropped for the socket's rate: `rate_limited`, and FLOOD_LIMIT of them close
    the socket (1008)."""
    conn.dropped += 1
    if conn.dropped >= FLOOD_LIMIT:
        conn.close(CLOSE_POLICY, "too many messages")
    else:
        rate = conn.messages.rate
        conn.error(Code.RATE_LIMITED, f"at most {rate:g} messages per second")


class Frames:
    """A socket's incoming frames, checked (text, size, the socket's own rate) as they are
    read. While a message waits for its address's budget, the frames behind it go on being
    read and checked, and up to the socket's burst of them kept (those beyond are dropped as
    past its rate): so a socket that floods is closed, and one the client closes is seen gone,
    at once, rather than when the wait is over (its place in the connection caps is given
    back then, app.realtime.limits), however fast the server reads."""

    def __init__(self, websocket: WebSocket, conn: Connection, max_bytes: int) -> None:
        self.websocket = websocket
        self.conn = conn
        self.max_bytes = max_bytes
        self.gone = False  # the client closed the socket, or the server decided to
        self.ahead: deque[str] = deque()  # read and admitted, not yet handled
        self.reading: asyncio.Task[Any] | None = None

    def _check(self, frame: Any) -> str | None:
        """The frame's text if it is a message to handle; else None, with the socket marked
        gone (a disconnect) or closed (a binary or oversized frame), or the message dropped."""
        conn = self.conn
        if frame["type"] == "websocket.disconnect":
            # 1012: this server is restarting (uvicorn closes every socket so on SIGTERM);
            # the client comes back through the balancer, most likely to another process.
            conn.moving = frame.get("code") == CLOSE_SERVICE_RESTART
            self.gone = True
            return None
        text = frame.get("text")
        if text is None:
            conn.close(CLOSE_UNSUPPORTED, "binary frames are not supported")
            self.gone = True
            return None
        if len(text.encode()) > self.max_bytes:
            conn.close(CLOSE_TOO_BIG, "message too big")
            self.gone = True
            return None
        if not _admit(conn):
            return None
        return str(text)

    async def _receive(self) -> Any:
        if self.reading is not None:
            reading, self.reading = self.reading, None
            return await reading
        return await self.websocket.receive()

    async def next(self) -> str | None:
        """The next message to handle (None: none, this time round)."""
        if self.ahead:
            return self.ahead.popleft()
        return self._check(await self._receive())

    async def wait(self, seconds: float) -> None:
        """Wait `seconds` (the address's budget), reading ahead; end early if the socket is
        gone or closing."""
        loop = asyncio.get_running_loop()
        until = loop.time() + seconds
        closing = self.conn.closing_waiter()
        try:
            while not self.gone and self.conn.state is ConnectionState.OPEN:
                left = until - loop.time()
                if left <= 0:
                    return
                if self.reading is None:
                    self.reading = asyncio.ensure_future(self.websocket.receive())
                waits: set[asyncio.Future[Any]] = {closing, self.reading}
                await asyncio.wait(waits, timeout=left, return_when=asyncio.FIRST_COMPLETED)
                if self.reading is not None and self.reading.done():
                    reading, self.reading = self.reading, None
                    text = self._check(reading.result())
                    if text is None:
                        continue
                    if len(self.ahead) < self.conn.messages.burst:
                        self.ahead.append(text)
                    else:  # more than a burst waiting behind the address's budget: flooding
                        _drop(self.conn)
        finally:
            self.conn.closing_done(closing)

    def stop(self) -> None:
        if self.reading is not None:
            self.reading.cancel()
            self.reading = None
