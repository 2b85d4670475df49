"""Limits shared by the inputs of every REST route, so that what reaches the database fits it.

An id above `MAX_ID` names no row (ids are BIGINT), and text with a control character is no
name, reason or search a person typed (PostgreSQL cannot even compare text holding NUL): both
are refused as 422 `bad_request` like any other malformed parameter, before any query runs.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import Path

from app.db.models import MAX_ID

__all__ = ["MAX_ID", "NAME_PATTERN", "TEXT_PATTERN", "WORDS_PATTERN", "GameId"]

# Names, slugs and searches: anything printable (imported names hold spaces, commas, accents).
NAME_PATTERN = r"^[^\x00-\x1f\x7f]+$"
# Optional free text: printable, possibly empty.
TEXT_PATTERN = r"^[^\x00-\x1f\x7f]*$"
# Required free text (a reason): printable, and more than blanks.
WORDS_PATTERN = r"^[^\x00-\x1f\x7f]*[^\s\x00-\x1f\x7f][^\x00-\x1f\x7f]*$"

GameId = Annotated[int, Path(ge=1, le=MAX_ID, description="Game id.")]
