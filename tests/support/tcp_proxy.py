"""A small TCP proxy for tests that break the link between a browser and the server.

`TcpProxy(port)` listens on 127.0.0.1:<free port> and forwards every connection to
127.0.0.1:`port`, on an event loop in a thread of its own, so that a synchronous test
(Playwright's) drives it. The link can be:

- `cut()`: every open connection is closed on both sides at once, and new ones are closed as
  soon as they are accepted, as when a cable is pulled out (a browser's offline mode closes no
  open websocket);
- `stall()`: nothing is forwarded any more, either way, and nothing is closed: connections old
  and new stay open and silent, as on a link that drops every packet. What was sent meanwhile is
  held and delivered at `restore()`;
- `restore()`: forwarding again (held bytes first), new connections accepted.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Iterator
from concurrent.futures import Future
from typing import Any

CHUNK = 65536


class TcpProxy:
    def __init__(self, target_port: int, target_host: str = "127.0.0.1") -> None:
        self.target = (target_host, target_port)
        self.port = 0
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self.loop.run_forever, name="tcp-proxy", daemon=True)
        self._server: asyncio.Server | None = None
        self._writers: set[asyncio.StreamWriter] = set()
        self._flowing: asyncio.Event | None = None
        self._cut = False

    # --- driven from the test's thread --------------------------------------------------------

    def start(self) -> TcpProxy:
        self._thread.start()
        self._call(self._start())
        return self

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def cut(self) -> None:
        self._call(self._do_cut())

    def stall(self) -> None:
        self._call(self._do_stall())

    def restore(self) -> None:
        self._call(self._do_restore())

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self._call(self._do_close())
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(timeout=5)
        self.loop.close()

    def _call(self, coro: Any) -> Any:
        future: Future[Any] = asyncio.run_coroutine_threadsafe(coro, self.loop)
        return future.result(timeout=10)

    # --- on the proxy's loop ------------------------------------------------------------------

    async def _start(self) -> None:
        self._flowing = asyncio.Event()
        self._flowing.set()
        self._server = await asyncio.start_server(self._accept, "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]

    async def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        if self._cut:
            writer.transport.abort()
            return
        try:
            up_reader, up_writer = await asyncio.open_connection(*self.target)
        except OSError:
            writer.transport.abort()
            return
        self._writers |= {writer, up_writer}
        try:
            await asyncio.gather(
                self._pump(reader, up_writer), self._pump(up_reader, writer), return_exceptions=True
            )
        except asyncio.CancelledError:
            pass  # the proxy closes: a cancelled connection is no error
        finally:
            for w in (writer, up_writer):
                self._writers.discard(w)
                w.transport.abort()

    async def _pump(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        assert self._flowing is not None
        try:
            while True:
                data = await reader.read(CHUNK)
                await self._flowing.wait()  # a stall holds what was read
                if not data or self._cut:
                    break
                writer.write(data)
                await writer.drain()
        finally:
            # One side closed: close the other one too (a cut has already aborted both).
            writer.transport.abort()

    async def _do_cut(self) -> None:
        self._cut = True
        for writer in list(self._writers):
            writer.transport.abort()
        self._writers.clear()
        assert self._flowing is not None
        self._flowing.set()

    async def _do_stall(self) -> None:
        assert self._flowing is not None
        self._flowing.clear()

    async def _do_restore(self) -> None:
        self._cut = False
        assert self._flowing is not None
        self._flowing.set()

    async def _do_close(self) -> None:
        await self._do_cut()
        if self._server is not None:
            self._server.close()
        tasks = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)


@contextlib.contextmanager
def tcp_proxy(target_port: int) -> Iterator[TcpProxy]:
    """A running `TcpProxy` to 127.0.0.1:`target_port`, closed when the block ends."""
    proxy = TcpProxy(target_port).start()
    try:
        yield proxy
    finally:
        proxy.close()
