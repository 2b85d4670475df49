"""The time-out rule and the timers that apply it: a first move overdue aborts the game (a
tournament game: the side that did not move loses it), a running clock out of time loses it."""

from __future__ import annotations

import logging

from sqlalchemy.ext.asyncio import AsyncSession

from app.db.models import Game as GameRow
from app.live.liveplay import LivePlay
from app.play import endings
from app.play import store as stored_games
from app.play.clocks import GameClock
from app.play.players import LiveGame
from app.play.state import (
    clocks_run,
    first_move_deadline,
    stored_clock,
    turn_of,
)
from app.rules import Color, Outcome, Termination
from app.status import GameStatus
from app.tournaments import store as stored_tournaments

logger = logging.getLogger(__name__)


def expiry(
    ply: int, turn: Color, clock: GameClock | None, first_move_due: float | None, now: float
) -> Outcome | None:
    """How a game in progress at `ply`, `turn` to move, ends at `now` for lack of a move in
    time, if it does: aborted when a first move is overdue, lost on time when the running
    clock is out. The one time-out rule, for a cached game and a stored one alike."""
    if not clocks_run(ply):
        return (
            Outcome(Termination.ABORTED)
            if first_move_due is not None and now >= first_move_due
            else None
        )
    if clock is not None and clock.left(turn, turn, now) <= 0:
        return Outcome(Termination.TIMEOUT, turn.other)
    return None


def arm(live: LivePlay, lg: LiveGame) -> None:
    """(Re)start the timer that flags the side to move when its time runs out, or aborts the
    game when a first move is overdue."""
    if lg.timer is not None:
        lg.timer.cancel()
        lg.timer = None
    if lg.status != GameStatus.PLAYING:
        return
    if not clocks_run(lg.game.ply):
        due = lg.first_move_deadline
    else:
        due = lg.clock.deadline(lg.game.position.turn) if lg.clock is not None else None
    if due is None:
        return
    delay = max(0.0, due - live.clock.time())
    game_id = lg.id
    lg.timer = live.clock.call_later(delay, lambda: live.spawn(flag(live, game_id)))


def disarm(lg: LiveGame) -> None:
    """Stop watching a game's clock here (another server watches it)."""
    if lg.timer is not None:
        lg.timer.cancel()
        lg.timer = None


async def flag(live: LivePlay, game_id: int) -> bool:
    """Flag the side to move if its time has run out, or abort the game if a first move is
    overdue, as stored; True if this ended the game. A failed write is left to the next sweep
    (`flag_due`), which retries until it is stored."""
    async with live.game_lock(game_id):
        try:
            async with live.db.session() as session:
                row = await endings.locked_row(session, game_id)
                if row is None or row.status != GameStatus.PLAYING:
                    return False
                ending = expiry(
                    row.ply_count,
                    turn_of(row),
                    stored_clock(row),
                    first_move_deadline(row),
                    live.clock.time(),
                )
                if ending is None:
                    lg = live.games.get(game_id)
                    if lg is not None and lg.game.ply != row.ply_count:
                        live.drop(lg)  # another process moved: it watches the clock now
                    elif lg is not None:
                        arm(live, lg)
                    return False
                reason = None
                if ending.termination is Termination.ABORTED and row.tournament_id is not None:
                    ending, reason = await _no_start(session, row)
                stored = await endings.store_ending(
                    live,
                    session,
                    game_id,
                    ending.result(),
                    ending.termination,
                    row=row,
                    reason=reason,
                )
                assert stored is not None
                await session.commit()
        except Exception:
            logger.warning("cannot flag game %d yet; retrying", game_id, exc_info=True)
            return False
    await endings.after(live, game_id, stored)
    return True


async def _no_start(session: AsyncSession, row: GameRow) -> tuple[Outcome, str]:
    """A tournament game whose side to move did not make its first move in time is theirs to
    lose, not aborted, so that a no-show does not hold up a pairing for nothing (lila's "no
    start"); an arena pauses them, as leaving it would (they join again to play on)."""
    absent = turn_of(row)
    found = await stored_games.tournament_of(session, row.id)
    if found is not None and found.kind == "arena":
        user_id = row.black_id if absent is Color.BLACK else row.white_id
        if user_id is not None:
            await stored_tournaments.pause(session, found.id, user_id)
    reason = f"{absent.value.capitalize()} did not make a first move in time"
    return Outcome(Termination.TIMEOUT, absent.other), reason


async def flag_due(live: LivePlay) -> int:
    """Flag every game whose side to move has run out, and abort every game whose first move
    is overdue (the sweep behind the timers: a game whose process crashed, or whose flag could
    not be written)."""
    async with live.db.session() as session:
        due = await stored_games.due(session, live.clock.now())
    flagged = 0
    for game_id in due:
        flagged += await flag(live, game_id)
    return flagged
