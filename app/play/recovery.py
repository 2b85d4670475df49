"""Taking back the games in progress when a server process starts."""

from __future__ import annotations

import logging

from app.live import heartbeat
from app.live.liveplay import LivePlay, PlayError
from app.play import cache as game_cache
from app.play import store as stored_games
from app.rules import RulesError
from app.timeutil import as_datetime, as_unix

logger = logging.getLogger(__name__)


async def recover(live: LivePlay, instance: str, *, alone: bool = False) -> int:
    """Take back every game in progress at start-up; clocks do not run while no server is up.

    `instance` is this process's heartbeat id: its first beat is written here, in the same
    transaction, so processes starting together take turns. `alone` says no other process is up
    (known on SQLite from a file lock). Then, from the other processes' beats (see
    `heartbeat`):

    - one beat recently: the cluster kept running (a rolling restart, a process joining): the
      games are loaded as stored, their running turns keep running;
    - otherwise every server was down since the newest beat: each game in progress has the start
      of its running turn (`last_move_at`, or `started_at` before the first move) and its
      deadline moved later by the downtime, never past now. The time the side to move spent
      before the crash stays charged (give or take one heartbeat interval), the downtime is not;
    - no beat at all (a new database): the running turns start again now.
    """
    now = live.clock.now()
    async with live.db.engine.begin() as conn:
        await heartbeat.lock(conn)
        await heartbeat.write(conn, instance, now)
        others = await heartbeat.others(
            conn, instance, now, live.settings.heartbeat_seconds, alone=alone
        )
        rows = await stored_games.in_progress_turns(conn)
        game_ids = [row.id for row in rows]
        if rows and not others.running:
            turns = []
            for row in rows:
                began = as_unix(row.last_move_at or row.started_at)
                if others.last_alive is None:
                    moved = as_unix(now)
                else:
                    downtime = max(0.0, as_unix(now) - as_unix(others.last_alive))
                    moved = min(as_unix(now), began + downtime)
                deadline = row.deadline_at
                if deadline is not None:
                    deadline = as_datetime(as_unix(deadline) + moved - began)
                turns.append(
                    {"game": row.id, "turn_started": as_datetime(moved), "deadline": deadline}
                )
            await stored_games.move_turns(conn, turns)
    for game_id in game_ids:
        try:
            await game_cache.load(live, game_id)
        except (PlayError, RulesError):
            logger.exception("cannot recover game %d", game_id)
    return len(game_ids)
