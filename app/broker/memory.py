"""`memory://`: fan-out inside one process, for the embedded default and tests."""

from __future__ import annotations

from app.broker.base import DEFAULT_QUEUE_SIZE, Broker


class MemoryBroker(Broker):
    """Delivers published messages straight to this process's subscribers."""

    shared = False

    def __init__(self, queue_size: int = DEFAULT_QUEUE_SIZE) -> None:
        super().__init__(queue_size)
        self._connected = False

    async def connect(self) -> None:
        self._connected = True

    async def _close_backend(self) -> None:
        self._connected = False

    async def _listen(self, channel: str) -> None:
        """Nothing to ask for: every publication already passes through this process."""

    async def _unlisten(self, channel: str) -> None:
        """Nothing to undo."""

    async def publish(self, channel: str, text: str) -> None:
        self._fan_out(channel, text)

    async def ping(self) -> bool:
        return self._connected
