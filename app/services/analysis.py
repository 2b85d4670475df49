"""Game analysis on request (docs/analysis.md): asked for once per game, by one of its players
or by anyone for a public game; made once, by whichever server process takes it from the
queue; served to everyone who may see the game after.

Fair use: one analysis waiting at a time per user, `ANALYSES_PER_DAY` a day per user and
`ANALYSES_PER_ADDRESS_PER_DAY` per client address (`rate_limited`, with the seconds to wait).
The work runs in processes of its own (`ANALYSIS_WORKERS` per server process) at the idle
scheduling class, which Linux gives the CPU only when nothing else wants it: the server's
event loop and the computer's searches never wait for an analysis. Each position is one task
(`app.analysis.game.value_at`); the runner notes its progress and renews its lease every few
positions, and an analysis whose process died is taken up again once its lease runs out.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import multiprocessing
import os
import threading
import time
from concurrent.futures import Executor, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from app.analysis import chances
from app.analysis.game import GameAnalysis as Analysis
from app.analysis.game import PositionValue, assemble, value_at
from app.db import analyses as stored
from app.db.models import GameAnalysis
from app.engine import Limits
from app.rules import Color, RulesError
from app.services import archive, limits
from app.services.errors import Code
from app.services.live import LivePlay, PlayError
from app.services.visibility import Viewer
from app.status import GameStatus
from app.timeutil import as_unix

logger = logging.getLogger(__name__)

LEASE = timedelta(seconds=60)
"""How long a worker holds an analysis without a word: renewed with each progress note."""
PROGRESS_EVERY_S = 2.0
IDLE_POLL_S = 1.0
DAY_S = 86_400


@dataclass(frozen=True)
class Asker:
    """Who asks for an analysis: their account (and whether an administrator), their address."""

    user_id: int
    admin: bool
    address: str


def ply_payload(ply: Any) -> dict[str, Any]:
    return {
        "ply": ply.ply,
        "move": ply.move,
        "eval": ply.value.payload() | {"text": ply.value.text()},
        "wdl": list(chances.wdl(ply.value)),
        "best": ply.best,
        "pv": list(ply.pv),
        "label": ply.label,
    }


def view(row: GameAnalysis, ahead: int | None = None) -> dict[str, Any]:
    """An analysis as served: its status and progress, then (done) its plies and accuracy."""
    done = row.status == stored.DONE
    return {
        "game": row.game_id,
        "status": row.status,
        "nodes": row.nodes,
        "progress": {"done": row.done, "total": row.total},
        "ahead": ahead,
        "requested_at": int(as_unix(row.requested_at) * 1000),
        "finished_at": int(as_unix(row.finished_at) * 1000) if row.finished_at else None,
        "start": row.start if done else None,
        "plies": row.plies if done else [],
        "accuracy": ({"black": row.accuracy_black, "white": row.accuracy_white} if done else None),
        "error": row.error,
    }


async def _game(live: LivePlay, game_id: int, viewer: Viewer) -> Any:
    async with live.db.session() as session:
        try:
            return await archive.get_game(session, game_id, viewer)
        except archive.NotFoundError:
            raise PlayError(Code.NOT_FOUND, f"no game {game_id}") from None


async def get(live: LivePlay, game_id: int, viewer: Viewer) -> dict[str, Any]:
    """The game's analysis as far as it has got; `not_found` if the game cannot be seen or was
    never analysed."""
    await _game(live, game_id, viewer)
    async with live.db.session() as session:
        row = await stored.get(session, game_id)
        if row is None:
            raise PlayError(Code.NOT_FOUND, f"game {game_id} has not been analysed")
        ahead = None
        if row.status == stored.QUEUED:
            ahead = await stored.ahead_of(session, row.requested_at)
        return view(row, ahead)


async def plies_of(session: AsyncSession, game_id: int) -> list[dict[str, Any]] | None:
    """A game's analysed plies, if its analysis is done (for the PDN export)."""
    row = await stored.get(session, game_id)
    return row.plies if row is not None and row.status == stored.DONE else None


async def request(live: LivePlay, asker: Asker, game_id: int) -> tuple[dict[str, Any], bool]:
    """Ask for a game's analysis: (its view, whether it was queued now). A game analysed, or
    being analysed, is simply shown; one that failed is queued again."""
    viewer = Viewer(asker.user_id, asker.admin)
    game = await _game(live, game_id, viewer)
    if game.status == GameStatus.PLAYING:
        raise PlayError(Code.CONFLICT, f"game {game_id} is still being played")
    if not game.moves:
        raise PlayError(Code.CONFLICT, f"game {game_id} has no move to analyse")
    settings = live.settings
    now = live.clock.now()
    async with live.db.session() as session:
        row = await stored.get(session, game_id)
        if row is not None and row.status != stored.FAILED:
            return view(row), False
        if await stored.waiting_of(session, asker.user_id) and not asker.admin:
            raise PlayError(Code.RATE_LIMITED, "one analysis at a time: wait for yours to finish")
        counted = [
            (
                limits.key("analysis", str(asker.user_id)),
                limits.Bucket(settings.analyses_per_day, DAY_S),
            ),
            (
                limits.key("analysis-address", asker.address),
                limits.Bucket(settings.analyses_per_address_per_day, DAY_S),
            ),
        ]
        wait = None if asker.admin else await limits.take_all(session, counted, now)
        if wait is not None:
            await session.rollback()
            raise PlayError(Code.RATE_LIMITED, "the day's analyses are used up", retry_after=wait)
        if row is None:
            row = await stored.add(
                session, game_id, asker.user_id, settings.analysis_nodes, len(game.moves) + 1, now
            )
        else:  # failed before: again
            row.status, row.requested_by, row.requested_at = stored.QUEUED, asker.user_id, now
            row.done, row.error, row.nodes = 0, None, settings.analysis_nodes
        await session.commit()
        ahead = await stored.ahead_of(session, row.requested_at)
        return view(row, ahead), True


# --- the runner ----------------------------------------------------------------------------


def analysis_process(parent: int) -> None:
    """An analysis process starts: in Linux's idle scheduling class (the CPU only when nothing
    else wants it; the lowest niceness elsewhere), and exiting once its server process is gone."""
    try:
        os.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0))
    except (AttributeError, OSError):
        with contextlib.suppress(OSError, AttributeError):
            os.nice(19)

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(1.0)
        os._exit(0)

    threading.Thread(target=watch, name="parent-watch", daemon=True).start()


class AnalysisRunner:
    """Takes analyses from the queue and makes them, one at a time per worker process."""

    def __init__(self, live: LivePlay, workers: int) -> None:
        self.live = live
        self.workers = workers
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

    def _processes(self) -> Executor:
        if self.pool is None:
            self.pool = ProcessPoolExecutor(
                self.workers,
                mp_context=multiprocessing.get_context("spawn"),
                initializer=analysis_process,
                initargs=(os.getpid(),),
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
