"""`redis://`: fan-out across processes through Redis pub/sub (redis.asyncio).

Each process keeps one pub/sub connection, subscribed to the channels its local subscribers
want, and one reader task that hands incoming messages to them. Publishing is grouped: what is
published while a batch is on its way goes out as the next batch, pipelined on one connection,
so a busy process makes one round trip for many messages and never needs more connections than
two (redis-py's pool refuses a 101st concurrent command). Redis pub/sub keeps no history:
messages published while the link is down are lost; the live layer finds the gap by the events'
numbers and reads them from the database.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import Any

from redis.asyncio import Redis
from redis.asyncio.client import PubSub
from redis.exceptions import RedisError

from app.broker.base import DEFAULT_QUEUE_SIZE, Broker, BrokerUnavailable

logger = logging.getLogger(__name__)

PING_TIMEOUT_SECONDS = 2.0
SUBSCRIBE_TIMEOUT_SECONDS = 5.0
RECONNECT_DELAY_SECONDS = 0.5


def _untyped(pubsub: PubSub) -> Any:
    """The pub/sub object, for methods that redis-py types in some releases and not in others
    (`connect`, `aclose`): called through `Any`, mypy accepts them under either."""
    return pubsub


class RedisBroker(Broker):
    def __init__(self, url: str, queue_size: int = DEFAULT_QUEUE_SIZE) -> None:
        super().__init__(queue_size)
        self.url = url
        self._redis: Redis | None = None
        self._pubsub: PubSub | None = None
        self._reader: asyncio.Task[None] | None = None
        self._lock = asyncio.Lock()
        # Channels whose SUBSCRIBE Redis has not confirmed yet.
        self._confirmations: dict[str, asyncio.Event] = {}
        # Messages waiting for the next batch, and the task sending batches while there are.
        self._outbox: list[tuple[str, str, asyncio.Future[None]]] = []
        self._sender: asyncio.Task[None] | None = None

    async def connect(self) -> None:
        self._redis = Redis.from_url(
            self.url, decode_responses=True, socket_connect_timeout=PING_TIMEOUT_SECONDS
        )
        self._pubsub = self._redis.pubsub()
        try:
            await self._redis.ping()
            await _untyped(self._pubsub).connect()
        except (RedisError, OSError) as exc:
            await self._close_backend()
            raise BrokerUnavailable(f"cannot reach Redis at {self.url}: {exc}") from exc
        self._reader = asyncio.create_task(self._read(self._pubsub), name="redis-broker-reader")

    async def _close_backend(self) -> None:
        if self._sender is not None:
            self._sender.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._sender
            self._sender = None
        if self._reader is not None:
            self._reader.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._reader
            self._reader = None
        if self._pubsub is not None:
            await _untyped(self._pubsub).aclose()
            self._pubsub = None
        if self._redis is not None:
            await self._redis.aclose()
            self._redis = None

    async def publish(self, channel: str, text: str) -> None:
        if self._redis is None:
            raise BrokerUnavailable("the broker is not connected")
        sent: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._outbox.append((channel, text, sent))
        if self._sender is None or self._sender.done():
            self._sender = asyncio.create_task(self._send(self._redis), name="redis-publisher")
        await sent

    async def _send(self, redis: Redis) -> None:
        """Send the waiting messages, a pipelined batch at a time, until none wait."""
        while self._outbox:
            batch, self._outbox = self._outbox, []
            pipe = redis.pipeline(transaction=False)
            for channel, text, _ in batch:
                pipe.publish(channel, text)
            try:
                await pipe.execute()
            except (RedisError, OSError) as exc:
                channels = ", ".join(sorted({f"{channel!r}" for channel, _, _ in batch}))
                failure = BrokerUnavailable(f"cannot publish on {channels}: {exc}")
                for _, _, sent in batch:
                    if not sent.done():
                        sent.set_exception(failure)
                continue
            except BaseException as exc:  # cancelled: the broker is closing
                for _, _, sent in batch + self._outbox:
                    if not sent.done():
                        sent.set_exception(BrokerUnavailable(f"the broker is closing: {exc!r}"))
                self._outbox = []
                raise
            for _, _, sent in batch:
                if not sent.done():
                    sent.set_result(None)

    async def ping(self) -> bool:
        if self._redis is None or self._reader is None or self._reader.done():
            return False
        try:
            async with asyncio.timeout(PING_TIMEOUT_SECONDS):
                return bool(await self._redis.ping())
        except (RedisError, OSError, TimeoutError):
            return False

    async def _listen(self, channel: str) -> None:
        if self._pubsub is None:
            raise BrokerUnavailable("the broker is not connected")
        confirmed = self._confirmations.setdefault(channel, asyncio.Event())
        try:
            async with self._lock:
                await self._pubsub.subscribe(channel)
            # Redis confirms on the pub/sub connection; until then a PUBLISH from another
            # connection could overtake the SUBSCRIBE and be lost to this subscriber.
            async with asyncio.timeout(SUBSCRIBE_TIMEOUT_SECONDS):
                await confirmed.wait()
        except (RedisError, OSError, TimeoutError) as exc:
            raise BrokerUnavailable(f"cannot subscribe to {channel!r}: {exc}") from exc
        finally:
            if self._confirmations.get(channel) is confirmed:
                del self._confirmations[channel]

    async def _unlisten(self, channel: str) -> None:
        if self._pubsub is None:
            return
        async with self._lock:
            if self._is_wanted(channel):  # a new subscriber arrived meanwhile
                return
            try:
                await self._pubsub.unsubscribe(channel)
            except (RedisError, OSError) as exc:
                logger.warning("cannot unsubscribe from %r: %s", channel, exc)

    async def _read(self, pubsub: PubSub) -> None:
        """Hand every message to the local subscribers; survive Redis restarts."""
        failing = False
        while True:
            try:
                message: dict[str, Any] | None = await pubsub.get_message(timeout=None)
            except (RedisError, OSError) as exc:
                # redis-py reconnects and re-subscribes on the next read.
                if not failing:
                    logger.warning("Redis pub/sub connection lost, retrying: %s", exc)
                    failing = True
                await asyncio.sleep(RECONNECT_DELAY_SECONDS)
                continue
            if failing:
                logger.warning("Redis pub/sub connection restored")
                failing = False
            if message is None:
                continue
            kind = message["type"]
            if kind == "message":
                self._fan_out(message["channel"], message["data"])
            elif kind == "subscribe":
                event = self._confirmations.get(message["channel"])
                if event is not None:
                    event.set()
