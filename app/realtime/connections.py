"""One websocket client: who it is, what it watches, its limits, and its outgoing frames.

Each connection writes a frame at once, in the caller's turn, unless frames are already waiting;
a send that has to wait for a slow reader, and the frames after it, are handled by a writer task
made for the purpose, with a bounded queue: a client that stops reading is closed (1008) instead
of being buffered without end. Table events reach connections through `app.realtime.hub`.
"""

from __future__ import annotations

import asyncio
import contextlib
import enum
import logging
import time
import types
from collections import deque
from collections.abc import Coroutine, Generator, Mapping
from dataclasses import dataclass, field
from typing import Any

from fastapi import WebSocket
from starlette.websockets import WebSocketState

from app.errors import Code
from app.live.liveplay import dumps
from app.play.players import PlayerRef

logger = logging.getLogger(__name__)

SEND_QUEUE_FRAMES = 256
CHAT_PER_SECOND = 0.5
CHAT_BURST = 5.0
FLOOD_LIMIT = 200
CLOSE_WAIT_SECONDS = 2.0

CLOSE_NORMAL = 1000
CLOSE_UNSUPPORTED = 1003
CLOSE_POLICY = 1008
CLOSE_TOO_BIG = 1009
CLOSE_SERVER_ERROR = 1011
CLOSE_SERVICE_RESTART = 1012
CLOSE_TRY_AGAIN = 1013


class ConnectionState(enum.Enum):
    OPEN = "open"
    CLOSING = "closing"


@dataclass(slots=True)
class TokenBucket:
    """Allows `rate` units per second with bursts of `burst`: beyond, `take` refuses, and
    `reserve` grants after a wait (callers that wait are served in the order they asked)."""

    rate: float
    burst: float
    tokens: float = 0.0
    at: float = field(default_factory=time.monotonic)

    def __post_init__(self) -> None:
        self.tokens = self.burst

    def _refill(self, now: float | None) -> None:
        now = time.monotonic() if now is None else now
        self.tokens = min(self.burst, self.tokens + (now - self.at) * self.rate)
        self.at = now

    def take(self, cost: float = 1.0, now: float | None = None) -> bool:
        """Spend `cost` if the bucket holds it."""
        self._refill(now)
        if self.tokens < cost:
            return False
        self.tokens -= cost
        return True

    def reserve(self, cost: float = 1.0, now: float | None = None) -> float:
        """Spend `cost`, into debt if need be; the seconds until the debt is paid back, which
        the caller waits before acting (0 within the budget)."""
        self._refill(now)
        self.tokens -= cost
        return 0.0 if self.tokens >= 0 else -self.tokens / self.rate

    def full(self, now: float | None = None) -> bool:
        self._refill(now)
        return self.tokens >= self.burst


@dataclass(frozen=True, slots=True)
class _Close:
    code: int
    reason: str


@dataclass(frozen=True, slots=True)
class _Suspended:
    """A send begun outside the writer task that had to wait for the socket: the coroutine and
    what it yielded (the future it waits on)."""

    send: Coroutine[Any, Any, None]
    waiting_on: Any


@types.coroutine
def _resume(suspended: _Suspended) -> Generator[Any, Any, None]:
    """Go on with a suspended send inside the awaiting task: what the send yields goes to the
    task, and what the task answers (a result, an exception, a cancellation) goes back to it,
    exactly as if the task had run it from the start."""
    send, waiting_on = suspended.send, suspended.waiting_on
    while True:
        try:
            answer = yield waiting_on
        except BaseException as exc:
            try:
                waiting_on = send.throw(exc)
            except StopIteration:
                return
        else:
            try:
                waiting_on = send.send(answer)
            except StopIteration:
                return


