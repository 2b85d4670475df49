"""Attendance: which seated players watch their table, per server process, so that a seat
without a game in progress follows its holder (kept while they watch the table, given up a
grace period after they stop).

Revision ID: 0005
Revises: 0004
Create Date: 2026-12-03
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0005"
down_revision: str | None = "0004"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

BigId = sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def upgrade() -> None:
    op.create_table(
        "attendance",
        sa.Column("table_id", BigId, nullable=False),
        sa.Column("user_id", BigId, nullable=False),
        sa.Column("instance", sa.String(length=32), nullable=False),
        sa.Column("until", sa.DateTime(timezone=True), nullable=True),
        sa.ForeignKeyConstraint(
            ["table_id"],
            ["tables.id"],
            name=op.f("fk_attendance_table_id_tables"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["user_id"], ["users.id"], name=op.f("fk_attendance_user_id_users"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("table_id", "user_id", "instance", name=op.f("pk_attendance")),
    )


def downgrade() -> None:
    op.drop_table("attendance")
