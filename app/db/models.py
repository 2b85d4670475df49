"""SQLAlchemy models: the whole schema in one place, mirrored by the alembic migrations."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import (
    JSON,
    BigInteger,
    Boolean,
    DateTime,
    Float,
    ForeignKey,
    Index,
    Integer,
    MetaData,
    String,
    Text,
    false,
    text,
)
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

from app.rules import Result
from app.status import GameStatus, TableStatus
from app.timeutil import utcnow

NAMING_CONVENTION = {
    "ix": "ix_%(column_0_label)s",
    "uq": "uq_%(table_name)s_%(column_0_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}


class Base(DeclarativeBase):
    metadata = MetaData(naming_convention=NAMING_CONVENTION)


# Integer primary keys that are BIGINT on Postgres and INTEGER (rowid alias) on SQLite.
BigId = BigInteger().with_variant(Integer(), "sqlite")
# The largest id either holds: the faces refuse bigger ones, which no database can even look up.
MAX_ID = 2**63 - 1
# The largest number a table's event can have (`table_events.seq`, `tables.event_seq`: INTEGER,
# 32 bits on PostgreSQL): a resume from beyond it is ahead of every log.
MAX_EVENT_SEQ = 2**31 - 1


class User(Base):
    """A player account: registered (with a password), guest, or a name from imported games."""

    __tablename__ = "users"

    id: Mapped[int] = mapped_column(BigId, primary_key=True)
    name: Mapped[str] = mapped_column(String(32), unique=True)
    password_hash: Mapped[str | None] = mapped_column(String(255))
    # registered|guest|imported|ai (the computer opponent, one per level: cannot log in)
    kind: Mapped[str] = mapped_column(String(16), default="registered")
    role: Mapped[str] = mapped_column(String(16), default="player")  # player|admin
    banned: Mapped[bool] = mapped_column(Boolean, default=False)
    ban_reason: Mapped[str | None] = mapped_column(String(200))
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    last_seen_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    # Upgraded for the bot API (`app.services.bots`): plays through it, never in pools.
    is_bot: Mapped[bool] = mapped_column(Boolean, default=False, server_default=text("false"))


class AuthToken(Base):
    """A bearer token; only its SHA-256 is stored."""

    __tablename__ = "auth_tokens"

    id: Mapped[int] = mapped_column(BigId, primary_key=True)
    token_hash: Mapped[str] = mapped_column(String(64), unique=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    expires_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))


class RateLimit(Base):
    """One counter of `app.services.limits`: failed log-ins of an address, a name or a pair of
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


class Room(Base):
    __tablename__ = "rooms"

    id: Mapped[int] = mapped_column(BigId, primary_key=True)
    slug: Mapped[str] = mapped_column(String(40), unique=True)
    name: Mapped[str] = mapped_column(String(80))
    variant: Mapped[str] = mapped_column(String(16))  # english|pool
    clock_base_s: Mapped[int | None] = mapped_column(Integer)  # None: untimed
    clock_increment_s: Mapped[int] = mapped_column(Integer, default=0)
    table_limit: Mapped[int] = mapped_column(Integer, default=50)
    is_open: Mapped[bool] = mapped_column(Boolean, default=True)
    is_listed: Mapped[bool] = mapped_column(Boolean, default=True)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    closed_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))


class GameTable(Base):
    """A table in a room: its settings, and the seats' owner. Games are played at it."""

    __tablename__ = "tables"

    id: Mapped[int] = mapped_column(BigId, primary_key=True)
    room_id: Mapped[int] = mapped_column(ForeignKey("rooms.id"), index=True)
    owner_id: Mapped[int | None] = mapped_column(ForeignKey("users.id"))
    variant: Mapped[str] = mapped_column(String(16))
    clock_base_s: Mapped[int | None] = mapped_column(Integer)
    clock_increment_s: Mapped[int] = mapped_column(Integer, default=0)
    colour: Mapped[str] = mapped_column(String(8), default="random")  # black|white|random
    is_private: Mapped[bool] = mapped_column(Boolean, default=False)
    invite_code: Mapped[str | None] = mapped_column(String(32), unique=True)
    start_fen: Mapped[str | None] = mapped_column(String(200))
    rated: Mapped[bool] = mapped_column(Boolean, default=False)
    status: Mapped[str] = mapped_column(String(16), default=TableStatus.OPEN, index=True)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    closed_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    # The second seat: taken by whoever sits down; after a game both players keep their seats
    # (owner and guest) until they stand up.
    guest_id: Mapped[int | None] = mapped_column(ForeignKey("users.id"))
    # Who asked for a rematch since the last game ended (user ids); None: nobody.
    rematch: Mapped[list[int] | None] = mapped_column(JSON)
    # The sequence number of the table's latest event (`table_events`); the transaction that
    # stores a change raises it and appends the change's events, so it orders them.
    event_seq: Mapped[int] = mapped_column(Integer, default=0, server_default=text("0"))


