"""What `/ws` reads from the handshake before serving a socket: the page's `Origin` and the
client's token.

The token travels as a subprotocol: the client offers `checkers` and `token.<TOKEN>` in
`Sec-WebSocket-Protocol`, the only header a browser's `WebSocket` lets a page set. Unlike the
URL, that header is in no access log; the server answers with `checkers` alone, so the token is
never echoed. Tokens are URL-safe base64, which header tokens may hold.

The `Origin` check stops cross-site websocket hijacking: a page of another site opening `/ws`
in a visitor's browser. Programs send no `Origin` and are let through; browsers always send it
and page scripts cannot change it.
"""

from __future__ import annotations

from dataclasses import dataclass

from starlette.websockets import WebSocket

from app import origins

SUBPROTOCOL = "checkers"
TOKEN_PREFIX = "token."


def offer(token: str | None) -> list[str]:
    """The subprotocols a client offers: `checkers`, and its token if it has one."""
    return [SUBPROTOCOL] if token is None else [SUBPROTOCOL, TOKEN_PREFIX + token]


@dataclass(frozen=True, slots=True)
class Credentials:
    """What the client offered: the subprotocol to select, its token, or why it is refused."""

    subprotocol: str | None
    token: str | None
    refusal: str | None = None


def credentials(websocket: WebSocket) -> Credentials:
    offered: list[str] = websocket.scope.get("subprotocols") or []
    # Browsers fail a handshake whose answer selects none of the protocols they offered.
    subprotocol = SUBPROTOCOL if SUBPROTOCOL in offered else None
    tokens = [p.removeprefix(TOKEN_PREFIX) for p in offered if p.startswith(TOKEN_PREFIX)]
    if "token" in websocket.query_params:
        # Older clients: refused so that they learn why, rather than silently seen as a
        # spectator. Never logged: see `app.redaction`.
        return Credentials(
            subprotocol,
            None,
            "send the token in the Sec-WebSocket-Protocol header as token.<TOKEN>, not in the URL",
        )
    if len(tokens) > 1:
        return Credentials(subprotocol, None, "offer one token.<TOKEN> subprotocol at most")
    return Credentials(subprotocol, tokens[0] if tokens else None)


def origin_allowed(websocket: WebSocket, allowed: frozenset[str]) -> bool:
    """No `Origin` (a program), the server's own, or one of `allowed` (`ALLOWED_ORIGINS`).

    The server's own origin is the request's scheme and `Host`. Behind a proxy that terminates
    TLS the scheme comes from `X-Forwarded-Proto` when the proxy is trusted
    (`FORWARDED_ALLOW_IPS`): uvicorn has already put it in the scope. A proxy that rewrites
    `Host` must pass the public one on, or the public origin be listed in `ALLOWED_ORIGINS`.
    """
    origin = websocket.headers.get("origin")
    if origin is None:
        return True
    seen = origins.normalise(origin)
    if seen is None:  # "null" (sandboxed pages, files) or not an origin at all
        return False
    own = origins.of_request(websocket.scope.get("scheme", "ws"), websocket.headers.get("host", ""))
    return seen == own or seen in allowed
