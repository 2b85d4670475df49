"""Keep bearer tokens out of the server's log.

Clients send their token in `Sec-WebSocket-Protocol` (`token.<TOKEN>`), not in URLs; but uvicorn
logs every request line and websocket handshake with its query (`"WebSocket /ws?token=…"`), an
older client may still put the token there, and at `LOG_LEVEL=debug` the websocket handshake's
headers are logged too. A token lives for weeks, so a log must not hold one: `install()` puts a
filter on uvicorn's loggers that rewrites `token=<value>` and `token.<value>` to
`token=[redacted]` and `token.[redacted]` before anything is written.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping
from typing import Any

# `token=` up to the end of the query parameter; `token.` followed by a token's characters
# (URL-safe base64). Case-insensitive, so `access_token=` and `Token=` are caught too.
TOKEN = re.compile(r"(token=)[^&\s\"']+|(\btoken\.)[A-Za-z0-9_-]+", re.IGNORECASE)
REDACTED = "[redacted]"
# uvicorn logs requests to `uvicorn.access` and websocket handshakes (and, at debug level,
# their headers) to `uvicorn.error`. A logger's filters see only the records made on it.
LOGGERS = ("uvicorn", "uvicorn.error", "uvicorn.access")


def redact(text: str) -> str:
    return TOKEN.sub(lambda m: (m.group(1) or m.group(2)) + REDACTED, text)


def _clean(value: Any) -> Any:
    return redact(value) if isinstance(value, str) and "oken" in value.lower() else value


class RedactTokens(logging.Filter):
    """Rewrites tokens in a record's message and arguments, keeping their shape: uvicorn's
    access formatter unpacks the arguments by position."""

    def filter(self, record: logging.LogRecord) -> bool:
        record.msg = _clean(record.msg)
        args = record.args
        if isinstance(args, tuple):
            record.args = tuple(_clean(arg) for arg in args)
        elif isinstance(args, Mapping):
            record.args = {key: _clean(arg) for key, arg in args.items()}
        return True


_FILTER = RedactTokens()


def install() -> None:
    """Filter uvicorn's loggers (once: adding the same filter again changes nothing). Logging
    configured later by uvicorn keeps it: `dictConfig` replaces handlers, not filters."""
    for name in LOGGERS:
        logging.getLogger(name).addFilter(_FILTER)
