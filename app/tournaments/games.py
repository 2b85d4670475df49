"""A tournament's games, started by the director: a table of their own with both players seated,
the game naming its tournament, round, ballot opening and game of the match, its PDN tags
(`Event`, `Round`, `Opening`); and a tournament's end."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Generic, TypeVar

from sqlalchemy.ext.asyncio import AsyncSession

from app.db.models import Tournament
from app.live.liveplay import LivePlay
from app.live.log_store import StoredEvent
from app.play.players import LiveGame, PlayerRef, TableInfo
from app.tables import seating
from app.tournaments import ballot
from app.tournaments import store as stored

Started = list[tuple[TableInfo, LiveGame, list[StoredEvent]]]
"""The games a step started, announced (`seating.started`) once its transaction commits."""
T = TypeVar("T")


@dataclass(frozen=True)
class Pairing(Generic[T]):
    """A pairing that a step leaves to be computed outside its transaction, in a thread: a
    round of 1,000 players takes up to a second or two of CPU, for which neither the event loop
    (every game's moves) nor the tournament's row (joins, withdrawals) should wait. `start`
    then runs in a transaction of its own, the row locked again: it checks that the tournament
    is still as it was read (if not it changes nothing, and a later step pairs again), starts
    the games and says whether anything changed."""

    compute: Callable[[], T]
    start: Callable[[LivePlay, AsyncSession, Tournament, T, datetime, Started], Awaitable[bool]]


def finish(row: Tournament, now: datetime) -> bool:
    row.status, row.finished_at = stored.FINISHED, now
    return True


async def start_game(
    live: LivePlay,
    session: AsyncSession,
    row: Tournament,
    black: PlayerRef,
    white: PlayerRef,
    started: Started,
    *,
    round_no: int | None = None,
    opening: ballot.Opening | None = None,
    match_game: int | None = None,
) -> None:
    start_fen = opening.fen if opening is not None and opening.moves else None
    tags = {"Event": row.name, "Round": "-" if round_no is None else str(round_no)}
    if match_game is not None:
        tags["Round"] += f".{match_game}"
    if opening is not None and opening.moves:
        tags["Opening"] = opening.name
    started.append(
        await seating.seat_two(
            live,
            session,
            black,
            white,
            variant=row.variant,
            clock_base_s=row.clock_base_s,
            clock_increment_s=row.clock_increment_s,
            # A ballot's opening is how such events start: its games are rated as any.
            rated=row.rated,
            start_fen=start_fen,
            tournament={
                "tournament_id": row.id,
                "tournament_round": round_no,
                "opening": " ".join(opening.moves) if opening is not None else None,
                "match_game": match_game,
                "tags": tags,
            },
        )
    )
