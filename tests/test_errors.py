"""Every service refuses with one family of errors, which each face translates in one place."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.accounts import service as accounts
from app.archive import service as archive
from app.errors import Code, ServiceError
from app.live.liveplay import PlayError
from app.moderation import admin

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize(
    ("error", "code", "status"),
    [
        (PlayError(Code.NOT_YOUR_TURN, "it is white's turn"), "not_your_turn", 409),
        (admin.NotFound("game 7"), "not_found", 404),
        (admin.Refused(Code.GAME_OVER, "game 7 is not in progress"), "game_over", 409),
        (admin.BadCursor(), "bad_cursor", 400),
        (archive.ArchiveError(Code.BAD_REQUEST, "since must not be after"), "bad_request", 400),
        (archive.NotFoundError("no game 7"), "not_found", 404),
        (accounts.InvalidName("the name 'admin' is reserved"), "invalid_name", 422),
        (accounts.WeakPassword("too short"), "weak_password", 422),
        (accounts.NameTaken("taken"), "name_taken", 409),
        (accounts.BadCredentials("wrong name or password"), "bad_credentials", 401),
        (accounts.Banned(None), "banned", 403),
        (accounts.TooManyFailures(30), "too_many_attempts", 429),
        (accounts.TooManyAccounts(60, "guest"), "too_many_accounts", 429),
    ],
)
def test_each_refusal_is_a_service_error_with_its_code_and_status(
    error: ServiceError, code: str, status: int
) -> None:
    assert isinstance(error, ServiceError)
    assert (error.code.text, error.http_status) == (code, status)
    assert error.message == str(error)


def test_throttled_refusals_say_when_to_retry() -> None:
    error = accounts.TooManyFailures(30)
    assert error.retry_after == 30 and error.message.endswith("retry in 30 s")
    assert accounts.Banned("spam").retry_after is None


def test_every_code_a_client_can_see_is_documented() -> None:
    """The enum is the one list of codes: each is in docs/protocol.md's tables or the REST
    reference (docs/rest.md), and each text keeps one meaning (two members share a text only
    to answer it with another status)."""
    docs = (ROOT / "docs" / "protocol.md").read_text() + (ROOT / "docs" / "rest.md").read_text()
    missing = sorted({c.text for c in Code if f"`{c.text}`" not in docs})
    assert not missing, f"undocumented error codes: {missing}"


def test_rules_codes_name_members() -> None:
    for text in ("invalid_move", "illegal_move", "capture_required", "ambiguous_move"):
        assert Code.of(text).text == text
    assert Code.of("not_found") is Code.NOT_FOUND
