"""Takebacks (issue 32): a table's setting (`tables.takebacks`, on unless turned off; never
used in rated games) and a game's standing request (`games.takeback_by`, the colour asking,
and `games.takeback_ply`, the ply it was made at).

Revision ID: 0015
Revises: 0014
Create Date: 2026-12-07
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0015"
down_revision: str | None = "0014"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column(
        "tables", sa.Column("takebacks", sa.Boolean(), nullable=False, server_default=sa.true())
    )
    op.add_column("games", sa.Column("takeback_by", sa.String(length=8), nullable=True))
    op.add_column("games", sa.Column("takeback_ply", sa.Integer(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("games") as table:
        table.drop_column("takeback_ply")
        table.drop_column("takeback_by")
    with op.batch_alter_table("tables") as table:
        table.drop_column("takebacks")
