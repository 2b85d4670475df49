"""Each heartbeat carries its process's load (connections, signed-in users, moves in the last
minute), which the admin status sums over the live processes.

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-29
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0002"
down_revision: str | None = "0001"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

COLUMNS = ("connections", "connected_users", "moves_last_minute")


def upgrade() -> None:
    with op.batch_alter_table("server_heartbeats") as table:
        for name in COLUMNS:
            table.add_column(
                sa.Column(name, sa.Integer(), nullable=False, server_default=sa.text("0"))
            )


def downgrade() -> None:
    with op.batch_alter_table("server_heartbeats") as table:
        for name in reversed(COLUMNS):
            table.drop_column(name)
