"""Times as the server keeps them: aware UTC datetimes, Unix seconds in between.

The one place that turns a stored or received time into that form: SQLite hands back naive
datetimes (which are UTC), and it stores a time as text without its zone, so a time given with
another offset must be moved to UTC before it is compared or stored.
"""

from __future__ import annotations

from datetime import UTC, datetime


def utcnow() -> datetime:
    return datetime.now(UTC)


def as_utc(moment: datetime) -> datetime:
    """The same moment as an aware UTC datetime; a naive one is taken to be UTC already.
    Raises OverflowError for an aware time before the first UTC moment (year 1)."""
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)


def as_unix(moment: datetime) -> float:
    """Unix seconds of a stored time."""
    return as_utc(moment).timestamp()


def as_datetime(unix: float) -> datetime:
    return datetime.fromtimestamp(unix, UTC)
