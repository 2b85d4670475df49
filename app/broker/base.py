"""The broker interface and the per-process fan-out shared by every backend.

A backend only has to move text between processes (or not, for `memory://`); delivering it to
the local subscribers of a channel, bounding their queues and closing them is done here once.
"""

from __future__ import annotations

import asyncio
import logging
from abc import ABC, abstractmethod
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Final

logger = logging.getLogger(__name__)

DEFAULT_QUEUE_SIZE: Final = 1024


class BrokerError(Exception):
    """Base class of the broker's errors."""


class BrokerUnavailable(BrokerError):
    """The backend cannot be reached (e.g. Redis is down); the message was not published."""


class SubscriberDropped(BrokerError):
    """Raised by a subscription's iterator after it fell `queue_size` messages behind.

    The broker discarded its buffered messages, so the consumer has missed events: it should
    resynchronise from storage (or close its client's connection) rather than carry on.
    """


class _Closed:
    """Queue sentinel: the broker disconnected, the iteration ends normally."""


class _Dropped:
    """Queue sentinel: the subscriber overflowed, the iteration raises SubscriberDropped."""


_CLOSED: Final = _Closed()
_DROPPED: Final = _Dropped()


class Subscription:
    """The messages of one channel for one consumer, in publication order: `async for text in sub`.

    The queue holds at most `queue_size` messages (one more slot is kept for the end marker). A
    subscriber that falls that far behind is dropped: its buffer is freed at once and its
    iteration raises `SubscriberDropped`, so one slow consumer cannot make the process grow.
    """

    def __init__(
        self, channel: str, queue_size: int, on_message: Callable[[str], None] | None = None
    ) -> None:
        self.channel = channel
        self.dropped = False
        self._queue_size = queue_size
        self._queue: asyncio.Queue[str | _Closed | _Dropped] = asyncio.Queue(queue_size + 1)
        self._closed = False
        self._on_message = on_message

    @property
    def closed(self) -> bool:
        return self._closed

    def deliver(self, text: str) -> None:
        """Queue one message without waiting; drop the subscriber if its queue is full."""
        if self._closed:
            return
        if self._on_message is not None:
            try:
                self._on_message(text)
            except Exception:  # the consumer's fault: the other subscribers still get theirs
                logger.exception("a subscriber of %r failed on a message", self.channel)
            return
        if self._queue.qsize() >= self._queue_size:
            self._drop()
            return
        self._queue.put_nowait(text)

    def close(self) -> None:
        """End the iteration after the messages already queued."""
        if not self._closed:
            self._closed = True
            self._queue.put_nowait(_CLOSED)

    def _drop(self) -> None:
        logger.warning(
            "dropping a subscriber of %r: %d messages behind", self.channel, self._queue_size
        )
        self._closed = True
        self.dropped = True
        while not self._queue.empty():
            self._queue.get_nowait()
        self._queue.put_nowait(_DROPPED)

    def __aiter__(self) -> Subscription:
        return self

    async def __anext__(self) -> str:
        item = await self._queue.get()
        if isinstance(item, str):
            return item
        # Leave the marker in place so that iterating again ends the same way.
        self._queue.put_nowait(item)
        if isinstance(item, _Dropped):
            raise SubscriberDropped(f"subscriber of {self.channel!r} fell too far behind")
        raise StopAsyncIteration


class _Channel:
    """The local subscribers of one channel and the backend request that feeds them."""

    def __init__(self, listening: asyncio.Future[None]) -> None:
        self.listening = listening
        self.subs: set[Subscription] = set()


class Broker(ABC):
    """Publish text on named channels; every current subscriber of the channel receives it.

    Delivery is at most once and only to subscriptions that exist when the message arrives:
    there is no history. Consumers that need every event keep a version number and resync.
    """

    # Whether publications reach other server processes (False: only this one's subscribers).
    shared = True

    def __init__(self, queue_size: int = DEFAULT_QUEUE_SIZE) -> None:
        if queue_size < 1:
            raise ValueError("queue_size must be at least 1")
        self.queue_size = queue_size
        self._channels: dict[str, _Channel] = {}

    @abstractmethod
    async def connect(self) -> None:
        """Open the backend; raises BrokerUnavailable if it cannot be reached."""

    async def disconnect(self) -> None:
        """End every subscription's iteration, then close the backend."""
        for entry in self._channels.values():
            for sub in entry.subs:
                sub.close()
        self._channels.clear()
        await self._close_backend()

    @abstractmethod
    async def publish(self, channel: str, text: str) -> None:
        """Send `text` to every subscriber of `channel`, in this process and (Redis) others."""

    @abstractmethod
    async def ping(self) -> bool:
        """True if messages can flow right now; for the health check."""

    @asynccontextmanager
    async def subscribe(
        self, channel: str, on_message: Callable[[str], None] | None = None
    ) -> AsyncIterator[Subscription]:
        """Subscribe for the duration of the block; messages published after entry arrive.
        With `on_message`, each is handed to it as it arrives, by the task that reads the
        backend (no queue, no task woken per message; it must not block), and iterating the
        subscription only waits for its end."""
        sub = Subscription(channel, self.queue_size, on_message)
        entry = self._channels.get(channel)
        if entry is None:
            # The first local subscriber asks the backend for the channel; later ones wait for
            # the same request so that none of them starts before messages can flow.
            entry = self._channels[channel] = _Channel(asyncio.ensure_future(self._listen(channel)))
        entry.subs.add(sub)
        try:
            await asyncio.shield(entry.listening)
            yield sub
        finally:
            sub.close()
            entry.subs.discard(sub)
            if not entry.subs and self._channels.get(channel) is entry:
                del self._channels[channel]
                await self._release(channel, entry)

    async def _release(self, channel: str, entry: _Channel) -> None:
        """Undo the backend request of a channel that has no local subscriber left."""
        if not entry.listening.done():
            await asyncio.wait([entry.listening])
        if not entry.listening.cancelled() and entry.listening.exception() is None:
            await self._unlisten(channel)

    def _is_wanted(self, channel: str) -> bool:
        """True while the channel has local subscribers (for backends undoing a request)."""
        return channel in self._channels

    def _fan_out(self, channel: str, text: str) -> None:
        """Hand a message that reached this process to the channel's local subscribers."""
        entry = self._channels.get(channel)
        if entry is not None:
            for sub in tuple(entry.subs):
                sub.deliver(text)

    @abstractmethod
    async def _listen(self, channel: str) -> None:
        """Start receiving `channel` from the backend (the first local subscriber arrived)."""

    @abstractmethod
    async def _unlisten(self, channel: str) -> None:
        """Stop receiving `channel` from the backend (the last local subscriber left)."""

    @abstractmethod
    async def _close_backend(self) -> None:
        """Release the backend's connections."""
