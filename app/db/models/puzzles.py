"""Puzzles (`app.puzzles.service`): the positions, each with its solution and its own
Glicko-2 rating; each player's puzzle rating; and each player's first try at each puzzle, the
one that counts."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import JSON, Boolean, DateTime, Float, ForeignKey, Index, Integer, String, text
from sqlalchemy.orm import Mapped, mapped_column

from app.db.models.base import Base, BigId
from app.timeutil import utcnow


class Puzzle(Base):
    """A position, the solver to move, and its one good line (`moves`: the solver's moves and
    the replies in turn)."""

    __tablename__ = "puzzles"

    id: Mapped[int] = mapped_column(BigId, primary_key=True)
    key: Mapped[str] = mapped_column(String(16), unique=True)  # `app.puzzles.Puzzle.key`
    variant: Mapped[str] = mapped_column(String(16))
    fen: Mapped[str] = mapped_column(String(200))
    before_fen: Mapped[str | None] = mapped_column(String(200))  # before the opponent's move
    last_move: Mapped[str | None] = mapped_column(String(80))
    moves: Mapped[list[str]] = mapped_column(JSON)
    # Space-separated and space-framed (" shot win "): a theme is found with LIKE.
    themes: Mapped[str] = mapped_column(String(200))
    source: Mapped[str] = mapped_column(String(200))
    rating: Mapped[float] = mapped_column(Float)
    rd: Mapped[float] = mapped_column(Float)
    volatility: Mapped[float] = mapped_column(Float)
    plays: Mapped[int] = mapped_column(Integer, default=0, server_default=text("0"))
    wins: Mapped[int] = mapped_column(Integer, default=0, server_default=text("0"))

    __table_args__ = (
        # The next puzzle: one of a variant near a rating.
        Index("ix_puzzles_variant_rating", "variant", "rating"),
    )


class PuzzlePlayer(Base):
    """A player's puzzle rating (one for both variants, as lichess has one)."""

    __tablename__ = "puzzle_players"

    user_id: Mapped[int] = mapped_column(ForeignKey("users.id"), primary_key=True)
    rating: Mapped[float] = mapped_column(Float)
    rd: Mapped[float] = mapped_column(Float)
    volatility: Mapped[float] = mapped_column(Float)
    played: Mapped[int] = mapped_column(Integer, default=0)
    solved: Mapped[int] = mapped_column(Integer, default=0)
    last_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))


class PuzzleRound(Base):
    """A player's first try at a puzzle: solved or not, and what it did to their rating."""

    __tablename__ = "puzzle_rounds"

    user_id: Mapped[int] = mapped_column(ForeignKey("users.id"), primary_key=True)
    puzzle_id: Mapped[int] = mapped_column(BigId, ForeignKey("puzzles.id"), primary_key=True)
    solved: Mapped[bool] = mapped_column(Boolean)
    at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    rating_after: Mapped[int] = mapped_column(Integer)
    rating_diff: Mapped[int] = mapped_column(Integer)

    __table_args__ = (Index("ix_puzzle_rounds_user_at", "user_id", "at"),)
