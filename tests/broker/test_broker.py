"""The broker as live play uses it, on both backends: memory:// and a real Redis."""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from collections.abc import AsyncIterator

import pytest

from app.broker import Broker, BrokerUnavailable, SubscriberDropped, create_broker
from tests.conftest import PrivateRedis
from tests.support.ports import free_port


def channel() -> str:
    """A channel name no other test run uses (they may share the Redis server)."""
    return f"test:{uuid.uuid4().hex}"


@pytest.fixture(params=["memory", "redis"])
async def broker(request: pytest.FixtureRequest) -> AsyncIterator[Broker]:
    # Only the Redis case asks for the server (and skips without one).
    url = "memory://" if request.param == "memory" else request.getfixturevalue("redis_url")
    b = create_broker(url, queue_size=8)
    await b.connect()
    yield b
    await b.disconnect()


async def take(sub: AsyncIterator[str], n: int) -> list[str]:
    return [await anext(sub) for _ in range(n)]


async def test_subscriber_receives_messages_in_order(broker: Broker) -> None:
    ch = channel()
    async with broker.subscribe(ch) as sub:
        for i in range(5):
            await broker.publish(ch, f"m{i}")
        assert await take(sub, 5) == ["m0", "m1", "m2", "m3", "m4"]


async def test_every_subscriber_gets_every_message(broker: Broker) -> None:
    ch = channel()
    async with broker.subscribe(ch) as a, broker.subscribe(ch) as b:
        await broker.publish(ch, '{"type": "move", "move": "11-15"}')
        await broker.publish(ch, "ünïcödé ♛")
        expected = ['{"type": "move", "move": "11-15"}', "ünïcödé ♛"]
        assert await take(a, 2) == expected
        assert await take(b, 2) == expected


async def test_channels_are_separate(broker: Broker) -> None:
    one, two = channel(), channel()
    async with broker.subscribe(one) as sub:
        await broker.publish(two, "elsewhere")
        await broker.publish(one, "here")
        assert await take(sub, 1) == ["here"]


async def test_no_history_and_nothing_after_leaving(broker: Broker) -> None:
    ch = channel()
    await broker.publish(ch, "before anyone listened")
    async with broker.subscribe(ch) as first:
        await broker.publish(ch, "one")
        assert await take(first, 1) == ["one"]
    async with broker.subscribe(ch) as second:
        await broker.publish(ch, "two")
        assert await take(second, 1) == ["two"]
    # The first subscription ended when its block was left.
    assert [text async for text in first] == []


async def test_slow_subscriber_is_dropped_without_hurting_others(broker: Broker) -> None:
    ch = channel()
    async with broker.subscribe(ch) as slow, broker.subscribe(ch) as fast:
        received: list[str] = []
        for i in range(20):  # queue_size is 8
            await broker.publish(ch, str(i))
            received.append(await anext(fast))
        assert received == [str(i) for i in range(20)]
        with pytest.raises(SubscriberDropped):
            await anext(slow)
        assert slow.dropped
        # Buffered messages were discarded at once; iterating again fails the same way.
        with pytest.raises(SubscriberDropped):
            async for _ in slow:
                pass


async def test_disconnect_ends_iterations_and_ping(broker: Broker) -> None:
    ch = channel()
    assert await broker.ping()
    async with broker.subscribe(ch) as sub:
        await broker.publish(ch, "last")
        assert await take(sub, 1) == ["last"]
        await broker.disconnect()
        assert [text async for text in sub] == []
    assert not await broker.ping()


async def test_concurrent_subscribers_all_ready_on_entry(broker: Broker) -> None:
    ch = channel()
    ready = asyncio.Event()
    entered = 0

    async def listen() -> str:
        nonlocal entered
        async with broker.subscribe(ch) as sub:
            entered += 1
            if entered == 10:
                ready.set()
            return await anext(sub)

    tasks = [asyncio.create_task(listen()) for _ in range(10)]
    await ready.wait()
    await broker.publish(ch, "hello")
    assert await asyncio.gather(*tasks) == ["hello"] * 10


async def test_redis_fans_out_between_processes(redis_url: str) -> None:
    """Two broker instances stand for two server processes sharing one Redis."""
    one, two = create_broker(redis_url), create_broker(redis_url)
    await one.connect()
    await two.connect()
    try:
        ch = channel()
        async with one.subscribe(ch) as sub1, two.subscribe(ch) as sub2:
            await one.publish(ch, "from one")
            await two.publish(ch, "from two")
            assert await take(sub1, 2) == ["from one", "from two"]
            assert await take(sub2, 2) == ["from one", "from two"]
    finally:
        await one.disconnect()
        await two.disconnect()


async def test_many_concurrent_publishers_all_get_through(redis_url: str) -> None:
    """A busy process publishes for hundreds of games at once: more at a time than a Redis
    client's pool has connections. Every message arrives, in each publisher's order."""
    publisher, listener = create_broker(redis_url), create_broker(redis_url, queue_size=4096)
    await publisher.connect()
    await listener.connect()
    try:
        channels = [channel() for _ in range(300)]
        async with contextlib.AsyncExitStack() as stack:
            subs = [await stack.enter_async_context(listener.subscribe(ch)) for ch in channels]

            async def say(ch: str) -> None:
                for n in range(3):
                    await publisher.publish(ch, f"{ch}:{n}")

            await asyncio.gather(*(say(ch) for ch in channels))
            for ch, sub in zip(channels, subs, strict=True):
                assert await take(sub, 3) == [f"{ch}:{n}" for n in range(3)]
    finally:
        await publisher.disconnect()
        await listener.disconnect()


def test_unknown_url_scheme_is_refused() -> None:
    with pytest.raises(ValueError, match="memory://"):
        create_broker("kafka://localhost")


async def test_unreachable_redis_is_reported() -> None:
    broker = create_broker(f"redis://127.0.0.1:{free_port()}/0")
    with pytest.raises(BrokerUnavailable, match="cannot reach Redis"):
        await broker.connect()


async def test_redis_restart_is_survived(private_redis: PrivateRedis) -> None:
    """Health turns false while Redis is down; subscriptions resume when it is back."""
    broker = create_broker(private_redis.url)
    await broker.connect()
    try:
        ch = channel()
        async with broker.subscribe(ch) as sub:
            await broker.publish(ch, "before")
            assert await take(sub, 1) == ["before"]

            await private_redis.stop()
            assert not await broker.ping()
            with pytest.raises(BrokerUnavailable):
                await broker.publish(ch, "lost")

            await private_redis.start()
            for _ in range(100):  # the reader reconnects and subscribes again
                if await broker.ping():
                    await broker.publish(ch, "after")
                    try:
                        async with asyncio.timeout(0.2):
                            assert await take(sub, 1) == ["after"]
                            break
                    except TimeoutError:
                        continue
                await asyncio.sleep(0.1)
            else:
                pytest.fail("the subscription did not resume after Redis restarted")
    finally:
        await broker.disconnect()
