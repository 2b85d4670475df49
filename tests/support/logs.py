"""The server's log as a test sees it: what the app and uvicorn log while the test runs.

uvicorn's own loggers do not propagate to the root logger (where pytest listens), so
`server_log()` listens on both and keeps every record of level WARNING or above.
"""

from __future__ import annotations

import logging
import traceback
from collections.abc import Iterator
from contextlib import contextmanager

LISTENED = ("", "uvicorn")  # the root logger (app.*) and uvicorn's (uvicorn.error)


class _Keep(logging.Handler):
    def __init__(self, records: list[logging.LogRecord]) -> None:
        super().__init__(logging.WARNING)
        self.records = records

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


@contextmanager
def server_log() -> Iterator[list[logging.LogRecord]]:
    records: list[logging.LogRecord] = []
    handler = _Keep(records)
    for name in LISTENED:
        logging.getLogger(name).addHandler(handler)
    try:
        yield records
    finally:
        for name in LISTENED:
            logging.getLogger(name).removeHandler(handler)


def failures(records: list[logging.LogRecord]) -> list[str]:
    """Errors and tracebacks ("Exception in ASGI application", a handler's crash), readable."""
    found = []
    for record in records:
        if record.levelno >= logging.ERROR or record.exc_info:
            text = f"{record.name}: {record.getMessage()}"
            if record.exc_info:
                text += "\n" + "".join(traceback.format_exception(*record.exc_info))[-2000:]
            found.append(text)
    return found