class Connection:
    """One client socket: who it is, what it watches, and its outgoing queue."""

    def __init__(
        self,
        websocket: WebSocket,
        user: PlayerRef | None,
        messages_per_second: float,
        token_hash: str | None = None,
    ) -> None:
        self.websocket = websocket
        self.user = user
        self.token_hash = token_hash  # the SHA-256 of the token it was opened with
        self.state = ConnectionState.OPEN
        self.tables: set[int] = set()
        self.lobby = False
        self.counts = False  # asked for the `spectators` notices of the tables it watches
        self.moving = False  # closed because this server restarts: the user is not gone
        self.messages = TokenBucket(messages_per_second, 2 * messages_per_second)
        self.chats = TokenBucket(CHAT_PER_SECOND, CHAT_BURST)
        self.dropped = 0
        # While a send waits for the socket: the frames behind it (the first may be that
        # suspended send) and a close after them, and the task that writes them. An idle
        # connection has neither, which keeps it small.
        self._queue: deque[str | _Suspended | _Close] | None = None
        self._writer: asyncio.Task[None] | None = None
        # Set while the reader waits (for its address's budget): done when the server decides
        # to close the connection, which ends the wait.
        self._closing: asyncio.Future[None] | None = None

    @property
    def user_id(self) -> int | None:
        return self.user.id if self.user is not None else None

    @property
    def address(self) -> str:
        """The client's address (X-Forwarded-For's from a trusted proxy, as uvicorn gives it)."""
        client = self.websocket.client
        return client.host if client is not None else "unknown"

    def send_text(self, text: str) -> None:
        """Send a frame, or queue it behind those still waiting for the socket; a client that
        lets SEND_QUEUE_FRAMES pile up is closed."""
        if self.state is not ConnectionState.OPEN:
            return
        if self._writer is None or self._queue is None:
            self._send_now(text)
            return
        if len(self._queue) >= SEND_QUEUE_FRAMES:
            self._queue.clear()
            self.close(CLOSE_POLICY, "too many unread messages")
            return
        self._queue.append(text)

    def send(self, payload: Mapping[str, Any]) -> None:
        self.send_text(dumps(payload))

    def error(
        self,
        code: Code,
        message: str,
        ref: str | int | None = None,
        extra: Mapping[str, Any] | None = None,
    ) -> None:
        payload: dict[str, Any] = {**(extra or {}), "type": "error", "code": code.text}
        payload["message"] = message
        if ref is not None:
            payload["ref"] = ref
        self.send(payload)

    def close(self, code: int, reason: str) -> None:
        """Close after the frames already queued."""
        if self.state is ConnectionState.OPEN:
            self.state = ConnectionState.CLOSING
            self._enqueue(_Close(code, reason))
            if self._closing is not None and not self._closing.done():
                self._closing.set_result(None)

    def closing_waiter(self) -> asyncio.Future[None]:
        """A future done once the server decides to close this connection."""
        self._closing = asyncio.get_running_loop().create_future()
        if self.state is not ConnectionState.OPEN:
            self._closing.set_result(None)
        return self._closing

    def closing_done(self, waiter: asyncio.Future[None]) -> None:
        waiter.cancel()
        if self._closing is waiter:
            self._closing = None

    async def finish(self) -> None:
        """Stop the writer once the reader is done, letting a requested close go out first."""
        closing = self.state is ConnectionState.CLOSING
        self.state = ConnectionState.CLOSING
        writer = self._writer
        if writer is not None:
            if closing:
                await asyncio.wait({writer}, timeout=CLOSE_WAIT_SECONDS)
            writer.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await writer

    def _send_now(self, text: str) -> None:
        """Write the frame in the caller's turn of the event loop, without a hop through the
        writer task: sending completes at once unless the socket's buffer is full (the client
        reads slowly). Only then does the writer task finish it, and later frames queue."""
        send = self.websocket.send_text(text)
        try:
            waiting_on = send.send(None)
        except StopIteration:
            return
        except Exception:  # the peer went away; the reader sees the disconnect
            logger.debug("websocket send failed", exc_info=True)
            return
        self._enqueue(_Suspended(send, waiting_on))

    def _enqueue(self, item: str | _Suspended | _Close) -> None:
        """Hand an item to the writer task, started if none runs."""
        if self._queue is None:
            self._queue = deque()
        self._queue.append(item)
        if self._writer is None:
            self._writer = asyncio.create_task(self._write(), name="ws-writer")

    async def _write(self) -> None:
        """Write what waits, in order, then end (the next send that has to wait starts another)."""
        ws, queue = self.websocket, self._queue
        assert queue is not None  # made with the task
        try:
            while queue:
                item = queue.popleft()
                if isinstance(item, _Close):
                    if ws.application_state is WebSocketState.CONNECTED:
                        await ws.close(item.code, item.reason)
                    return
                if isinstance(item, _Suspended):
                    await _resume(item)
                else:
                    await ws.send_text(item)
        except Exception:  # the peer went away mid-send; the reader sees the disconnect
            logger.debug("websocket send failed", exc_info=True)
        finally:
            self._writer, self._queue = None, None
