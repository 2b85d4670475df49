"""Correspondence games (days per move) beyond their clock: the notices that reach players who
are away, each written in the transaction of what it tells (`app.notify.inbox`).

- A game's start tells both players (`game_started`), each move the player now to move
  (`your_move`, mailed to those who asked), the end both (`game_ended`).
- When 80 % of a move's time is used without a move, the player to move is told once for that
  move (`time_alarm`, mailed as well: lichess's alarm): the sweep (`alarm_due`, every
  `SWEEP_SECONDS`) marks the game's `alarm_ply` in the transaction that writes the notice, on
  the condition that the game is still at that move.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from app.correspondence import store as stored
from app.db.models import Game as GameRow
from app.live.liveplay import LivePlay
from app.notify import inbox as notifications
from app.play.clocks import DAY_S, days_of, is_correspondence
from app.play.players import LiveGame
from app.play.state import clocks_run, first_turn
from app.rules import Color
from app.timeutil import as_unix

logger = logging.getLogger(__name__)

ALARM_SHARE = 0.8  # of a move's time, used without a move: the alarm
SWEEP_SECONDS = 30.0


async def started(live: LivePlay, session: AsyncSession, lg: LiveGame) -> None:
    """Tell both players of a correspondence game that it has started (in the transaction that
    stores it)."""
    if lg.clock is None or lg.clock.per_move_ms == 0:
        return
    days = lg.clock.per_move_ms // (DAY_S * 1000)
    for colour, player, opponent in (
        (Color.BLACK, lg.black, lg.white),
        (Color.WHITE, lg.white, lg.black),
    ):
        if live.is_ai(player.id):
            continue
        data = {
            "game": lg.id,
            "table": lg.table_id,
            "opponent": opponent.name,
            "colour": colour.value,
            "days": days,
        }
        await notifications.add(live, session, player.id, "game_started", data)


async def moved(
    live: LivePlay, session: AsyncSession, row: GameRow, ply: int, table_id: int
) -> None:
    """Tell the player now to move in a correspondence game (`ply` plies played) that it is
    their move, in the transaction that stores the move."""
    mover, other = _to_move(row.variant, row.start_fen, ply, row.black_id, row.white_id)
    if mover is None or other is None or live.is_ai(mover):
        return
    found = await stored.names(session, [other])
    data = {
        "game": row.id,
        "table": table_id,
        "opponent": found.get(other, "your opponent"),
        "ply": ply,
        "days": days_of(row.clock_base_s),
    }
    await notifications.add(live, session, mover, "your_move", data)


async def ended(
    live: LivePlay,
    session: AsyncSession,
    row: GameRow,
    result: str,
    termination: str,
    table_id: int | None,
) -> None:
    """Tell both players that their correspondence game has ended (in its transaction)."""
    if not is_correspondence(row.clock_base_s) or row.black_id is None or row.white_id is None:
        return
    found = await stored.names(session, [row.black_id, row.white_id])
    for player, opponent in ((row.black_id, row.white_id), (row.white_id, row.black_id)):
        if live.is_ai(player):
            continue
        data: dict[str, Any] = {
            "game": row.id,
            "table": table_id,
            "opponent": found.get(opponent, "your opponent"),
            "result": result,
            "termination": termination,
        }
        await notifications.add(live, session, player, "game_ended", data)


def _to_move(
    variant: str, start_fen: str | None, ply: int, black: int | None, white: int | None
) -> tuple[int | None, int | None]:
    """The player to move after `ply` plies, and the other."""
    turn = first_turn(variant, start_fen)
    if ply % 2:
        turn = turn.other
    return (black, white) if turn is Color.BLACK else (white, black)


async def alarm_due(live: LivePlay) -> int:
    """Give the time alarm of every correspondence move 80 % used; how many were given."""
    now = live.clock.now()
    async with live.db.session() as session:
        rows = await stored.alarm_candidates(session)
    given = 0
    for game_id, table_id, black_id, white_id, variant, fen, ply, deadline, base in rows:
        if deadline is None or base is None:
            continue
        allowance = base if clocks_run(ply) else DAY_S
        due = as_unix(deadline)
        if not due - (1 - ALARM_SHARE) * allowance <= as_unix(now) < due:
            continue
        mover, other = _to_move(variant, fen, ply, black_id, white_id)
        async with live.db.session() as session:
            if not await stored.mark_alarm(session, game_id, ply):
                continue  # moved meanwhile, or given by another process
            if mover is not None and not live.is_ai(mover):
                found = await stored.names(session, [other] if other is not None else [])
                data = {
                    "game": game_id,
                    "table": table_id,
                    "opponent": found.get(other or 0, "your opponent"),
                    "ply": ply,
                    "deadline": int(due * 1000),
                }
                await notifications.add(live, session, mover, "time_alarm", data)
            await session.commit()
        given += 1
    return given


async def run(live: LivePlay) -> None:
    """`alarm_due` every `SWEEP_SECONDS`, whatever fails (it is tried again)."""
    while True:
        await live.clock.sleep(SWEEP_SECONDS)
        try:
            await alarm_due(live)
        except asyncio.CancelledError:
            raise
        except Exception:
            logger.warning("the correspondence alarm sweep failed; retrying", exc_info=True)
