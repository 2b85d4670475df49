"""The initial schema, mirroring app/db/models.py, and the three rooms every server opens with.

Later changes come as revisions of their own, so that a database made by an earlier version
upgrades with `checkers migrate`; tests/db/test_migrations.py fails while the models and the
newest revision differ.

Revision ID: 0001
Revises:
Create Date: 2026-11-29
"""

from collections.abc import Sequence
from datetime import UTC, datetime

import sqlalchemy as sa
from alembic import op

revision: str = "0001"
down_revision: str | None = None
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

ROOMS = [
    {"slug": "english-casual", "name": "English casual", "variant": "english",
     "clock_base_s": None, "clock_increment_s": 0},
    {"slug": "english-blitz", "name": "English blitz 5+3", "variant": "english",
     "clock_base_s": 300, "clock_increment_s": 3},
    {"slug": "pool", "name": "Pool 10+5", "variant": "pool",
     "clock_base_s": 600, "clock_increment_s": 5},
]  # fmt: skip


def upgrade() -> None:
    op.create_table(
        "login_failures",
        sa.Column("id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False),
        sa.Column("name", sa.String(length=64), nullable=False),
        sa.Column("at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_login_failures")),
    )
    op.create_index(op.f("ix_login_failures_name"), "login_failures", ["name"])

    op.create_table(
        "rooms",
        sa.Column("id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False),
        sa.Column("slug", sa.String(length=40), nullable=False),
        sa.Column("name", sa.String(length=80), nullable=False),
        sa.Column("variant", sa.String(length=16), nullable=False),
        sa.Column("clock_base_s", sa.Integer(), nullable=True),
        sa.Column("clock_increment_s", sa.Integer(), nullable=False),
        sa.Column("table_limit", sa.Integer(), nullable=False),
        sa.Column("is_open", sa.Boolean(), nullable=False),
        sa.Column("is_listed", sa.Boolean(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("closed_at", sa.DateTime(timezone=True), nullable=True),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_rooms")),
        sa.UniqueConstraint("slug", name=op.f("uq_rooms_slug")),
    )
    op.create_table(
        "users",
        sa.Column("id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False),
        sa.Column("name", sa.String(length=32), nullable=False),
        sa.Column("password_hash", sa.String(length=255), nullable=True),
        sa.Column("kind", sa.String(length=16), nullable=False),
        sa.Column("role", sa.String(length=16), nullable=False),
        sa.Column("banned", sa.Boolean(), nullable=False),
        sa.Column("ban_reason", sa.String(length=200), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("last_seen_at", sa.DateTime(timezone=True), nullable=True),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_users")),
        sa.UniqueConstraint("name", name=op.f("uq_users_name")),
    )
    op.create_table(
        "audit_log",
        sa.Column("id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False),
        sa.Column("at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("actor_id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=True),
        sa.Column("action", sa.String(length=40), nullable=False),
        sa.Column("target_type", sa.String(length=16), nullable=False),
        sa.Column("target_id", sa.String(length=64), nullable=True),
        sa.Column("details", sa.JSON(), nullable=True),
        sa.Column("note", sa.Text(), nullable=True),
        sa.ForeignKeyConstraint(
            ["actor_id"], ["users.id"], name=op.f("fk_audit_log_actor_id_users")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_audit_log")),
    )
    op.create_index(op.f("ix_audit_log_action"), "audit_log", ["action"])
    op.create_index(op.f("ix_audit_log_actor_id"), "audit_log", ["actor_id"])
    op.create_index(op.f("ix_audit_log_at"), "audit_log", ["at"])

    op.create_table(
        "auth_tokens",
        sa.Column("id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False),
        sa.Column("token_hash", sa.String(length=64), nullable=False),
        sa.Column("user_id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("expires_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["user_id"], ["users.id"], name=op.f("fk_auth_tokens_user_id_users"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_auth_tokens")),
        sa.UniqueConstraint("token_hash", name=op.f("uq_auth_tokens_token_hash")),
    )
    op.create_index(op.f("ix_auth_tokens_user_id"), "auth_tokens", ["user_id"])

    op.create_table(
        "tables",
        sa.Column("id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False),
        sa.Column("room_id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False),
        sa.Column("owner_id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=True),
        sa.Column("variant", sa.String(length=16), nullable=False),
        sa.Column("clock_base_s", sa.Integer(), nullable=True),
        sa.Column("clock_increment_s", sa.Integer(), nullable=False),
        sa.Column("colour", sa.String(length=8), nullable=False),
        sa.Column("is_private", sa.Boolean(), nullable=False),
        sa.Column("invite_code", sa.String(length=32), nullable=True),
        sa.Column("start_fen", sa.String(length=200), nullable=True),
        sa.Column("rated", sa.Boolean(), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("closed_at", sa.DateTime(timezone=True), nullable=True),
        sa.ForeignKeyConstraint(["owner_id"], ["users.id"], name=op.f("fk_tables_owner_id_users")),
        sa.ForeignKeyConstraint(["room_id"], ["rooms.id"], name=op.f("fk_tables_room_id_rooms")),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_tables")),
        sa.UniqueConstraint("invite_code", name=op.f("uq_tables_invite_code")),
    )
    op.create_index(op.f("ix_tables_room_id"), "tables", ["room_id"])
    op.create_index(op.f("ix_tables_status"), "tables", ["status"])

    op.create_table(
        "games",
        sa.Column("id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False),
        sa.Column("variant", sa.String(length=16), nullable=False),
        sa.Column("room_id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=True),
        sa.Column("table_id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=True),
        sa.Column("black_id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=True),
        sa.Column("white_id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=True),
        sa.Column("start_fen", sa.String(length=200), nullable=True),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("result", sa.String(length=8), nullable=False),
        sa.Column("termination", sa.String(length=24), nullable=True),
        sa.Column("clock_base_s", sa.Integer(), nullable=True),
        sa.Column("clock_increment_s", sa.Integer(), nullable=False),
        sa.Column("black_clock_ms", sa.Integer(), nullable=True),
        sa.Column("white_clock_ms", sa.Integer(), nullable=True),
        sa.Column("rated", sa.Boolean(), nullable=False),
        sa.Column("ply_count", sa.Integer(), nullable=False),
        sa.Column("source", sa.String(length=8), nullable=False),
        sa.Column("import_key", sa.String(length=64), nullable=True),
        sa.Column("tags", sa.JSON(), nullable=True),
        sa.Column("started_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("last_move_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("finished_at", sa.DateTime(timezone=True), nullable=True),
        sa.ForeignKeyConstraint(["black_id"], ["users.id"], name=op.f("fk_games_black_id_users")),
        sa.ForeignKeyConstraint(["room_id"], ["rooms.id"], name=op.f("fk_games_room_id_rooms")),
        sa.ForeignKeyConstraint(["table_id"], ["tables.id"], name=op.f("fk_games_table_id_tables")),
        sa.ForeignKeyConstraint(["white_id"], ["users.id"], name=op.f("fk_games_white_id_users")),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_games")),
        sa.UniqueConstraint("import_key", name=op.f("uq_games_import_key")),
    )
    op.create_index("ix_games_black_started", "games", ["black_id", "started_at", "id"])
    op.create_index("ix_games_started", "games", ["started_at", "id"])
    op.create_index("ix_games_status", "games", ["status"])
    op.create_index(op.f("ix_games_table_id"), "games", ["table_id"])
    op.create_index("ix_games_variant_result", "games", ["variant", "result"])
    op.create_index(
        "ix_games_white_started", "games", ["white_id", "started_at", "id", "black_id"]
    )

    op.create_table(
        "moves",
        sa.Column("game_id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False),
        sa.Column("ply", sa.Integer(), nullable=False),
        sa.Column("move", sa.String(length=80), nullable=False),
        sa.Column("clock_ms", sa.Integer(), nullable=True),
        sa.Column("played_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["game_id"], ["games.id"], name=op.f("fk_moves_game_id_games"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("game_id", "ply", name=op.f("pk_moves")),
    )

    op.create_table(
        "server_heartbeats",
        sa.Column("instance", sa.String(length=32), nullable=False),
        sa.Column("beat_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("stopped", sa.Boolean(), nullable=False),
        sa.PrimaryKeyConstraint("instance", name=op.f("pk_server_heartbeats")),
    )

    rooms = sa.table(
        "rooms",
        sa.column("slug", sa.String),
        sa.column("name", sa.String),
        sa.column("variant", sa.String),
        sa.column("clock_base_s", sa.Integer),
        sa.column("clock_increment_s", sa.Integer),
        sa.column("table_limit", sa.Integer),
        sa.column("is_open", sa.Boolean),
        sa.column("is_listed", sa.Boolean),
        sa.column("created_at", sa.DateTime(timezone=True)),
    )
    now = datetime.now(UTC)
    op.bulk_insert(
        rooms,
        [
            {**room, "table_limit": 50, "is_open": True, "is_listed": True, "created_at": now}
            for room in ROOMS
        ],
    )


def downgrade() -> None:
    op.drop_table("server_heartbeats")
    op.drop_table("moves")
    op.drop_table("games")
    op.drop_table("tables")
    op.drop_table("auth_tokens")
    op.drop_table("audit_log")
    op.drop_table("users")
    op.drop_table("rooms")
    op.drop_table("login_failures")
