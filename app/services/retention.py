"""Pruning the live log: the events of a table closed longer than `table_log_retention_days`
ago are deleted (its games' moves stay in the archive), so that `table_events` holds the
tables in use and the recent past rather than every event ever. Notices are kept
`NOTICE_DAYS` in the inbox and sent mail `SENT_MAIL_DAYS` in the outbox.

Every process runs the pruning every `PRUNE_SECONDS`, a batch of tables per transaction; the
batches skip tables another process holds, so processes share the work and never wait.
"""

from __future__ import annotations

import asyncio
import logging
from datetime import timedelta

from app.db import notifications as stored_notices
from app.db import table_log
from app.services.live import LivePlay

logger = logging.getLogger(__name__)

PRUNE_SECONDS = 60.0  # between two prunings of a process
MAX_BATCHES = 20  # per pruning: a backlog is worked off over several, the database shared
# Notices are kept this long in the inbox, and sent mail in the outbox (`app.services.mailer`).
NOTICE_DAYS = timedelta(days=90)
SENT_MAIL_DAYS = timedelta(days=7)
PRUNE_ROWS = 1000  # per batch


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


async def prune_notices(live: LivePlay, max_batches: int = MAX_BATCHES) -> int:
    """Delete the notices older than `NOTICE_DAYS` and the mail sent over `SENT_MAIL_DAYS` ago,
    batch by batch; how many rows."""
    now = live.clock.now()
    notices_before, mail_before = now - NOTICE_DAYS, now - SENT_MAIL_DAYS
    pruned = 0
    for _ in range(max_batches):
        async with live.db.session() as session:
            done = await stored_notices.prune(session, notices_before, mail_before, PRUNE_ROWS)
            await session.commit()
        pruned += done
        if done < PRUNE_ROWS:
            break
    return pruned


async def run(live: LivePlay) -> None:
    """Run `prune_log` and `prune_notices` every `PRUNE_SECONDS`, whatever fails (they are
    tried again)."""
    while True:
        await live.clock.sleep(PRUNE_SECONDS)
        try:
            pruned = await prune_log(live)
            if pruned:
                logger.info("pruned the logs of %d closed tables", pruned)
            await prune_notices(live)
        except asyncio.CancelledError:
            raise
        except Exception:
            logger.warning("pruning the table logs failed; retrying", exc_info=True)
