"""Notifications (`app.notify.inbox`): each player's inbox, the e-mail outbox its
worker sends from (`app.notify.mailer`), and the conditional moves stored for correspondence
games (`app.correspondence.conditional`)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, DateTime, ForeignKey, Index, Integer, String, Text, text
from sqlalchemy.orm import Mapped, mapped_column

from app.db.models.base import Base, BigId
from app.timeutil import utcnow


class Notification(Base):
    """A notice in a player's inbox (`kind`, with what it is about in `data`), written in the
    transaction of what caused it; `read_at` once read."""

    __tablename__ = "notifications"

    id: Mapped[int] = mapped_column(BigId, primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"))
    kind: Mapped[str] = mapped_column(String(24))
    data: Mapped[dict[str, Any]] = mapped_column(JSON)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    read_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))

    __table_args__ = (
        # A player's inbox, newest first, and its unread count.
        Index("ix_notifications_user_id", "user_id", "id"),
        Index(
            "ix_notifications_unread",
            "user_id",
            postgresql_where=text("read_at IS NULL"),
            sqlite_where=text("read_at IS NULL"),
        ),
    )


class OutboxMail(Base):
    """An e-mail to send, written in the transaction of what caused it; the worker leases it
    (`lease_until`) while it sends, marks it `sent_at` once the SMTP server has taken it, and
    otherwise tries again at `next_try_at`, or gives it up (`failed_at`: a mail that cannot be
    sent, or tried `MAIL_MAX_ATTEMPTS` times). `key` makes a mail once-only (one time alarm per
    game and move)."""

    __tablename__ = "email_outbox"

    id: Mapped[int] = mapped_column(BigId, primary_key=True)
    key: Mapped[str] = mapped_column(String(120), unique=True)
    user_id: Mapped[int | None] = mapped_column(ForeignKey("users.id", ondelete="SET NULL"))
    to_address: Mapped[str] = mapped_column(String(254))
    kind: Mapped[str] = mapped_column(String(24))
    subject: Mapped[str] = mapped_column(String(200))
    body: Mapped[str] = mapped_column(Text)
    unsubscribe: Mapped[str | None] = mapped_column(String(500))  # the one-click link
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    next_try_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    lease_until: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    attempts: Mapped[int] = mapped_column(Integer, default=0, server_default=text("0"))
    last_error: Mapped[str | None] = mapped_column(String(300))
    sent_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    failed_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))

    __table_args__ = (
        # The mails still to send, soonest first.
        Index(
            "ix_email_outbox_due",
            "next_try_at",
            postgresql_where=text("sent_at IS NULL AND failed_at IS NULL"),
            sqlite_where=text("sent_at IS NULL AND failed_at IS NULL"),
        ),
    )


class ConditionalMoves(Base):
    """A player's conditional moves in a correspondence game: lines of the opponent's move and
    the reply, in turn (`lines`), from the ply of the opponent's next move (`ply`)."""

    __tablename__ = "conditional_moves"

    game_id: Mapped[int] = mapped_column(
        ForeignKey("games.id", ondelete="CASCADE"), primary_key=True
    )
    user_id: Mapped[int] = mapped_column(
        ForeignKey("users.id", ondelete="CASCADE"), primary_key=True
    )
    ply: Mapped[int] = mapped_column(Integer)
    lines: Mapped[list[list[str]]] = mapped_column(JSON)
    updated_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
