"""The director steps only the tournaments that have something to do (issue 45):
`tournaments.next_step_at` is when one is due next (its start, a second later while games are
played, later while nothing can happen, a back-off after a failed step) and the index of the
director's read is on it; `tournaments.failures` counts the failed steps in a row, after which
the tournament is cancelled.

Revision ID: 0026
Revises: 0025
Create Date: 2026-12-21
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0026"
down_revision: str | None = "0025"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

LIVE = "status IN ('created', 'started')"


def upgrade() -> None:
    op.drop_index("ix_tournaments_live", table_name="tournaments")
    op.add_column("tournaments", sa.Column("next_step_at", sa.DateTime(timezone=True)))
    op.add_column(
        "tournaments",
        sa.Column("failures", sa.Integer(), server_default=sa.text("0"), nullable=False),
    )
    op.execute("UPDATE tournaments SET next_step_at = starts_at")
    with op.batch_alter_table("tournaments") as batch:
        # A row written without it is due at once: its first step sets it as it should be.
        batch.alter_column("next_step_at", nullable=False, server_default=sa.func.now())
    op.create_index(
        "ix_tournaments_due",
        "tournaments",
        ["next_step_at"],
        postgresql_where=sa.text(LIVE),
        sqlite_where=sa.text(LIVE),
    )


def downgrade() -> None:
    op.drop_index("ix_tournaments_due", table_name="tournaments")
    with op.batch_alter_table("tournaments") as batch:
        batch.drop_column("failures")
        batch.drop_column("next_step_at")
    op.create_index(
        "ix_tournaments_live",
        "tournaments",
        ["starts_at"],
        postgresql_where=sa.text(LIVE),
        sqlite_where=sa.text(LIVE),
    )
