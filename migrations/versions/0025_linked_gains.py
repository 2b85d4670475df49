"""Farming with helpers at other addresses (issue 45): each rating change says whether what it
gained was a linked gain (a short game, or an opponent already met that day or sharing an
address with one), counted against the player's daily allowance, and how much of it the
allowance withheld (`rating_changes.linked`, `rating_changes.withheld`). Existing rows are
neither: the allowance counts from the upgrade on.

Revision ID: 0025
Revises: 0024
Create Date: 2026-12-20
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0025"
down_revision: str | None = "0024"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column(
        "rating_changes",
        sa.Column("linked", sa.Boolean(), nullable=False, server_default=sa.false()),
    )
    op.add_column(
        "rating_changes",
        sa.Column("withheld", sa.Float(), nullable=False, server_default=sa.text("0")),
    )


def downgrade() -> None:
    # Not in batch mode (as 0017): SQLite 3.35+ drops a column itself.
    op.drop_column("rating_changes", "withheld")
    op.drop_column("rating_changes", "linked")
