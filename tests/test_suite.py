"""The suite's own promises: a test whose component is missing is skipped with the reason."""

from __future__ import annotations

import pytest

from tests.conftest import free_port, require_redis


def test_without_a_redis_server_the_redis_tests_skip_saying_why() -> None:
    url = f"redis://127.0.0.1:{free_port()}/0"  # nothing listens there
    with pytest.raises(pytest.skip.Exception, match=r"redis: no Redis server at redis://"):
        require_redis(url)


def test_a_redis_server_that_answers_is_used(redis_url: str) -> None:
    require_redis(redis_url)  # does not skip (the fixture itself skipped if none answers)
