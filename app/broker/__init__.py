"""Live fan-out behind a small async interface: in-process (memory://) or Redis (redis://).

    broker = create_broker(settings.broker_url)
    await broker.connect()
    async with broker.subscribe("game:12") as sub:
        async for text in sub: ...
    await broker.publish("game:12", '{"type": "move", ...}')

Messages are text (JSON by convention); the broker never interprets them. Each subscription
buffers at most `queue_size` messages: a consumer that falls further behind is dropped and its
iteration raises `SubscriberDropped` (see `app.broker.base.Subscription`).
"""

from __future__ import annotations

from app.broker.base import (
    DEFAULT_QUEUE_SIZE,
    Broker,
    BrokerError,
    BrokerUnavailable,
    SubscriberDropped,
    Subscription,
)

__all__ = [
    "DEFAULT_QUEUE_SIZE",
    "Broker",
    "BrokerError",
    "BrokerUnavailable",
    "SubscriberDropped",
    "Subscription",
    "create_broker",
]


def create_broker(url: str, *, queue_size: int = DEFAULT_QUEUE_SIZE) -> Broker:
    """Pick the backend from the URL scheme: `memory://` or `redis://` / `rediss://`."""
    scheme = url.split(":", 1)[0].lower()
    if scheme == "memory":
        from app.broker.memory import MemoryBroker

        return MemoryBroker(queue_size)
    if scheme in ("redis", "rediss", "unix"):
        from app.broker.redis import RedisBroker

        return RedisBroker(url, queue_size)
    raise ValueError(f"unsupported broker URL {url!r}: use memory:// or redis://host:port/db")
