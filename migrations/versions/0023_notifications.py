"""Notifications and correspondence (issue 35): each player's inbox, the e-mail outbox, the
conditional moves of correspondence games; an account's e-mail address and choices; the ply
of a correspondence game's last time alarm; whether a tournament's players were reminded.

Revision ID: 0023
Revises: 0022
Create Date: 2026-12-06
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0023"
down_revision: str | None = "0022"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

BigId = sa.BigInteger().with_variant(sa.Integer(), "sqlite")
WHEN = sa.DateTime(timezone=True)


def upgrade() -> None:
    op.create_table(
        "email_outbox",
        sa.Column("id", BigId, nullable=False),
        sa.Column("key", sa.String(120), nullable=False),
        sa.Column("user_id", BigId, nullable=True),
        sa.Column("to_address", sa.String(254), nullable=False),
        sa.Column("kind", sa.String(24), nullable=False),
        sa.Column("subject", sa.String(200), nullable=False),
        sa.Column("body", sa.Text(), nullable=False),
        sa.Column("unsubscribe", sa.String(500), nullable=True),
        sa.Column("created_at", WHEN, nullable=False),
        sa.Column("next_try_at", WHEN, nullable=False),
        sa.Column("lease_until", WHEN, nullable=True),
        sa.Column("attempts", sa.Integer(), server_default=sa.text("0"), nullable=False),
        sa.Column("last_error", sa.String(300), nullable=True),
        sa.Column("sent_at", WHEN, nullable=True),
        sa.ForeignKeyConstraint(
            ["user_id"],
            ["users.id"],
            name=op.f("fk_email_outbox_user_id_users"),
            ondelete="SET NULL",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_email_outbox")),
        sa.UniqueConstraint("key", name=op.f("uq_email_outbox_key")),
    )
    op.create_index(
        "ix_email_outbox_due",
        "email_outbox",
        ["next_try_at"],
        unique=False,
        postgresql_where=sa.text("sent_at IS NULL"),
        sqlite_where=sa.text("sent_at IS NULL"),
    )
    op.create_table(
        "notifications",
        sa.Column("id", BigId, nullable=False),
        sa.Column("user_id", BigId, nullable=False),
        sa.Column("kind", sa.String(24), nullable=False),
        sa.Column("data", sa.JSON(), nullable=False),
        sa.Column("created_at", WHEN, nullable=False),
        sa.Column("read_at", WHEN, nullable=True),
        sa.ForeignKeyConstraint(
            ["user_id"],
            ["users.id"],
            name=op.f("fk_notifications_user_id_users"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_notifications")),
    )
    op.create_index(
        "ix_notifications_unread",
        "notifications",
        ["user_id"],
        unique=False,
        postgresql_where=sa.text("read_at IS NULL"),
        sqlite_where=sa.text("read_at IS NULL"),
    )
    op.create_index("ix_notifications_user_id", "notifications", ["user_id", "id"], unique=False)
    op.create_table(
        "conditional_moves",
        sa.Column("game_id", BigId, nullable=False),
        sa.Column("user_id", BigId, nullable=False),
        sa.Column("ply", sa.Integer(), nullable=False),
        sa.Column("lines", sa.JSON(), nullable=False),
        sa.Column("updated_at", WHEN, nullable=False),
        sa.ForeignKeyConstraint(
            ["game_id"],
            ["games.id"],
            name=op.f("fk_conditional_moves_game_id_games"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["user_id"],
            ["users.id"],
            name=op.f("fk_conditional_moves_user_id_users"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("game_id", "user_id", name=op.f("pk_conditional_moves")),
    )
    # Nullable or with a constant default: instant on PostgreSQL, whatever the tables hold (and
    # SQLite's own ALTER TABLE, which keeps the tables' other constraints as they are).
    op.add_column("games", sa.Column("alarm_ply", sa.Integer(), nullable=True))
    op.add_column(
        "tournaments",
        sa.Column("reminded", sa.Boolean(), server_default=sa.text("false"), nullable=False),
    )
    op.add_column("users", sa.Column("email", sa.String(254), nullable=True))
    op.add_column("users", sa.Column("email_pending", sa.String(254), nullable=True))
    op.add_column("users", sa.Column("email_token_hash", sa.String(64), nullable=True))
    op.add_column("users", sa.Column("email_key", sa.String(64), nullable=True))
    op.add_column(
        "users", sa.Column("email_off", sa.JSON(), server_default=sa.text("'[]'"), nullable=False)
    )


def downgrade() -> None:
    for column in ("email_off", "email_key", "email_token_hash", "email_pending", "email"):
        op.drop_column("users", column)
    op.drop_column("tournaments", "reminded")
    op.drop_column("games", "alarm_ply")
    op.drop_table("conditional_moves")
    op.drop_index("ix_notifications_user_id", table_name="notifications")
    op.drop_index("ix_notifications_unread", table_name="notifications")
    op.drop_table("notifications")
    op.drop_index("ix_email_outbox_due", table_name="email_outbox")
    op.drop_table("email_outbox")
