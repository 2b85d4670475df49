"""Security headers on every HTTP response: the browser client keeps its token in
localStorage, so whatever script runs on this origin could read it.

- `Content-Security-Policy`: scripts, styles and connections from this origin only (the client
  has no inline script or style and no `eval`; `connect-src 'self'` covers its own `ws:`/`wss:`
  in CSP level 3), no plugins, no `<base>`, no framing by other sites.
- `X-Content-Type-Options: nosniff`: a download (a PDN file) is never run as a script.
- `X-Frame-Options: DENY` for browsers without `frame-ancestors`; `Referrer-Policy: no-referrer`
  so addresses (private-table invites) do not leak to other sites.
- `Strict-Transport-Security` only on a request that came over TLS (the scheme uvicorn set,
  from `X-Forwarded-Proto` when a trusted proxy terminates TLS): over plain HTTP it would be
  ignored, and on a development server it would stick to `localhost`.

The interactive API docs (`/docs`, `/redoc`) load their scripts from a CDN and start with an
inline script: they get a policy allowing exactly that. They are off in production by default.

A pure ASGI middleware (not `BaseHTTPMiddleware`): the headers are computed once, and a response
costs one list extension.
"""

from __future__ import annotations

from starlette.types import ASGIApp, Message, Receive, Scope, Send

CLIENT_POLICY = "; ".join(
    (
        "default-src 'self'",
        "script-src 'self'",
        "style-src 'self'",
        "img-src 'self' data:",  # the favicon is a data: URL
        "connect-src 'self'",
        "object-src 'none'",
        "base-uri 'none'",
        "form-action 'self'",
        "frame-ancestors 'none'",
    )
)
DOCS_CDN = "https://cdn.jsdelivr.net"
DOCS_POLICY = "; ".join(
    (
        "default-src 'self'",
        f"script-src 'self' 'unsafe-inline' {DOCS_CDN}",
        f"style-src 'self' 'unsafe-inline' {DOCS_CDN} https://fonts.googleapis.com",
        "font-src 'self' https://fonts.gstatic.com",
        "img-src 'self' data: https:",
        "worker-src 'self' blob:",
        "connect-src 'self'",
        "object-src 'none'",
        "base-uri 'none'",
        "form-action 'self'",
        "frame-ancestors 'none'",
    )
)
DOCS_PATHS = frozenset({"/docs", "/docs/oauth2-redirect", "/redoc"})
HSTS = "max-age=31536000"


def _encoded(headers: dict[str, str]) -> list[tuple[bytes, bytes]]:
    return [(name.lower().encode(), value.encode()) for name, value in headers.items()]


COMMON = {
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "no-referrer",
}
CLIENT_HEADERS = _encoded(COMMON | {"Content-Security-Policy": CLIENT_POLICY})
DOCS_HEADERS = _encoded(COMMON | {"Content-Security-Policy": DOCS_POLICY})
TLS_HEADERS = _encoded({"Strict-Transport-Security": HSTS})


class SecurityHeadersMiddleware:
    """Adds the headers above to every HTTP response (a header a route set itself is kept)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        extra = DOCS_HEADERS if scope["path"] in DOCS_PATHS else CLIENT_HEADERS
        if scope.get("scheme") == "https":
            extra = extra + TLS_HEADERS

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = list(message.get("headers", ()))
                present = {name.lower() for name, _ in headers}
                headers.extend(h for h in extra if h[0] not in present)
                message["headers"] = headers
            await send(message)

        await self.app(scope, receive, send_with_headers)
