"""The live-play lifespan part: recover the games in progress, beat, serve the hub and run the
sweeps until shutdown."""

from __future__ import annotations

import asyncio
import contextlib
import functools
import gc
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from fastapi import FastAPI

from app.analysis.board import Board
from app.analysis.runner import AnalysisRunner
from app.clock import Clock
from app.correspondence import service as correspondence
from app.lifespan import lifespan_part
from app.live import retention
from app.live.heartbeat import Heartbeat
from app.live.liveplay import LivePlay
from app.matchmaking import pools as pairing
from app.notify import inbox, mailer
from app.play import recovery
from app.puzzles import service as puzzles
from app.puzzles import shipped as shipped_puzzles
from app.realtime import budgets
from app.realtime.hub import Hub
from app.tables import presence
from app.tournaments import director as tournament_director

logger = logging.getLogger(__name__)

GC_YOUNG_THRESHOLD = 10_000  # allocations before the youngest generation is collected


@lifespan_part(needs=["settings", "db", "broker"], provides=["live", "hub", "beats", "budgets"])
@asynccontextmanager
async def run_live_play(app: FastAPI) -> AsyncIterator[None]:
    """Lifespan part: recover the games in progress, then beat and serve the hub until shutdown."""
    # `create_app` gives the clock; an app assembled from parts runs on real time.
    clock = getattr(app.state, "clock", None) or Clock()
    live = LivePlay(app.state.db, app.state.broker, app.state.settings, clock)
    await live.start()
    hub = Hub(live, app.state.settings.sweep_seconds)
    await hub.start()

    beats = app.state.beats = Heartbeat(
        app.state.db,
        app.state.settings.heartbeat_seconds,
        load=live.load,
        clock=live.clock,
        # Others may have taken this process for gone while its lock was lost.
        on_regained=functools.partial(presence.reassert, live),
    )
    await beats.hold()
    try:
        recovered = await recovery.recover(live, beats.instance, alone=beats.alone)
    except BaseException:
        await beats.release()
        raise
    live.serve_as(beats.instance)
    beats.start()
    if recovered:
        logger.info("recovered %d games in progress", recovered)
    app.state.live, app.state.hub = live, hub
    app.state.budgets = budgets.AddressBudgets(app.state.settings.ws_messages_per_second_per_ip)
    added = await puzzles.load(live.db, shipped_puzzles())
    if added:
        logger.info("stored %d puzzles shipped with this version", added)
    sweeper = asyncio.create_task(_sweep(live), name="live-sweep")
    pairer = asyncio.create_task(pairing.run(live), name="pairing")
    pruner = asyncio.create_task(retention.run(live, inbox.prune), name="log-pruning")
    director = asyncio.create_task(tournament_director.run(live), name="tournaments")
    alarms = asyncio.create_task(correspondence.run(live), name="correspondence")
    tasks = [sweeper, pairer, pruner, director, alarms]
    if live.settings.mail_enabled:
        tasks.append(asyncio.create_task(mailer.run(live), name="mail"))
    analyses = app.state.analyses = AnalysisRunner(
        live, app.state.settings.analysis_workers, idle=app.state.settings.analysis_idle
    )
    analyses.start()
    board = app.state.board = Board(analyses, app.state.settings)
    # What start-up built (modules, schema, caches) lives as long as the server: keep it out of
    # the garbage collector's full passes, whose pauses delay every move in flight (measured in
    # docs/benchmarks.md). Given back on shutdown so that a stopped app can be collected.
    gc.freeze()
    # Moves allocate many short-lived objects, nearly all freed by reference counting: with the
    # default threshold (700) the young generation was collected some 50 times a second under
    # load and a full pass followed every two or three seconds (4-5% of the server's time, see
    # docs/benchmarks.md). Collect less often.
    thresholds = gc.get_threshold()
    gc.set_threshold(GC_YOUNG_THRESHOLD, *thresholds[1:])
    try:
        yield
    finally:
        gc.set_threshold(*thresholds)
        gc.unfreeze()
        for task in tasks:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
        await analyses.stop()
        board.stop()
        try:
            # Users connected here stay present until the others' sweep (or this server's
            # next start) finds this process stopped: those who come back elsewhere within
            # `presence.SWITCH_SECONDS` are never away.
            await hub.stop()
            await live.stop()
        finally:
            await beats.stop()


async def _sweep(live: LivePlay) -> None:
    """Run `presence.sweep` every `sweep_seconds`, and make sure this process's users are
    noted as connected every `heartbeat_seconds`, whatever fails (it is tried again)."""
    reasserted = live.clock.monotonic()
    while True:
        await live.clock.sleep(live.settings.sweep_seconds)
        try:
            if live.clock.monotonic() - reasserted >= live.settings.heartbeat_seconds:
                reasserted = live.clock.monotonic()
                await presence.reassert(live)
            await presence.sweep(live)
        except asyncio.CancelledError:
            raise
        except Exception:
            logger.warning("the live-play sweep failed; retrying", exc_info=True)
