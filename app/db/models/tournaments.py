"""Tournaments: the event, who plays in it, and the points not won at the board (byes, rounds
missed). Its games are ordinary games that name it (`games.tournament_id`)."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import Boolean, DateTime, ForeignKey, Index, Integer, String, func, text
from sqlalchemy.orm import Mapped, mapped_column

from app.db.models.base import Base, BigId
from app.timeutil import utcnow


class Tournament(Base):
    """An arena, a Swiss or a round robin: its settings and where it has got to. All of its
    state is here and in its players' and games' rows, so any process can carry it on."""

    __tablename__ = "tournaments"

    id: Mapped[int] = mapped_column(BigId, primary_key=True)
    kind: Mapped[str] = mapped_column(String(16))  # arena|swiss|round_robin
    name: Mapped[str] = mapped_column(String(80))
    variant: Mapped[str] = mapped_column(String(16))
    clock_base_s: Mapped[int] = mapped_column(Integer)
    clock_increment_s: Mapped[int] = mapped_column(Integer, default=0)
    rated: Mapped[bool] = mapped_column(Boolean, default=False)
    # gayp: each game from the start position; 3-move: a Swiss or round-robin round is a
    # two-game match on one opening drawn from the ballot deck, colours reversed.
    ballot: Mapped[str] = mapped_column(String(8), default="gayp")
    status: Mapped[str] = mapped_column(String(16), default="created")
    starts_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    minutes: Mapped[int | None] = mapped_column(Integer)  # an arena's length
    rounds: Mapped[int | None] = mapped_column(Integer)  # a Swiss's; a round robin's at start
    double: Mapped[bool] = mapped_column(Boolean, default=False)  # a double round robin
    max_players: Mapped[int | None] = mapped_column(Integer)
    # Draw offers are refused before this move (a Swiss's setting; 0: any time).
    draw_after_move: Mapped[int] = mapped_column(Integer, default=0, server_default=text("0"))
    # The round in progress (Swiss, round robin); 0 before the first.
    round: Mapped[int] = mapped_column(Integer, default=0, server_default=text("0"))
    # Recurring: another like it is scheduled this many minutes after this one starts.
    every_minutes: Mapped[int | None] = mapped_column(Integer)
    created_by: Mapped[int | None] = mapped_column(ForeignKey("users.id"))
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    started_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    finished_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    cancel_reason: Mapped[str | None] = mapped_column(String(200))  # as its canceller said
    # Its players were told it is about to start (once).
    reminded: Mapped[bool] = mapped_column(Boolean, default=False, server_default=text("false"))
    # When the director steps it next: its start, then a second later while it has something
    # to do, later while nothing can happen (a join brings it forward), after a back-off once
    # a step failed.
    next_step_at: Mapped[datetime] = mapped_column(
        DateTime(timezone=True), server_default=func.now()
    )
    # Its steps that failed in a row (it is cancelled after `director.MAX_FAILURES`).
    failures: Mapped[int] = mapped_column(Integer, default=0, server_default=text("0"))

    __table_args__ = (
        # What the director looks at every second: the tournaments not over that are due.
        Index(
            "ix_tournaments_due",
            "next_step_at",
            postgresql_where=text("status IN ('created', 'started')"),
            sqlite_where=text("status IN ('created', 'started')"),
        ),
        Index("ix_tournaments_status_starts", "status", "starts_at"),
    )


class TournamentPlayer(Base):
    """A player who joined a tournament; `active` until they withdraw (in an arena, a pause:
    they may come back)."""

    __tablename__ = "tournament_players"

    tournament_id: Mapped[int] = mapped_column(ForeignKey("tournaments.id"), primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id"), primary_key=True, index=True)
    joined_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    rating: Mapped[int] = mapped_column(Integer)  # at joining: what pairing orders by
    active: Mapped[bool] = mapped_column(Boolean, default=True)
    # An arena player waiting to be paired since then (None: playing, paused, or not started).
    waiting_since: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    # The arena's last opponent: not paired with them again at once.
    last_opponent_id: Mapped[int | None] = mapped_column(Integer)


class TournamentPoints(Base):
    """Points a player got in a round without a game: a bye, or a round missed by joining
    late. In half points."""

    __tablename__ = "tournament_points"

    tournament_id: Mapped[int] = mapped_column(ForeignKey("tournaments.id"), primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id"), primary_key=True)
    round: Mapped[int] = mapped_column(Integer, primary_key=True)
    half_points: Mapped[int] = mapped_column(Integer)
    reason: Mapped[str] = mapped_column(String(8))  # bye|late|absent
