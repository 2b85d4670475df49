"""Game analyses: one per game, asked for once, made once, served to everyone after
(`app.analysis.service`)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, DateTime, Float, ForeignKey, Index, Integer, String, text
from sqlalchemy.orm import Mapped, mapped_column

from app.db.models.base import Base, BigId
from app.timeutil import utcnow


class GameAnalysis(Base):
    """A game's analysis: queued, running (on the process holding its lease), done or failed;
    once done, each ply's evaluation, best move, line and label, and the players' accuracy."""

    __tablename__ = "game_analyses"

    game_id: Mapped[int] = mapped_column(BigId, ForeignKey("games.id"), primary_key=True)
    status: Mapped[str] = mapped_column(String(8))  # queued|running|done|failed
    requested_by: Mapped[int | None] = mapped_column(ForeignKey("users.id"), index=True)
    requested_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    nodes: Mapped[int] = mapped_column(Integer)  # the budget: nodes a position
    done: Mapped[int] = mapped_column(Integer, default=0, server_default=text("0"))
    total: Mapped[int] = mapped_column(Integer)  # positions to search: plies + 1
    # While running: the process at work on it and until when that holds; a lease run out (a
    # process that died) puts the analysis back in the queue.
    worker: Mapped[str | None] = mapped_column(String(64))
    lease_until: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    started_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    finished_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    # The start position's value, then each ply's report (`app.analysis.service.ply_payload`).
    start: Mapped[dict[str, Any] | None] = mapped_column(JSON)
    plies: Mapped[list[dict[str, Any]] | None] = mapped_column(JSON)
    accuracy_black: Mapped[float | None] = mapped_column(Float)
    accuracy_white: Mapped[float | None] = mapped_column(Float)
    error: Mapped[str | None] = mapped_column(String(200))

    __table_args__ = (
        # What the workers look at: the analyses waiting, oldest first.
        Index(
            "ix_game_analyses_waiting",
            "requested_at",
            postgresql_where=text("status IN ('queued', 'running')"),
            sqlite_where=text("status IN ('queued', 'running')"),
        ),
    )
