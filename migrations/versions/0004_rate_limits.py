"""Abuse limits: `rate_limits` holds the counters of failed log-ins (per address, per name and
per pair of both) and of the accounts each address creates, replacing `login_failures`, whose
rows were counted per name only and never pruned across names. The old failures are dropped:
they only ever throttled for a few minutes.

Revision ID: 0004
Revises: 0003
Create Date: 2026-12-02
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0004"
down_revision: str | None = "0003"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

BigId = sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def upgrade() -> None:
    op.create_table(
        "rate_limits",
        sa.Column("key", sa.String(length=160), nullable=False),
        sa.Column("hits", sa.Float(), nullable=False),
        sa.Column("at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("trusted_until", sa.DateTime(timezone=True), nullable=True),
        sa.Column("expires_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("key", name=op.f("pk_rate_limits")),
    )
    op.create_index(op.f("ix_rate_limits_expires_at"), "rate_limits", ["expires_at"])
    op.drop_index(op.f("ix_login_failures_name"), table_name="login_failures")
    op.drop_table("login_failures")


def downgrade() -> None:
    op.create_table(
        "login_failures",
        sa.Column("id", BigId, nullable=False),
        sa.Column("name", sa.String(length=64), nullable=False),
        sa.Column("at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_login_failures")),
    )
    op.create_index(op.f("ix_login_failures_name"), "login_failures", ["name"])
    op.drop_index(op.f("ix_rate_limits_expires_at"), table_name="rate_limits")
    op.drop_table("rate_limits")
