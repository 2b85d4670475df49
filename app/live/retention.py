"""Pruning the live log: the events of a table closed longer than `table_log_retention_days`
ago are deleted (its games' moves stay in the archive), so that `table_events` holds the
tables in use and the recent past rather than every event ever. The same loop runs the other
subsystems' prunings it is given (the inbox's: `app.notify.inbox.prune`).

Every process runs the pruning every `PRUNE_SECONDS`, a batch of tables per transaction; the
batches skip tables another process holds, so processes share the work and never wait.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from datetime import timedelta

from app.live import log_store as table_log
from app.live.liveplay import LivePlay

logger = logging.getLogger(__name__)

PRUNE_SECONDS = 60.0  # between two prunings of a process
MAX_BATCHES = 20  # per pruning: a backlog is worked off over several, the database shared


async def prune_log(live: LivePlay, max_batches: int = MAX_BATCHES) -> int:
    """Prune the logs of the tables closed over the retention period ago, batch by batch until
    none is left (or `max_batches`); how many tables. Nothing with a retention of 0 (keep)."""
    days = live.settings.table_log_retention_days
    if days <= 0:
        return 0
    before = live.clock.now() - timedelta(days=days)
    pruned = 0
    for _ in range(max_batches):
        async with live.db.session() as session:
            done = await table_log.prune(session, before)
            await session.commit()
        pruned += done
        if done < table_log.PRUNE_TABLES:
            break
    return pruned


async def run(live: LivePlay, *others: Callable[[LivePlay], Awaitable[int]]) -> None:
    """Run `prune_log`, then each of `others`, every `PRUNE_SECONDS`, whatever fails (they are
    tried again)."""
    while True:
        await live.clock.sleep(PRUNE_SECONDS)
        try:
            pruned = await prune_log(live)
            if pruned:
                logger.info("pruned the logs of %d closed tables", pruned)
            for prune in others:
                await prune(live)
        except asyncio.CancelledError:
            raise
        except Exception:
            logger.warning("pruning the table logs failed; retrying", exc_info=True)
