"""A tournament's games, started by the director: a table of their own with both players seated,
the game naming its tournament, round, ballot opening and game of the match, its PDN tags
(`Event`, `Round`, `Opening`); and a tournament's end."""

from __future__ import annotations

from datetime import datetime

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
