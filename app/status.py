"""The states a game and a table are in, and the kinds of account, as stored in the database
and sent to clients.

Results and terminations are the rules' `app.rules.Result` and `app.rules.Termination` (the
latter also names the endings the server decides). These are `StrEnum`s: they compare equal
to their strings, so rows, JSON and the protocol carry the same bytes as plain strings would.
"""

from __future__ import annotations

from enum import StrEnum

from app.rules import Result


class GameStatus(StrEnum):
    """`games.status`: in progress, over with a result, or over without one."""

    PLAYING = "playing"
    FINISHED = "finished"
    ABORTED = "aborted"

    @classmethod
    def ended_with(cls, result: Result) -> GameStatus:
        """The status of a game that ended with `result` (no result: aborted)."""
        return cls.ABORTED if result is Result.UNFINISHED else cls.FINISHED


class TableStatus(StrEnum):
    """`tables.status`: whether the table is still there to sit at."""

    OPEN = "open"
    CLOSED = "closed"


class TableState(StrEnum):
    """A table as clients see it: waiting for players, its game in progress, its game over
    with both players still seated, or closed."""

    OPEN = "open"
    PLAYING = "playing"
    FINISHED = "finished"
    CLOSED = "closed"


class UserKind(StrEnum):
    """`users.kind`: who an account is. Only a registered account logs in with a password and
    has ratings; a guest plays casual games under a generated name; the computer opponent's
    accounts play from the server; an imported account is a name from imported game records,
    which nobody logs in as."""

    REGISTERED = "registered"
    GUEST = "guest"
    AI = "ai"
    IMPORTED = "imported"
