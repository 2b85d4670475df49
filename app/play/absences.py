"""A player's absences from their games in progress: noted when they have no connection to any
server process, ended when they connect again; each with its table event, in the caller's
transaction (see `app.tables.presence`, which decides when)."""

from __future__ import annotations

from datetime import datetime

from app.live import events
from app.live.liveplay import LivePlay
from app.live.log_store import Executor, StoredEvent
from app.play import store as stored_games
from app.rules import Color
from app.timeutil import as_datetime


async def _mark(
    live: LivePlay, db: Executor, user_id: int, since: float | None
) -> list[StoredEvent]:
    """Set (`since`) or clear (None) the user's absence in each of their games in progress
    where it is not so already, with a `player_away` / `player_back` event each."""
    rows = await stored_games.absences(db, user_id)
    stored: list[StoredEvent] = []
    now = live.clock.time()
    for game_id, table_id, black_id, black_away, white_away in rows:
        assert table_id is not None  # as the query asked
        colour = Color.BLACK if black_id == user_id else Color.WHITE
        away: datetime | None = black_away if colour is Color.BLACK else white_away
        if (away is None) == (since is None):
            continue
        value = as_datetime(since) if since is not None else None
        await stored_games.set_away(db, game_id, colour is Color.BLACK, value)
        event = (
            events.player_away(
                table_id, game_id, colour.value, since, live.settings.disconnect_grace_seconds
            )
            if since is not None
            else events.player_back(table_id, game_id, colour.value)
        )
        stored += await live.record(db, table_id, [event], as_datetime(now))
    return stored


async def mark_away(live: LivePlay, db: Executor, user_id: int, since: float) -> list[StoredEvent]:
    """In the caller's transaction: the user has no connection since `since`; their games in
    progress note it (the opponent may claim after the grace period)."""
    return await _mark(live, db, user_id, since)


async def mark_back(live: LivePlay, db: Executor, user_id: int) -> list[StoredEvent]:
    """In the caller's transaction: the user is connected again; their absences end."""
    return await _mark(live, db, user_id, None)
