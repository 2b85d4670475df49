"""Group commit of moves: the moves that arrive together are stored in one transaction.

Each accepted move is one conditional update of its game (stored only if the game is still
in progress at the ply before it), one insert into `moves`, and its table events numbered and
appended to the table's log (`table_log`), all in the same transaction; the statements are
`app.play.store`'. Committing them one transaction
each costs a database round trip and a log flush per move; instead a writer task takes
whatever is queued (moves that arrived while the previous batch was being written) and commits
it at once, then answers every waiting move. On PostgreSQL a whole batch is a single
statement. A move whose conditional update matches no row (another process moved or ended the
game first) is reported as not stored and its inserts are skipped.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable
from functools import partial

from sqlalchemy.ext.asyncio import AsyncConnection

from app.db.engine import Database
from app.play import moves_store as stored_moves
from app.play.moves_store import MoveCommit, Stored

__all__ = ["MoveCommit", "MoveWriter", "Stored"]

logger = logging.getLogger(__name__)

MAX_BATCH = 256
# Batches written at once on PostgreSQL: while one waits for its commit to reach the disk, the
# next takes the moves that arrived meanwhile (the server merges concurrent log flushes). Moves
# of one game are never in two batches at once: a game's next move waits for the previous.
POSTGRES_WRITERS = 4
RECONNECT_DELAY_SECONDS = 0.5
# A writer with nothing to write checks its connection this often, so that a database restart
# is noticed (and the connection replaced) before a player's move finds it dead.
IDLE_CHECK_SECONDS = 2.0


class MoveWriter:
    """The tasks that write moves; `await writer.store(move)` gives the move's events as
    numbered, or None if the game had moved on."""

    def __init__(self, db: Database, max_batch: int = MAX_BATCH) -> None:
        self.db = db
        self.max_batch = max_batch
        self.postgres = db.engine.dialect.name == "postgresql"
        self.writers = POSTGRES_WRITERS if self.postgres else 1
        self._queue: asyncio.Queue[tuple[MoveCommit, asyncio.Future[Stored]]] = asyncio.Queue()
        self._tasks: list[asyncio.Task[None]] = []
        # A batch whose connection failed under it, tried once more on a new connection.
        self._retry: list[list[tuple[MoveCommit, asyncio.Future[Stored]]]] = []

    def start(self) -> None:
        self._tasks = [
            asyncio.create_task(self._run(), name=f"move-writer-{n}") for n in range(self.writers)
        ]

    async def stop(self) -> None:
        for task in self._tasks:
            task.cancel()
        for task in self._tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task
        self._tasks = []
        while not self._queue.empty():
            _, waiter = self._queue.get_nowait()
            if not waiter.done():
                waiter.set_exception(RuntimeError("the server is shutting down"))

    async def store(self, move: MoveCommit) -> Stored:
        """Queue the move and wait until its batch is committed; None if the game moved on."""
        waiter: asyncio.Future[Stored] = asyncio.get_running_loop().create_future()
        self._queue.put_nowait((move, waiter))
        return await waiter

    async def _run(self) -> None:
        """Write batches on a connection of this task's own (no pool checkout per batch); open
        a new one after a failure, and try the batch that failed once more on it."""
        while True:
            try:
                async with self.db.engine.connect() as conn:
                    try:
                        check: Callable[[], Awaitable[object]] | None = None
                        if self.postgres:
                            driver, batch = await stored_moves.prepare_batch(conn)
                            write = batch.write
                            check = partial(stored_moves.ping_driver, driver)
                        else:
                            write = partial(stored_moves.write_each, conn)
                        while True:
                            await self._write_next(conn, write, check)
                    finally:
                        # Not back to the pool: on PostgreSQL it carries this writer's settings.
                        with contextlib.suppress(Exception):
                            await conn.invalidate()
            except asyncio.CancelledError:
                raise
            except Exception:
                logger.warning("the move writer lost its database connection", exc_info=True)
                await asyncio.sleep(RECONNECT_DELAY_SECONDS)

    async def _write_next(
        self,
        conn: AsyncConnection,
        write: Callable[[list[MoveCommit]], Awaitable[list[Stored]]],
        check: Callable[[], Awaitable[object]] | None,
    ) -> None:
        """Write the next batch; with nothing to write for a while, `check` the connection
        (it raises on a dead one)."""
        retrying = bool(self._retry)
        if retrying:
            batch = self._retry.pop()
        else:
            if check is None:
                first = await self._queue.get()
            else:
                try:
                    first = await asyncio.wait_for(self._queue.get(), IDLE_CHECK_SECONDS)
                except TimeoutError:
                    await check()
                    return
            batch = [first]
            while len(batch) < self.max_batch and not self._queue.empty():
                batch.append(self._queue.get_nowait())
        moves = [move for move, _ in batch]
        try:
            stored = await write(moves)
            if retrying:  # the first try may have committed before its connection failed
                stored = await stored_moves.confirm(conn, moves, stored)
        except BaseException as exc:
            if not retrying and isinstance(exc, Exception):
                self._retry.append(batch)  # a new connection tries it again
                raise
            for _, waiter in batch:  # failed twice: every mover is told
                if not waiter.done():
                    waiter.set_exception(
                        exc if isinstance(exc, Exception) else RuntimeError("cancelled")
                    )
            raise
        for (_, waiter), result in zip(batch, stored, strict=True):
            if not waiter.done():
                waiter.set_result(result)
