"""Times as the server keeps them: aware UTC datetimes, Unix seconds in between."""

from __future__ import annotations

from datetime import UTC, datetime


def utcnow() -> datetime:
    return datetime.now(UTC)


def as_utc(moment: datetime) -> datetime:
    """A stored time made aware (SQLite returns naive datetimes, which are UTC)."""
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


def as_unix(moment: datetime) -> float:
    """Unix seconds of a stored time."""
    return as_utc(moment).timestamp()


def as_datetime(unix: float) -> datetime:
    return datetime.fromtimestamp(unix, UTC)
