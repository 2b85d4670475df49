"""The one vocabulary of refusals, whichever face (REST or websocket) serves the request.

Every error code a client can see is a member of `Code`, which carries the code's text (what
the protocol and the REST body say) and the REST status it is answered with. A code's status
is decided here and nowhere else: each face maps a refusal once (the REST exception handler in
`app.api.common.errors`, the message loop in `app.realtime.endpoint`), reading `code.text` and
`code.http_status`.

Every refusal is `ServiceError(code, message, *, retry_after=…)`: `message` is a sentence for
people. Each service derives its family from it (`PlayError`, `AdminError`, `ArchiveError`,
`AccountError`, …) so that callers can catch one service's refusals; a named subclass
(`NotFound`, `NameTaken`, …) only fills in the arguments. The rules' own `RulesError` stays in
the pure rules package with its code's text; `Code.of(text)` names its member.
"""

from __future__ import annotations

from collections.abc import Mapping
from enum import Enum
from typing import Any


class Code(Enum):
    """An error code: its text on the wire and its REST status. Two members may share a text
    where one refusal is answered with another status (`NO_LONGER_WAITING`)."""

    # The request itself is wrong.
    BAD_MESSAGE = ("bad_message", 400)
    BAD_REQUEST = ("bad_request", 400)
    BAD_CURSOR = ("bad_cursor", 400)
    UNPROCESSABLE = ("bad_request", 422)
    INVALID_NAME = ("invalid_name", 422)
    WEAK_PASSWORD = ("weak_password", 422)
    INVALID_FEN = ("invalid_fen", 400)
    RATED_FROM_POSITION = ("rated_from_position", 400)
    RATED_NOT_PRIVATE = ("rated_not_private", 400)
    # Who asks.
    UNAUTHORIZED = ("unauthorized", 401)
    BAD_CREDENTIALS = ("bad_credentials", 401)
    FORBIDDEN = ("forbidden", 403)
    BANNED = ("banned", 403)
    NOT_A_BOT = ("not_a_bot", 403)
    NOT_ACCEPTABLE = ("not_acceptable", 406)
    TOO_LARGE = ("too_large", 413)
    # What is asked about.
    NOT_FOUND = ("not_found", 404)
    NO_LONGER_WAITING = ("not_found", 409)  # a challenge answered, cancelled or expired
    # Refused in the state things are in.
    CONFLICT = ("conflict", 409)
    NOT_A_PLAYER = ("not_a_player", 409)
    NOT_YOUR_TURN = ("not_your_turn", 409)
    STALE_PLY = ("stale_ply", 409)
    INVALID_MOVE = ("invalid_move", 409)
    ILLEGAL_MOVE = ("illegal_move", 409)
    CAPTURE_REQUIRED = ("capture_required", 409)
    AMBIGUOUS_MOVE = ("ambiguous_move", 409)
    GAME_OVER = ("game_over", 409)
    SEAT_TAKEN = ("seat_taken", 409)
    RATED_NEEDS_ACCOUNT = ("rated_needs_account", 409)
    ROOM_CLOSED = ("room_closed", 409)
    TOO_MANY_TABLES = ("too_many_tables", 409)
    TOO_MANY_AI_GAMES = ("too_many_ai_games", 409)
    GAME_IN_PROGRESS = ("game_in_progress", 409)
    NO_DRAW_OFFER = ("no_draw_offer", 409)
    DRAW_OFFER_LIMIT = ("draw_offer_limit", 409)
    TAKEBACKS_OFF = ("takebacks_off", 409)
    NO_TAKEBACK = ("no_takeback", 409)
    TOO_EARLY = ("too_early", 409)
    TABLE_CLOSED = ("table_closed", 409)
    SLUG_TAKEN = ("slug_taken", 409)
    OWN_ACCOUNT = ("own_account", 409)
    ALREADY_BANNED = ("already_banned", 409)
    NOT_BANNED = ("not_banned", 409)
    AI_ACCOUNT = ("ai_account", 409)  # the computer's accounts are not banned
    NAME_TAKEN = ("name_taken", 409)
    BOT_NEEDS_ACCOUNT = ("bot_needs_account", 400)
    BOT_HAS_GAMES = ("bot_has_games", 400)
    # Too much, too often.
    RATE_LIMITED = ("rate_limited", 429)
    TOO_MANY_CONNECTIONS = ("too_many_connections", 429)
    TOO_MANY_ATTEMPTS = ("too_many_attempts", 429)
    TOO_MANY_ACCOUNTS = ("too_many_accounts", 429)
    # The server's fault: nothing changed, try again.
    SERVER_ERROR = ("server_error", 500)
    UNAVAILABLE = ("server_error", 503)

    def __init__(self, text: str, http_status: int) -> None:
        self.text = text
        self.http_status = http_status

    def __str__(self) -> str:
        return self.text

    @classmethod
    def of(cls, text: str) -> Code:
        """The member with this text (the first, where two share it): a rules error's code."""
        return _BY_TEXT[text]


_BY_TEXT: dict[str, Code] = {}
for _member in Code:
    _BY_TEXT.setdefault(_member.text, _member)


class ServiceError(Exception):
    """A refused request: its `code` (with the REST status) and a `message`."""

    def __init__(
        self,
        code: Code,
        message: str,
        *,
        retry_after: int | None = None,
        extra: Mapping[str, Any] | None = None,
    ) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.retry_after = retry_after
        """Seconds after which the same request may succeed (sent as `Retry-After`)."""
        self.extra = dict(extra or {})
        """Fields a program acts on, sent beside `code` and `message` (`too_many_tables`:
        the `tables` that count)."""

    @property
    def http_status(self) -> int:
        return self.code.http_status
