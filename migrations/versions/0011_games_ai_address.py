"""A game against the computer in progress carries the client address that started it
(`games.ai_address`), so that every server process counts an address's games against the
computer (AI_GAMES_PER_ADDRESS); the address is cleared soon after the game ends. The partial
index holds only the few games that have one.

Revision ID: 0011
Revises: 0010
Create Date: 2026-12-05
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0011"
down_revision: str | None = "0010"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column("games", sa.Column("ai_address", sa.String(length=64), nullable=True))
    op.create_index(
        "ix_games_ai_address",
        "games",
        ["ai_address"],
        postgresql_where=sa.text("ai_address IS NOT NULL"),
        sqlite_where=sa.text("ai_address IS NOT NULL"),
    )


def downgrade() -> None:
    op.drop_index("ix_games_ai_address", table_name="games")
    with op.batch_alter_table("games") as batch:
        batch.drop_column("ai_address")
