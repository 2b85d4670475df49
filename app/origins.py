"""Web origins (`scheme://host[:port]`) in one spelling, so that two can be compared as text.

Browsers send `Origin` on every websocket handshake; the server compares it with its own origin
and with `ALLOWED_ORIGINS` (see `app.realtime.handshake`).
"""

from __future__ import annotations

from urllib.parse import urlsplit

DEFAULT_PORTS = {"http": 80, "https": 443}
WS_SCHEMES = {"ws": "http", "wss": "https"}  # a websocket's scheme, as its page's


def normalise(origin: str) -> str | None:
    """`origin` lower-cased and without its default port, or None when it is not the origin of
    an http(s) page (such as the `null` of sandboxed pages and files, or a URL with a path)."""
    try:
        parts = urlsplit(origin.strip())
        port = parts.port
    except ValueError:  # a port out of range, brackets that do not close
        return None
    scheme = parts.scheme.lower()
    if (
        scheme not in DEFAULT_PORTS
        or not parts.hostname
        or parts.username is not None
        or parts.password is not None
        or parts.path not in ("", "/")
        or parts.query
        or parts.fragment
    ):
        return None
    host = parts.hostname  # lower-cased, without an IPv6 address's brackets
    if ":" in host:
        host = f"[{host}]"
    if port is not None and port != DEFAULT_PORTS[scheme]:
        host = f"{host}:{port}"
    return f"{scheme}://{host}"


def of_request(scheme: str, host: str) -> str | None:
    """The origin a request was addressed to: its scheme (`ws`/`wss` taken as `http`/`https`)
    and its `Host` header."""
    scheme = WS_SCHEMES.get(scheme, scheme)
    if not host or "/" in host or "@" in host:
        return None
    return normalise(f"{scheme}://{host}")
