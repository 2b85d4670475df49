"""Limits shared by the inputs of every REST route, so that what reaches the database fits it.

An id above `MAX_ID` names no row (ids are BIGINT), and text with a control character is no
name, reason or search a person typed (PostgreSQL cannot even compare text holding NUL): both
are refused as 422 `bad_request` like any other malformed parameter, before any query runs.

Query and path parameters arrive as text, so pydantic's strict mode (which wants an `int` for an
int) cannot apply to them, and its lax mode reads `1.0`, `+1`, ` 1`, `1_0` and `01` as the
number 1, and `1`, `yes`, `on`, `t` as true, and a date from a count of seconds. The types here
accept each value in one spelling only: an integer in decimal digits, a boolean as `true` or
`false`, a date or time in ISO 8601; anything else is 422.
"""

from __future__ import annotations

import re
from typing import Annotated

from fastapi import Path
from pydantic import BeforeValidator

from app.db.models import MAX_ID

__all__ = [
    "MAX_ID",
    "NAME_PATTERN",
    "TEXT_PATTERN",
    "WORDS_PATTERN",
    "DIGITS",
    "ISO_DATE",
    "ISO_DATETIME",
    "TRUE_FALSE",
    "GameId",
]

# Names, slugs and searches: anything printable (imported names hold spaces, commas, accents).
NAME_PATTERN = r"^[^\x00-\x1f\x7f]+$"
# Optional free text: printable, possibly empty.
TEXT_PATTERN = r"^[^\x00-\x1f\x7f]*$"
# Required free text (a reason): printable, and more than blanks.
WORDS_PATTERN = r"^[^\x00-\x1f\x7f]*[^\s\x00-\x1f\x7f][^\x00-\x1f\x7f]*$"

_DECIMAL = re.compile(r"-?(0|[1-9][0-9]*)")
_ISO_DATE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")
_ISO_DATETIME = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}([T ].*)?")


def _spelled(pattern: re.Pattern[str], what: str) -> BeforeValidator:
    """A check, before pydantic's lax parsing, that a text value is written as `pattern`."""

    def check(value: object) -> object:
        if isinstance(value, str) and not pattern.fullmatch(value):
            raise ValueError(f"must be {what}")
        return value

    return BeforeValidator(check)


# Put these after `Query(...)`/`Path(...)` in `Annotated[...]`: the limits given there then stay
# in the OpenAPI schema (`minimum`, `maximum`), which they leave if they follow a validator.
DIGITS = _spelled(_DECIMAL, "an integer in decimal digits")
TRUE_FALSE = _spelled(re.compile("true|false"), "true or false")
ISO_DATE = _spelled(_ISO_DATE, "a date as YYYY-MM-DD")
ISO_DATETIME = _spelled(_ISO_DATETIME, "a date and time in ISO 8601")

GameId = Annotated[int, Path(ge=1, le=MAX_ID, description="Game id."), DIGITS]
