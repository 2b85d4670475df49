"""The analysis workers (docs/analysis.md): every server process runs `ANALYSIS_WORKERS` tasks
that take the oldest waiting analysis from the database under a lease and search its positions
one at a time in processes of their own, spawned in Linux's idle scheduling class (the CPU only
when nothing else wants it), so that the server's event loop and the computer's searches never
wait for an analysis. The analysis board's searches run in the same processes."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import multiprocessing
import os
import time
from collections.abc import Callable
from concurrent.futures import Executor, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from datetime import timedelta
from typing import Any, TypeVar

from app.analysis import store as stored
from app.analysis.game import GameAnalysis as Analysis
from app.analysis.game import PositionValue, assemble, value_at
from app.analysis.service import ply_payload
from app.archive import service as archive
from app.archive.visibility import Viewer
from app.computer.search import watch_parent
from app.engine import Limits
from app.live.liveplay import LivePlay
from app.rules import Color, RulesError

logger = logging.getLogger(__name__)
T = TypeVar("T")

LEASE = timedelta(seconds=60)
"""How long a worker holds an analysis without a word: renewed with each progress note."""
PROGRESS_EVERY_S = 2.0
IDLE_POLL_S = 1.0


def analysis_process(parent: int, idle: bool = True) -> None:
    """An analysis process starts: in Linux's idle scheduling class (the CPU only when nothing
    else wants it; the lowest niceness elsewhere) unless `idle` is false, and exiting once its
    server process is gone."""
    if not idle:
        watch_parent(parent)
        return
    try:
        os.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0))
    except (AttributeError, OSError):
        with contextlib.suppress(OSError, AttributeError):
            os.nice(19)
    watch_parent(parent)


class AnalysisRunner:
    """Takes analyses from the queue and makes them, one at a time per worker process."""

    def __init__(self, live: LivePlay, workers: int, *, idle: bool = True) -> None:
        self.live = live
        self.workers = workers
        self.idle = idle
        self.pool: Executor | None = None
        self._tasks: list[asyncio.Task[None]] = []
        self.wake = asyncio.Event()

    def start(self) -> None:
        self._tasks = [
            asyncio.create_task(self._run(), name=f"analysis-{n}") for n in range(self.workers)
        ]

    async def stop(self) -> None:
        for task in self._tasks:
            task.cancel()
        for task in self._tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task
        if self.pool is not None:
            self.pool.shutdown(wait=False, cancel_futures=True)

    async def run(self, task: Callable[..., T], *args: Any) -> T:
        """Run `task(*args)` in the analysis processes (the analysis board's searches)."""
        loop = asyncio.get_running_loop()
        try:
            return await loop.run_in_executor(self._processes(), task, *args)
        except BrokenProcessPool:
            logger.warning("the analysis processes died; starting new ones")
            self.pool = None
            return await loop.run_in_executor(self._processes(), task, *args)

    def _processes(self) -> Executor:
        if self.pool is None:
            self.pool = ProcessPoolExecutor(
                max(1, self.workers),
                mp_context=multiprocessing.get_context("spawn"),
                initializer=analysis_process,
                initargs=(os.getpid(), self.idle),
            )
        return self.pool

    async def _run(self) -> None:
        while True:
            try:
                worked = await self.once()
            except asyncio.CancelledError:
                raise
            except Exception:
                logger.warning("an analysis step failed; retrying", exc_info=True)
                worked = False
            if not worked:
                self.wake.clear()
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self.wake.wait(), IDLE_POLL_S)

    async def once(self) -> bool:
        """Take one waiting analysis and make it; False if none waits."""
        live = self.live
        worker = live.instance
        async with live.db.session() as session:
            claimed = await stored.claim(session, worker, live.clock.now(), LEASE)
            if claimed is None:
                return False
            row, game = claimed
            game_id, nodes = row.game_id, row.nodes
            variant, start_fen = game.variant, game.start_fen
            await session.commit()
        async with live.db.session() as session:
            record = await archive.get_game(session, game_id, Viewer(admin=True))
        moves = record.moves
        budget = Limits(nodes=nodes, egdb=True, seed=0)
        try:
            analysis = await self._make(game_id, worker, variant, moves, start_fen, budget)
        except (RulesError, ValueError) as exc:  # a stored game that does not replay
            await self._finish(game_id, worker, {"status": stored.FAILED, "error": str(exc)[:200]})
            return True
        if analysis is None:  # another worker took it over
            return True
        await self._finish(game_id, worker, _stored(analysis))
        return True

    async def _make(
        self,
        game_id: int,
        worker: str,
        variant: str,
        moves: list[str],
        start_fen: str | None,
        budget: Limits,
    ) -> Analysis | None:
        loop = asyncio.get_running_loop()
        values: list[PositionValue] = []
        noted = time.monotonic()
        for ply in range(len(moves) + 1):
            args = (variant, moves, start_fen, ply, budget)
            try:
                value = await loop.run_in_executor(self._processes(), value_at, *args)
            except BrokenProcessPool:
                logger.warning("the analysis processes died; starting new ones")
                self.pool = None
                value = await loop.run_in_executor(self._processes(), value_at, *args)
            values.append(value)
            if time.monotonic() - noted >= PROGRESS_EVERY_S:
                noted = time.monotonic()
                async with self.live.db.session() as session:
                    lease = self.live.clock.now() + LEASE
                    if not await stored.progress(session, game_id, worker, len(values), lease):
                        return None
                    await session.commit()
        return assemble(variant, moves, start_fen, values)

    async def _finish(self, game_id: int, worker: str, values: dict[str, Any]) -> None:
        async with self.live.db.session() as session:
            await stored.finish(session, game_id, worker, values, self.live.clock.now())
            await session.commit()


def _stored(analysis: Analysis) -> dict[str, Any]:
    return {
        "status": stored.DONE,
        "done": len(analysis.plies) + 1,
        "start": analysis.start.value.payload()
        | {"text": analysis.start.value.text(), "best": analysis.start.best},
        "plies": [ply_payload(p) for p in analysis.plies],
        "accuracy_black": analysis.accuracy(Color.BLACK),
        "accuracy_white": analysis.accuracy(Color.WHITE),
    }
