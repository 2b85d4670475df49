"""The account's takeback preference (issue 32): `users.takebacks`, on unless the player turns
it off (lichess's "Takebacks: never"). Off, nobody may ask them to take a move back, they may
not ask either, and the tables they open do not allow takebacks unless they say so.

Revision ID: 0017
Revises: 0016
Create Date: 2026-12-05
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0017"
down_revision: str | None = "0016"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column(
        "users", sa.Column("takebacks", sa.Boolean(), nullable=False, server_default=sa.true())
    )


def downgrade() -> None:
    # Not in batch mode: SQLite's copy of the table would lose `ix_users_lower_name` (an
    # expression, which batch mode cannot reflect); SQLite 3.35+ drops a column itself.
    op.drop_column("users", "takebacks")
