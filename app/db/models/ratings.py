"""Ratings, their changes per game, and the moderators' review queue."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import (
    Boolean,
    DateTime,
    Float,
    ForeignKey,
    Index,
    Integer,
    String,
    false,
    text,
)
from sqlalchemy.orm import Mapped, mapped_column

from app.db.models.base import Base, BigId
from app.timeutil import utcnow


class Rating(Base):
    """A player's Glicko-2 rating in one variant and time-control category, as it was after
    their last rated game there (`last_game_at`); the RD's growth since is worked out when read
    (`app.ratings.live_rd`). A player has no row until their first rated game there."""

    __tablename__ = "ratings"

    user_id: Mapped[int] = mapped_column(
        ForeignKey("users.id", ondelete="CASCADE"), primary_key=True
    )
    variant: Mapped[str] = mapped_column(String(16), primary_key=True)
    category: Mapped[str] = mapped_column(String(16), primary_key=True)
    rating: Mapped[float] = mapped_column(Float)
    rd: Mapped[float] = mapped_column(Float)
    volatility: Mapped[float] = mapped_column(Float)
    games: Mapped[int] = mapped_column(Integer, default=0)
    last_game_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))

    __table_args__ = (
        # The leaderboard: the best ratings of a category among those whose RD is low enough.
        # A live RD is never below the stored one, so this partial index holds every candidate.
        Index(
            "ix_ratings_leaderboard",
            "variant",
            "category",
            "rating",
            postgresql_where=text("rd <= 75"),
            sqlite_where=text("rd <= 75"),
        ),
    )


class RatingChange(Base):
    """What one rated game did to one player's rating, written in the transaction that stored
    the game's end. The primary key (game, player) makes a second update of the same game
    impossible; the rows are also the player's rating history."""

    __tablename__ = "rating_changes"

    game_id: Mapped[int] = mapped_column(
        ForeignKey("games.id", ondelete="CASCADE"), primary_key=True
    )
    user_id: Mapped[int] = mapped_column(
        ForeignKey("users.id", ondelete="CASCADE"), primary_key=True
    )
    variant: Mapped[str] = mapped_column(String(16))
    category: Mapped[str] = mapped_column(String(16))
    rating_before: Mapped[float] = mapped_column(Float)
    rd_before: Mapped[float] = mapped_column(Float)
    rating_after: Mapped[float] = mapped_column(Float)
    rd_after: Mapped[float] = mapped_column(Float)
    volatility_after: Mapped[float] = mapped_column(Float)
    at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    # The fair-play allowance (`app.ratings.fair_play`): whether what the game gained the player
    # was a linked gain, counted against their allowance of the day, and how many points of it
    # the allowance withheld (`rating_after` is what they kept).
    linked: Mapped[bool] = mapped_column(Boolean, default=False, server_default=false())
    withheld: Mapped[float] = mapped_column(Float, default=0.0, server_default=text("0"))

    __table_args__ = (Index("ix_rating_changes_user_at", "user_id", "at"),)


class RatingReview(Base):
    """An account whose rating rose sharply against few opponents, for a moderator to look at
    (`app.ratings.fair_play`); `resolved_at` once one did."""

    __tablename__ = "rating_reviews"

    id: Mapped[int] = mapped_column(BigId, primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    variant: Mapped[str] = mapped_column(String(16))
    category: Mapped[str] = mapped_column(String(16))
    reason: Mapped[str] = mapped_column(String(200))
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    resolved_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    resolved_by: Mapped[int | None] = mapped_column(ForeignKey("users.id", ondelete="SET NULL"))
