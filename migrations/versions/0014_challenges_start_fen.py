"""A challenge may name the position its game starts from (`challenges.start_fen`, None: the
standard start), as lichess's `fen`; the game is then casual, as an open table's.

Revision ID: 0014
Revises: 0013
Create Date: 2026-12-06
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0014"
down_revision: str | None = "0013"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column("challenges", sa.Column("start_fen", sa.String(length=200), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("challenges") as table:
        table.drop_column("start_fen")
