"""The computer opponent: one user per level ("AI level 1" … "AI level 8", kind `ai`, no
password: they cannot log in), and `games.ai_driver`, the server process (heartbeat instance)
that plays the AI's moves in a game in progress.

Revision ID: 0007
Revises: 0006
Create Date: 2026-12-01
"""

from collections.abc import Sequence
from datetime import UTC, datetime

import sqlalchemy as sa
from alembic import op

revision: str = "0007"
down_revision: str | None = "0006"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

LEVELS = range(1, 9)


def upgrade() -> None:
    op.add_column("games", sa.Column("ai_driver", sa.String(length=32), nullable=True))
    users = sa.table(
        "users",
        sa.column("name", sa.String),
        sa.column("kind", sa.String),
        sa.column("role", sa.String),
        sa.column("banned", sa.Boolean),
        sa.column("created_at", sa.DateTime(timezone=True)),
    )
    now = datetime.now(UTC)
    op.bulk_insert(
        users,
        [
            {
                "name": f"AI level {level}",
                "kind": "ai",
                "role": "player",
                "banned": False,
                "created_at": now,
            }
            for level in LEVELS
        ],
    )


def downgrade() -> None:
    op.execute("DELETE FROM users WHERE kind = 'ai'")
    op.drop_column("games", "ai_driver")
