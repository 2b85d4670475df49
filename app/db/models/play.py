"""Rooms, tables, games, their moves and events, challenges and seeks: the schema of play."""

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
    false,
    text,
    true,
)
from sqlalchemy.orm import Mapped, mapped_column

from app.db.models.base import Base, BigId
from app.rules import Result
from app.status import GameStatus, TableStatus
from app.timeutil import utcnow


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
    # Whether a player of its (casual) games may ask to take a move back; never in rated games.
    takebacks: Mapped[bool] = mapped_column(Boolean, default=True, server_default=true())
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
    # Whether the table's events were pruned (`app.live.retention`): a closed table's log
    # is kept `TABLE_LOG_RETENTION_DAYS`, the archive keeps its games' moves.
    log_pruned: Mapped[bool] = mapped_column(Boolean, default=False, server_default=false())

    __table_args__ = (
        # The closed tables whose log is still kept, oldest first: what the pruning reads.
        Index(
            "ix_tables_log_kept",
            "closed_at",
            postgresql_where=text("status = 'closed' AND log_pruned IS false"),
            sqlite_where=text("status = 'closed' AND log_pruned IS 0"),
        ),
    )


class Game(Base):
    """One game, live or finished, played here or imported from PDN."""

    __tablename__ = "games"

    id: Mapped[int] = mapped_column(BigId, primary_key=True)
    variant: Mapped[str] = mapped_column(String(16))
    room_id: Mapped[int | None] = mapped_column(ForeignKey("rooms.id"))
    table_id: Mapped[int | None] = mapped_column(ForeignKey("tables.id"))
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
    # the archive's indexes serve (`app.archive.visibility`).
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
    # The standing takeback request (black|white) and the ply it was made at: it stands only
    # while the game is still at that ply (a move answers it).
    takeback_by: Mapped[str | None] = mapped_column(String(8))
    takeback_ply: Mapped[int | None] = mapped_column(Integer)
    # Since when a player has had no connection to any server process (None: connected).
    black_away_since: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    white_away_since: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    # A game against the computer: the server process (heartbeat instance) playing its moves.
    ai_driver: Mapped[str | None] = mapped_column(String(32))
    # A game against the computer in progress: the client address that started it, counted by
    # AI_GAMES_PER_ADDRESS; cleared soon after the game ends
    # (`app.computer.store.forget_addresses`).
    ai_address: Mapped[str | None] = mapped_column(String(64))
    # A tournament's game: the tournament, its round (Swiss, round robin; None in an arena), and
    # in a ballot match the opening drawn (its moves, played from the start) and which of the
    # match's two games it is.
    tournament_id: Mapped[int | None] = mapped_column(ForeignKey("tournaments.id"))
    tournament_round: Mapped[int | None] = mapped_column(Integer)
    opening: Mapped[str | None] = mapped_column(String(40))
    match_game: Mapped[int | None] = mapped_column(Integer)
    # An arena player who went berserk: half their clock, no increment, a point more for a win.
    black_berserk: Mapped[bool] = mapped_column(Boolean, default=False, server_default=false())
    white_berserk: Mapped[bool] = mapped_column(Boolean, default=False, server_default=false())
    # A correspondence game: the ply whose time alarm (80 % of the move's time used) was given,
    # so that it is given once per move (`app.services.alarms`).
    alarm_ply: Mapped[int | None] = mapped_column(Integer)

    __table_args__ = (
        # (…, is_private, started_at, id) serve the archive's keyset pages without a sort step,
        # the public games and the private ones each a range of their own; black_id lets a
        # player's game count leave out self-play from the index alone, and termination the
        # games aborted before they began (which no listing shows: `app.archive.store.LISTED`).
        Index(
            "ix_games_black_started", "black_id", "is_private", "started_at", "id", "termination"
        ),
        Index(
            "ix_games_white_started",
            "white_id",
            "is_private",
            "started_at",
            "id",
            "black_id",
            "termination",
        ),
        # A player's totals per variant and result, read from the index alone in group order.
        Index(
            "ix_games_black_totals",
            "black_id",
            "is_private",
            "variant",
            "status",
            "result",
            "started_at",
            "termination",
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
            "termination",
        ),
        Index("ix_games_status", "status"),
        # A table's games in order: its latest one (read with the table, at every game start
        # and in the lobby) is one index probe however many games were played there.
        Index("ix_games_table_latest", "table_id", "id"),
        # Only the few games that hold an address (games against the computer, until cleared).
        Index(
            "ix_games_ai_address",
            "ai_address",
            postgresql_where=text("ai_address IS NOT NULL"),
            sqlite_where=text("ai_address IS NOT NULL"),
        ),
        # A search by variant and result (the most common) walks its own range in start order.
        Index(
            "ix_games_variant_result",
            "variant",
            "result",
            "is_private",
            "started_at",
            "id",
            "termination",
        ),
        Index("ix_games_started", "is_private", "started_at", "id", "termination"),
        # A tournament's games (only the tournaments' few have one).
        Index(
            "ix_games_tournament",
            "tournament_id",
            "status",
            postgresql_where=text("tournament_id IS NOT NULL"),
            sqlite_where=text("tournament_id IS NOT NULL"),
        ),
    )


class TableEvent(Base):
    """One event of a table, numbered by the transaction that stored the change it reports.

    Every process and client follows a table by these numbers: a gap means events were missed,
    and they are read back from here. `payload` is the event's JSON without its number, `kind`
    its type (the JSON's `type`), stored apart so that nothing reads the text to learn it.
    """

    __tablename__ = "table_events"

    table_id: Mapped[int] = mapped_column(
        ForeignKey("tables.id", ondelete="CASCADE"), primary_key=True
    )
    seq: Mapped[int] = mapped_column(Integer, primary_key=True)
    kind: Mapped[str] = mapped_column(String(24))
    payload: Mapped[str] = mapped_column(Text)
    at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)

    __table_args__ = (
        # A table's chat lines among its events (the history a snapshot shows), without
        # walking its moves.
        Index(
            "ix_table_events_chat",
            "table_id",
            "seq",
            postgresql_where=text("kind = 'chat'"),
            sqlite_where=text("kind = 'chat'"),
        ),
    )


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
    start_fen: Mapped[str | None] = mapped_column(String(200))  # None: the standard start
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
    """A player waiting in a quick-pairing pool (`app.matchmaking.pools`), one row per player;
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