class Game(Base):
    """One game, live or finished, played here or imported from PDN."""

    __tablename__ = "games"

    id: Mapped[int] = mapped_column(BigId, primary_key=True)
    variant: Mapped[str] = mapped_column(String(16))
    room_id: Mapped[int | None] = mapped_column(ForeignKey("rooms.id"))
    table_id: Mapped[int | None] = mapped_column(ForeignKey("tables.id"), index=True)
    black_id: Mapped[int | None] = mapped_column(ForeignKey("users.id"))
    white_id: Mapped[int | None] = mapped_column(ForeignKey("users.id"))
    start_fen: Mapped[str | None] = mapped_column(String(200))  # None: the standard start
    status: Mapped[str] = mapped_column(String(16), default=GameStatus.PLAYING)
    result: Mapped[str] = mapped_column(String(8), default=Result.UNFINISHED)
    termination: Mapped[str | None] = mapped_column(String(24))
    clock_base_s: Mapped[int | None] = mapped_column(Integer)
    clock_increment_s: Mapped[int] = mapped_column(Integer, default=0)
    black_clock_ms: Mapped[int | None] = mapped_column(Integer)  # time left after the last move
    white_clock_ms: Mapped[int | None] = mapped_column(Integer)
    rated: Mapped[bool] = mapped_column(Boolean, default=False)
    # Played at a private table: copied from the table when the game starts (a table's privacy
    # never changes), so that who may list a game is a condition on the game's own row, which
    # the archive's indexes serve (`app.services.visibility`).
    is_private: Mapped[bool] = mapped_column(Boolean, default=False, server_default=false())
    ply_count: Mapped[int] = mapped_column(Integer, default=0)
    source: Mapped[str] = mapped_column(String(8), default="live")  # live|import
    import_key: Mapped[str | None] = mapped_column(String(64), unique=True)
    tags: Mapped[dict[str, Any] | None] = mapped_column(JSON)  # PDN tags (Event, Site, Round…)
    started_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    last_move_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    finished_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    # When the side to move runs out of time (None: untimed or over): any process flags it then.
    # Not indexed, like every column a move changes: a move's update then touches no index (a
    # heap-only tuple update on PostgreSQL, where the table's pages keep a tenth free for it).
    # The sweep finds due games among those in progress (`ix_games_status`).
    deadline_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    # The standing draw offer (black|white) and the ply at which each colour last offered.
    draw_offer: Mapped[str | None] = mapped_column(String(8))
    black_offer_ply: Mapped[int | None] = mapped_column(Integer)
    white_offer_ply: Mapped[int | None] = mapped_column(Integer)
    # Since when a player has had no connection to any server process (None: connected).
    black_away_since: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    white_away_since: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    # A game against the computer: the server process (heartbeat instance) playing its moves.
    ai_driver: Mapped[str | None] = mapped_column(String(32))
    # A game against the computer in progress: the client address that started it, counted by
    # AI_GAMES_PER_ADDRESS; cleared soon after the game ends (`app.db.ai.forget_addresses`).
    ai_address: Mapped[str | None] = mapped_column(String(64))

    __table_args__ = (
        # (…, is_private, started_at, id) serve the archive's keyset pages without a sort step,
        # the public games and the private ones each a range of their own; black_id lets a
        # player's game count leave out self-play from the index alone.
        Index("ix_games_black_started", "black_id", "is_private", "started_at", "id"),
        Index("ix_games_white_started", "white_id", "is_private", "started_at", "id", "black_id"),
        # A player's totals per variant and result, read from the index alone in group order.
        Index(
            "ix_games_black_totals",
            "black_id",
            "is_private",
            "variant",
            "status",
            "result",
            "started_at",
        ),
        Index(
            "ix_games_white_totals",
            "white_id",
            "is_private",
            "variant",
            "status",
            "result",
            "started_at",
            "black_id",
        ),
        Index("ix_games_status", "status"),
        # Only the few games that hold an address (games against the computer, until cleared).
        Index(
            "ix_games_ai_address",
            "ai_address",
            postgresql_where=text("ai_address IS NOT NULL"),
            sqlite_where=text("ai_address IS NOT NULL"),
        ),
        # A search by variant and result (the most common) walks its own range in start order.
        Index("ix_games_variant_result", "variant", "result", "is_private", "started_at", "id"),
        Index("ix_games_started", "is_private", "started_at", "id"),
    )


