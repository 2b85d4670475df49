"""Every service refuses with one family of errors, which each face translates in one place."""

from __future__ import annotations

import pytest

from app.services import accounts, admin, archive
from app.services.errors import ServiceError
from app.services.live import PlayError


@pytest.mark.parametrize(
    ("error", "code", "status"),
    [
        (PlayError("not_your_turn", "it is white's turn"), "not_your_turn", 409),
        (admin.NotFound("game 7"), "not_found", 404),
        (admin.Refused("game_over", "game 7 is not in progress"), "game_over", 409),
        (admin.BadCursor(), "bad_cursor", 400),
        (archive.ArchiveError("bad_request", "since must not be after until"), "bad_request", 400),
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
    assert (error.code, error.http_status) == (code, status)
    assert error.message == str(error)


def test_throttled_refusals_say_when_to_retry() -> None:
    error = accounts.TooManyFailures(30)
    assert error.retry_after == 30 and error.message.endswith("retry in 30 s")
    assert accounts.Banned("spam").retry_after is None
