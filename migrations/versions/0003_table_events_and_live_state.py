"""Live state owned by the database: each table's numbered event log, the second seat and
rematch requests of a table, a game's draw offers, absences and clock deadline, and who is
connected to which server process.

Revision ID: 0003
Revises: 0002
Create Date: 2026-12-01
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0003"
down_revision: str | None = "0002"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

BigId = sa.BigInteger().with_variant(sa.Integer(), "sqlite")
GAME_COLUMNS = (
    "deadline_at",
    "draw_offer",
    "black_offer_ply",
    "white_offer_ply",
    "black_away_since",
    "white_away_since",
)


def upgrade() -> None:
    op.create_table(
        "table_events",
        sa.Column("table_id", BigId, nullable=False),
        sa.Column("seq", sa.Integer(), nullable=False),
        sa.Column("payload", sa.Text(), nullable=False),
        sa.Column("at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["table_id"],
            ["tables.id"],
            name=op.f("fk_table_events_table_id_tables"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("table_id", "seq", name=op.f("pk_table_events")),
    )
    op.create_table(
        "presence",
        sa.Column("instance", sa.String(length=32), nullable=False),
        sa.Column("user_id", BigId, nullable=False),
        sa.Column("since", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["user_id"], ["users.id"], name=op.f("fk_presence_user_id_users"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("instance", "user_id", name=op.f("pk_presence")),
    )
    op.create_index(op.f("ix_presence_user_id"), "presence", ["user_id"])
    with op.batch_alter_table("tables") as table:
        table.add_column(sa.Column("guest_id", BigId, nullable=True))
        table.add_column(sa.Column("rematch", sa.JSON(), nullable=True))
        table.add_column(
            sa.Column("event_seq", sa.Integer(), nullable=False, server_default=sa.text("0"))
        )
        table.create_foreign_key(op.f("fk_tables_guest_id_users"), "users", ["guest_id"], ["id"])
    with op.batch_alter_table("games") as table:
        table.add_column(sa.Column("deadline_at", sa.DateTime(timezone=True), nullable=True))
        table.add_column(sa.Column("draw_offer", sa.String(length=8), nullable=True))
        table.add_column(sa.Column("black_offer_ply", sa.Integer(), nullable=True))
        table.add_column(sa.Column("white_offer_ply", sa.Integer(), nullable=True))
        table.add_column(sa.Column("black_away_since", sa.DateTime(timezone=True), nullable=True))
        table.add_column(sa.Column("white_away_since", sa.DateTime(timezone=True), nullable=True))
        table.create_index(op.f("ix_games_deadline_at"), ["deadline_at"])


def downgrade() -> None:
    with op.batch_alter_table("games") as table:
        table.drop_index(op.f("ix_games_deadline_at"))
        for name in reversed(GAME_COLUMNS):
            table.drop_column(name)
    with op.batch_alter_table("tables") as table:
        table.drop_constraint(op.f("fk_tables_guest_id_users"), type_="foreignkey")
        table.drop_column("event_seq")
        table.drop_column("rematch")
        table.drop_column("guest_id")
    op.drop_index(op.f("ix_presence_user_id"), table_name="presence")
    op.drop_table("presence")
    op.drop_table("table_events")