class ServerHeartbeat(Base):
    """A server process's latest sign of life, written every few seconds (one row per start).

    At start-up these tell a process joining a running cluster from one starting after downtime,
    and when that downtime began; see `app.services.heartbeat`. The admin status sums the load
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


class TableEvent(Base):
    """One event of a table, numbered by the transaction that stored the change it reports.

    Every process and client follows a table by these numbers: a gap means events were missed,
    and they are read back from here. `payload` is the event's JSON without its number.
    """

    __tablename__ = "table_events"

    table_id: Mapped[int] = mapped_column(
        ForeignKey("tables.id", ondelete="CASCADE"), primary_key=True
    )
    seq: Mapped[int] = mapped_column(Integer, primary_key=True)
    payload: Mapped[str] = mapped_column(Text)
    at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


class AccountAddress(Base):
    """An address a registered account signed up, logged in or connected from, and when last
    (`app.services.fair_play`: rated games between accounts that shared an address recently
    are casual)."""

    __tablename__ = "account_addresses"

    user_id: Mapped[int] = mapped_column(
        ForeignKey("users.id", ondelete="CASCADE"), primary_key=True
    )
    address: Mapped[str] = mapped_column(String(64), primary_key=True)
    first_seen: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    last_seen: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)

    __table_args__ = (Index("ix_account_addresses_address", "address", "last_seen"),)


class RatingReview(Base):
    """An account whose rating rose sharply against few opponents, for a moderator to look at
    (`app.services.fair_play`); `resolved_at` once one did."""

    __tablename__ = "rating_reviews"

    id: Mapped[int] = mapped_column(BigId, primary_key=True)
    user_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    variant: Mapped[str] = mapped_column(String(16))
    category: Mapped[str] = mapped_column(String(16))
    reason: Mapped[str] = mapped_column(String(200))
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    resolved_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    resolved_by: Mapped[int | None] = mapped_column(ForeignKey("users.id", ondelete="SET NULL"))


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


class Move(Base):
    """One ply of a game; (game_id, ply) is unique, ply counts from 1."""

    __tablename__ = "moves"

    game_id: Mapped[int] = mapped_column(
        ForeignKey("games.id", ondelete="CASCADE"), primary_key=True
    )
    ply: Mapped[int] = mapped_column(Integer, primary_key=True)
    move: Mapped[str] = mapped_column(String(80))
    clock_ms: Mapped[int | None] = mapped_column(Integer)  # mover's time left after the move
    played_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


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

    __table_args__ = (Index("ix_rating_changes_user_at", "user_id", "at"),)


class Challenge(Base):
    """One player's challenge of another, from its making until it is answered or expires.

    `status` is created|accepted|declined|canceled; a created one past `expires_at` counts as
    expired (nothing needs to sweep it). Accepting sets `game_id` in the transaction that
    stores the game, on the condition that the status was still `created`: so it starts once.
    """

    __tablename__ = "challenges"

    id: Mapped[int] = mapped_column(BigId, primary_key=True)
    challenger_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"))
    dest_id: Mapped[int] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"))
    variant: Mapped[str] = mapped_column(String(16))
    clock_base_s: Mapped[int | None] = mapped_column(Integer)  # None: untimed
    clock_increment_s: Mapped[int] = mapped_column(Integer, default=0)
    colour: Mapped[str] = mapped_column(String(8), default="random")  # the challenger's
    rated: Mapped[bool] = mapped_column(Boolean, default=False)
    status: Mapped[str] = mapped_column(String(16), default="created")
    decline_reason: Mapped[str | None] = mapped_column(String(40))
    game_id: Mapped[int | None] = mapped_column(ForeignKey("games.id", ondelete="SET NULL"))
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    expires_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))

    __table_args__ = (
        Index("ix_challenges_dest_status", "dest_id", "status"),
        Index("ix_challenges_challenger_status", "challenger_id", "status"),
    )


class Seek(Base):
    """A player waiting in a quick-pairing pool (`app.services.pairing`), one row per player;
    deleted in the transaction that stores the game it was paired into, or when cancelled.
    `rating` is the player's rating in the pool's category when the seek was made;
    `instance` the server process the player was connected to (a seek dies with it)."""

    __tablename__ = "seeks"

    user_id: Mapped[int] = mapped_column(
        ForeignKey("users.id", ondelete="CASCADE"), primary_key=True
    )
    pool: Mapped[str] = mapped_column(String(24))
    rated: Mapped[bool] = mapped_column(Boolean, default=False)
    rating: Mapped[float] = mapped_column(Float)
    instance: Mapped[str] = mapped_column(String(32))
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)

    __table_args__ = (Index("ix_seeks_pool", "pool", "created_at"),)
