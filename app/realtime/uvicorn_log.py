"""Two records uvicorn's websocket protocol logs as errors though they are the client's doing.

Invalid UTF-8 in a websocket text frame: the socket closes with 1007 and one warning is logged.

uvicorn's websocket protocol (`websockets-sansio`, its default) decodes every text frame before
the app sees it. On invalid UTF-8 it does what RFC 6455 asks, closing the socket with 1007
(invalid frame payload data), and the app's receive loop gets a disconnect with that code. But
it also logs the `UnicodeDecodeError` with `logger.exception`: an ERROR with a traceback for each
such frame. That reads as a server bug and lets any client fill the log with tracebacks, though
it is the client's mistake. The app cannot catch the exception, which is raised and handled
inside uvicorn, so `quiet_uvicorn` turns that one record into a single WARNING line without
the traceback. A filter on the logger works however the server is started (`checkers serve`,
`uvicorn --factory`, tests). Other records, any other `UnicodeDecodeError` included, pass as
they are.

A handshake the app refuses on purpose with an HTTP answer (429 when a connection cap is reached,
see `limits`) ends, in uvicorn, with "ASGI callable returned without completing handshake." at
ERROR for every refused socket: a crowd of refused clients would fill the log with errors, where
the app logs its refusals once per address per minute. That record is dropped.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from fastapi import FastAPI

from app.lifespan import lifespan_part

UVICORN_LOGGER = "uvicorn.error"
# How uvicorn's websocket protocol words the record (uvicorn/protocols/websockets/).
UVICORN_MESSAGE = "Invalid UTF-8 sequence received from client"
UVICORN_REFUSED = "ASGI callable returned without completing handshake."


class QuietFilter(logging.Filter):
    """Rewrites uvicorn's record of an invalid UTF-8 text frame as a WARNING without traceback;
    drops its record of a handshake refused with an HTTP answer."""

    def filter(self, record: logging.LogRecord) -> bool:
        if record.msg == UVICORN_REFUSED:
            return False
        error = record.exc_info[1] if record.exc_info else None
        if isinstance(error, UnicodeDecodeError) and str(record.msg).startswith(UVICORN_MESSAGE):
            record.levelno, record.levelname = (
                logging.WARNING,
                logging.getLevelName(logging.WARNING),
            )
            record.msg = "a client sent invalid UTF-8 in a text frame (%s); closed with 1007"
            record.args = (error.reason,)
            record.exc_info, record.exc_text = None, None
        return True


@lifespan_part()
@asynccontextmanager
async def quiet_uvicorn(app: FastAPI) -> AsyncIterator[None]:
    """Lifespan part: the filter on uvicorn's logger while the app runs (one per app, so that
    apps sharing a process, as in tests, each remove only their own)."""
    logger = logging.getLogger(UVICORN_LOGGER)
    log_filter = QuietFilter()
    logger.addFilter(log_filter)
    try:
        yield
    finally:
        logger.removeFilter(log_filter)
