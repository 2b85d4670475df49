"""How many websockets this process takes: per client address, per user and in all.

Every socket is an open file. Without a cap, a crowd of idle sockets uses up the process's
open-file limit, and then nothing else can open one: not `/healthz`, not a database connection,
not a new player. So the process raises its soft `RLIMIT_NOFILE` to the hard limit where it may,
and takes at most `WS_MAX_CONNECTIONS` sockets, by default that limit less a reserve for the
database pool, Redis, HTTP requests and log files. A client address may hold `WS_MAX_PER_IP`
sockets, a user `WS_MAX_PER_USER` (checked by the hub, once the user is known).

The counts are this process's, in memory: with several processes behind a balancer, the
balancer caps connections per client address across them (deploy/haproxy.cfg).
"""

from __future__ import annotations

import logging
import time
from collections import Counter
from collections.abc import Hashable

from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send
from starlette.websockets import WebSocket

from app.errors import Code
from app.realtime.connections import CLOSE_TRY_AGAIN

logger = logging.getLogger(__name__)

# Files kept free for everything but websockets: at least this many, or this share of the limit.
RESERVED_FILES = 256
RESERVED_SHARE = 0.05
UNLIMITED = 1 << 20  # what an unlimited RLIMIT_NOFILE counts as when deriving the cap
REFUSAL_LOG_SECONDS = 60.0  # one warning per address (or user) per this many seconds


def raise_open_file_limit() -> int:
    """Raise the soft open-file limit to the hard one where the system allows; returns the soft
    limit in force (UNLIMITED where there is none, or it cannot be read)."""
    try:
        import resource
    except ImportError:  # not a Unix
        return UNLIMITED
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft != hard:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
            soft = hard
        except (ValueError, OSError):  # macOS refuses some values above OPEN_MAX
            logger.info("cannot raise the open-file limit above %d", soft)
    return UNLIMITED if soft == resource.RLIM_INFINITY else min(soft, UNLIMITED)


def default_max_connections(open_files: int) -> int:
    """The open-file limit less the reserve for what is not a websocket."""
    reserve = max(RESERVED_FILES, int(open_files * RESERVED_SHARE))
    return max(1, open_files - reserve)


def max_connections(configured: int | None, open_files: int) -> int:
    """`WS_MAX_CONNECTIONS`, or the default derived from the open-file limit; a configured cap
    the limit cannot hold is lowered to the default, with a warning."""
    derived = default_max_connections(open_files)
    if configured is None:
        return derived
    if configured > derived:
        logger.warning(
            "WS_MAX_CONNECTIONS=%d does not fit the open-file limit %d: using %d",
            configured,
            open_files,
            derived,
        )
        return derived
    return configured


class OncePerInterval:
    """Says whether to log about a key: yes the first time, then once per `seconds`. Keeps the
    keys of the last interval only, so a crowd of addresses cannot grow it without bound."""

    def __init__(self, seconds: float = REFUSAL_LOG_SECONDS) -> None:
        self.seconds = seconds
        self._logged: dict[Hashable, float] = {}
        self._pruned = time.monotonic()

    def __call__(self, key: Hashable) -> bool:
        now = time.monotonic()
        if now - self._pruned >= self.seconds:
            self._logged = {k: t for k, t in self._logged.items() if now - t < self.seconds}
            self._pruned = now
        last = self._logged.get(key)
        if last is not None and now - last < self.seconds:
            return False
        self._logged[key] = now
        return True


