"""Accounts and their tokens, addresses, presence and attendance; rate limits, heartbeats and
the audit log."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import (
    JSON,
    Boolean,
    DateTime,
    Float,
    ForeignKey,
    Index,
    Integer,
    String,
    Text,
    text,
    true,
)
from sqlalchemy.orm import Mapped, mapped_column

from app.db.models.base import Base, BigId
from app.status import UserKind
from app.timeutil import utcnow


class User(Base):
    """A player account: registered (with a password), guest, or a name from imported games."""

    __tablename__ = "users"

    id: Mapped[int] = mapped_column(BigId, primary_key=True)
    name: Mapped[str] = mapped_column(String(32), unique=True)
    password_hash: Mapped[str | None] = mapped_column(String(255))
    # registered|guest|imported|ai (the computer opponent, one per level: cannot log in)
    kind: Mapped[str] = mapped_column(String(16), default=UserKind.REGISTERED)
    role: Mapped[str] = mapped_column(String(16), default="player")  # player|admin
    banned: Mapped[bool] = mapped_column(Boolean, default=False)
    ban_reason: Mapped[str | None] = mapped_column(String(200))
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    last_seen_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    # Upgraded for the bot API (`app.bots.accounts`): plays through it, never in pools.
    is_bot: Mapped[bool] = mapped_column(Boolean, default=False, server_default=text("false"))
    # The account's takeback preference: off, no takeback is asked in its games, by it or of
    # it, and the tables it opens default to none (`app.play.takebacks`).
    takebacks: Mapped[bool] = mapped_column(Boolean, default=True, server_default=true())
    # E-mail (`app.notify.email_settings`): the confirmed address; one waiting for its
    # confirmation link (the token's SHA-256); the account's key of its unsubscribe links;
    # the kinds of notice it wants no mail of.
    email: Mapped[str | None] = mapped_column(String(254))
    email_pending: Mapped[str | None] = mapped_column(String(254))
    email_token_hash: Mapped[str | None] = mapped_column(String(64))
    email_key: Mapped[str | None] = mapped_column(String(64))
    email_off: Mapped[list[str]] = mapped_column(JSON, default=list, server_default=text("'[]'"))

    __table_args__ = (
        # Names are unique whatever their case: a name is looked up by its lower case when its
        # exact spelling is not found (every new guest's name, before it is taken).
        Index("ix_users_lower_name", text("lower(name)")),
        # The few accounts each periodic read looks for among all of them: the banned ones
        # (every process's sweep, against its connected users), the bots (the bot list) and
        # the computer's levels (read at start-up).
        Index(
            "ix_users_banned",
            "id",
            postgresql_where=text("banned IS true"),
            sqlite_where=text("banned IS 1"),
        ),
        Index(
            "ix_users_bots",
            "name",
            postgresql_where=text("is_bot IS true"),
            sqlite_where=text("is_bot IS 1"),
        ),
        Index(
            "ix_users_ai",
            "id",
            postgresql_where=text("kind = 'ai'"),
            sqlite_where=text("kind = 'ai'"),
        ),
    )


class AuthToken(Base):
    """A bearer token; only its SHA-256 is stored."""

    __tablename__ = "auth_tokens"

    id: Mapped[int] = mapped_column(BigId, primary_key=True)
    token_hash: Mapped[str] = mapped_column(String(64), unique=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    expires_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))


class RateLimit(Base):
    """One counter of `app.accounts.limits`: failed log-ins of an address, a name or a pair of
    both, or the accounts an address created. Kept in the database so that every server
    process counts the same attempts; deleted once `expires_at` has passed.
    """

    __tablename__ = "rate_limits"

    key: Mapped[str] = mapped_column(String(160), primary_key=True)  # e.g. "login-address:1.2.3.4"
    hits: Mapped[float] = mapped_column(Float, default=0.0)
    at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))  # of the latest hit
    # A (name, address) pair that logged in successfully: not delayed when the name is attacked.
    trusted_until: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    expires_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), index=True)


class ServerHeartbeat(Base):
    """A server process's latest sign of life, written every few seconds (one row per start).

    At start-up these tell a process joining a running cluster from one starting after downtime,
    and when that downtime began; see `app.live.heartbeat`. The admin status sums the load
    they carry.
    """

    __tablename__ = "server_heartbeats"

    instance: Mapped[str] = mapped_column(String(32), primary_key=True)  # random, per start
    beat_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    stopped: Mapped[bool] = mapped_column(Boolean, default=False)  # the beat of a clean shutdown
    # The process's load when it beat, summed over the live processes by the admin status.
    connections: Mapped[int] = mapped_column(Integer, default=0, server_default=text("0"))
    connected_users: Mapped[int] = mapped_column(Integer, default=0, server_default=text("0"))
    moves_last_minute: Mapped[int] = mapped_column(Integer, default=0, server_default=text("0"))


class AccountAddress(Base):
    """An address a registered account signed up, logged in or connected from, and when last
    (`app.ratings.fair_play`: rated games between accounts that shared an address recently
    are casual)."""

    __tablename__ = "account_addresses"

    user_id: Mapped[int] = mapped_column(
        ForeignKey("users.id", ondelete="CASCADE"), primary_key=True
    )
    address: Mapped[str] = mapped_column(String(64), primary_key=True)
    first_seen: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    last_seen: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)

    __table_args__ = (Index("ix_account_addresses_address", "address", "last_seen"),)


class Presence(Base):
    """A user connected to a server process (one row per process, however many sockets).

    A user with no row of a live process is offline; `users.last_seen_at` says since when.
    """

    __tablename__ = "presence"

    instance: Mapped[str] = mapped_column(String(32), primary_key=True)
    user_id: Mapped[int] = mapped_column(
        ForeignKey("users.id", ondelete="CASCADE"), primary_key=True, index=True
    )
    since: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


class Attendance(Base):
    """A seated player watching their table from a server process (one row per process and
    table, however many sockets): a seat without a game in progress is kept while a live
    process has its holder's row with `until` None. `until` is when the watch from that
    process ended; the newest says since when the seat is unattended.
    """

    __tablename__ = "attendance"

    table_id: Mapped[int] = mapped_column(
        ForeignKey("tables.id", ondelete="CASCADE"), primary_key=True
    )
    user_id: Mapped[int] = mapped_column(
        ForeignKey("users.id", ondelete="CASCADE"), primary_key=True
    )
    instance: Mapped[str] = mapped_column(String(32), primary_key=True)
    until: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))


class AuditEntry(Base):
    """Who did what to what, when: every admin action writes one in the same transaction."""

    __tablename__ = "audit_log"

    id: Mapped[int] = mapped_column(BigId, primary_key=True)
    at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow, index=True)
    actor_id: Mapped[int | None] = mapped_column(ForeignKey("users.id"), index=True)
    action: Mapped[str] = mapped_column(String(40), index=True)
    target_type: Mapped[str] = mapped_column(String(16))
    target_id: Mapped[str | None] = mapped_column(String(64))
    details: Mapped[dict[str, Any] | None] = mapped_column(JSON)
    note: Mapped[str | None] = mapped_column(Text)
