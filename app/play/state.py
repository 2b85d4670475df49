"""What a stored game's row says beyond its columns: whose turn it is, the clocks, the draw
offer that stands and who is away. Pure functions of the row."""

from __future__ import annotations

import functools
from datetime import datetime
from typing import Protocol

from app.db.models import Game as GameRow
from app.play.clocks import GameClock, per_move_ms
from app.rules import Color, get_variant
from app.timeutil import as_unix

# No clock runs before this many plies: each side's first move is timed by the first-move
# deadline (`first_move_seconds`) instead.
CLOCKS_FROM_PLY = 2


def clocks_run(ply: int) -> bool:
    """Whether the clock of the side to move runs after `ply` plies."""
    return ply >= CLOCKS_FROM_PLY


def first_move_deadline(row: GameRow) -> float | None:
    """When (Unix seconds) the side to move must have made its first move; None once both
    sides have moved (the row's `deadline_at` is then the clock's)."""
    if clocks_run(row.ply_count) or row.deadline_at is None:
        return None
    return as_unix(row.deadline_at)


@functools.lru_cache(maxsize=1024)
def first_turn(variant: str, start_fen: str | None) -> Color:
    """The side that moves first from a start position (None: the standard one)."""
    turn: Color = get_variant(variant).position(start_fen).turn
    return turn


def turn_of(row: GameRow) -> Color:
    """The side to move in a stored game."""
    first = first_turn(row.variant, row.start_fen)
    return first if row.ply_count % 2 == 0 else first.other


class ClockColumns(Protocol):
    """The columns a game's clocks are stored in (a `Game` row, or a row of just those)."""

    clock_base_s: int | None
    clock_increment_s: int
    black_clock_ms: int | None
    white_clock_ms: int | None
    last_move_at: datetime | None
    started_at: datetime
    black_berserk: bool
    white_berserk: bool


def stored_clock(row: ClockColumns) -> GameClock | None:
    """The clocks as stored with a game (None when untimed), the side to move's running since
    its last move (or the start), as moved later by `recover` after downtime."""
    if row.clock_base_s is None:
        return None
    base_ms = row.clock_base_s * 1000
    return GameClock(
        increment_ms=row.clock_increment_s * 1000,
        black_ms=base_ms if row.black_clock_ms is None else row.black_clock_ms,
        white_ms=base_ms if row.white_clock_ms is None else row.white_clock_ms,
        turn_started=as_unix(row.last_move_at or row.started_at),
        black_berserk=row.black_berserk,
        white_berserk=row.white_berserk,
        per_move_ms=per_move_ms(row.clock_base_s),
    )


def offer_ply(row: GameRow, colour: Color) -> int | None:
    """The ply at which `colour` last offered a draw."""
    return row.black_offer_ply if colour is Color.BLACK else row.white_offer_ply


def standing_offer(row: GameRow) -> Color | None:
    """The draw offer that stands: made at this ply, or made by the side to move then, who has
    moved since (a move answering an offer declines it; offering then moving does not)."""
    if row.draw_offer is None:
        return None
    by = Color(row.draw_offer)
    at = offer_ply(row, by)
    if at is None:
        return None
    if row.ply_count == at:
        return by
    first = first_turn(row.variant, row.start_fen)
    to_move_then = first if at % 2 == 0 else first.other
    return by if row.ply_count == at + 1 and to_move_then is by else None


def standing_takeback(row: GameRow) -> Color | None:
    """The takeback request that stands: made at the game's current ply (a move answers it)."""
    if row.takeback_by is None or row.takeback_ply != row.ply_count:
        return None
    return Color(row.takeback_by)


def away_of(row: GameRow) -> dict[Color, float]:
    """Since when (Unix seconds) each absent player has had no connection."""
    away = {}
    if row.black_away_since is not None:
        away[Color.BLACK] = as_unix(row.black_away_since)
    if row.white_away_since is not None:
        away[Color.WHITE] = as_unix(row.white_away_since)
    return away
