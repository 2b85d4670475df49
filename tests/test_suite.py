"""The suite's own promises: a test whose component is missing is skipped with the reason."""

from __future__ import annotations

import asyncio

import pytest

from tests.conftest import PrivateRedis, require_redis
from tests.support.ports import free_port


def test_without_a_redis_server_the_redis_tests_skip_saying_why() -> None:
    url = f"redis://127.0.0.1:{free_port()}/0"  # nothing listens there
    with pytest.raises(pytest.skip.Exception, match=r"redis: no Redis server at redis://"):
        require_redis(url)


async def test_a_redis_server_that_answers_is_used(private_redis: PrivateRedis) -> None:
    try:
        await asyncio.to_thread(require_redis, private_redis.url)
    except pytest.skip.Exception as skipped:
        pytest.fail(f"a running Redis was taken for none: {skipped}")