class ConnectionGate:
    """Counts this process's long-lived connections, websockets (from the handshake to the
    end) and the REST event streams (`GET /api/stream/event`), in all, per client address and
    per user, and refuses those over a cap."""

    def __init__(
        self, max_connections: int, max_per_ip: int, open_files: int, max_per_user: int = 0
    ) -> None:
        self.max_connections = max_connections
        self.max_per_ip = max_per_ip  # 0: no cap
        self.max_per_user = max_per_user  # 0: no cap
        self.open_files = open_files
        self.open = 0
        self.per_ip: Counter[str] = Counter()
        self.per_user: Counter[int] = Counter()
        self._log_refusal = OncePerInterval()

    def enter_user(self, user_id: int) -> str | None:
        """Count a connection of `user_id`, or return why it is refused (then not counted)."""
        held = self.per_user[user_id]
        if self.max_per_user and held >= self.max_per_user:
            if self._log_refusal(("user", user_id)):
                logger.warning(
                    "websocket refused: user %d holds %d sockets, the cap (WS_MAX_PER_USER)",
                    user_id,
                    held,
                )
            return f"at most {self.max_per_user} connections per user"
        self.per_user[user_id] += 1
        return None

    def leave_user(self, user_id: int) -> None:
        self.per_user[user_id] -= 1
        if self.per_user[user_id] <= 0:
            del self.per_user[user_id]

    def enter(self, host: str) -> str | None:
        """Count a new socket from `host`, or return why it is refused (it is then not counted)."""
        if self.open >= self.max_connections:
            if self._log_refusal(None):
                logger.warning(
                    "websocket refused: this process holds %d sockets, its cap "
                    "(WS_MAX_CONNECTIONS, open-file limit %d)",
                    self.open,
                    self.open_files,
                )
            return "the server is full; try again later"
        if self.max_per_ip and self.per_ip[host] >= self.max_per_ip:
            if self._log_refusal(host):
                logger.warning(
                    "websocket refused: %s holds %d sockets, the cap per address (WS_MAX_PER_IP)",
                    host,
                    self.per_ip[host],
                )
            return f"at most {self.max_per_ip} connections per address"
        self.open += 1
        self.per_ip[host] += 1
        return None

    def leave(self, host: str) -> None:
        self.open -= 1
        self.per_ip[host] -= 1
        if self.per_ip[host] <= 0:
            del self.per_ip[host]


class TooManyConnections(Exception):
    """A user already holds `WS_MAX_PER_USER` sockets and event streams in this process."""


RETRY_AFTER_SECONDS = 30


class ConnectionCapMiddleware:
    """Refuses a websocket over the gate's caps during the handshake, before the app sees it:
    HTTP 429 `too_many_connections` (with `Retry-After`) where the server supports the ASGI
    denial-response extension (uvicorn does), else a close before accept (HTTP 403)."""

    def __init__(self, app: ASGIApp, gate: ConnectionGate) -> None:
        self.app = app
        self.gate = gate

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "websocket":
            await self.app(scope, receive, send)
            return
        client = scope.get("client")
        host = client[0] if client else ""
        refused = self.gate.enter(host)
        if refused is None:
            await self._serve(host, scope, receive, send)
            return
        websocket = WebSocket(scope, receive, send)
        if "websocket.http.response" in scope.get("extensions", {}):
            # The body every HTTP error of this server has (docs/protocol.md, REST errors).
            code = Code.TOO_MANY_CONNECTIONS
            body = {"error": code.text, "message": refused}
            headers = {"Retry-After": str(RETRY_AFTER_SECONDS)}
            await websocket.send_denial_response(
                JSONResponse(body, code.http_status, headers=headers)
            )
        else:
            await websocket.close(CLOSE_TRY_AGAIN, refused)

    async def _serve(self, host: str, scope: Scope, receive: Receive, send: Send) -> None:
        """Serve a counted socket; its place is free the moment the socket is closed, by either
        side, not when its bookkeeping (presence, pairing) is done: a client that closes and
        reconnects at once is not refused for a socket it no longer has."""
        counted = True

        def release() -> None:
            nonlocal counted
            if counted:
                counted = False
                self.gate.leave(host)

        async def receiving() -> Message:
            message = await receive()
            if message["type"] == "websocket.disconnect":
                release()
            return message

        async def sending(message: Message) -> None:
            await send(message)
            if message["type"] == "websocket.close":
                release()

        try:
            await self.app(scope, receiving, sending)
        finally:
            release()
