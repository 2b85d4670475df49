"""The archive's indexes hold each game's termination (issue 32): a game aborted before it began
(termination `aborted`: the Abort button, a first move not made in time, an opponent gone
before any move) is kept, but no listing, export or game count shows it, as lichess hides its
aborted games. With `termination` at the end of each of the archive's six indexes, that
condition is read from the index: pages and counts stay index range scans, and a player's
count and totals stay index-only. The indexes are rebuilt (a few minutes on PostgreSQL for
ten million games, as in 0010).

Revision ID: 0018
Revises: 0017
Create Date: 2026-12-05
"""

from collections.abc import Sequence

from alembic import op

revision: str = "0018"
down_revision: str | None = "0017"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# name: the columns before `termination`
INDEXES = {
    "ix_games_black_started": ["black_id", "is_private", "started_at", "id"],
    "ix_games_white_started": ["white_id", "is_private", "started_at", "id", "black_id"],
    "ix_games_black_totals": ["black_id", "is_private", "variant", "status", "result", "started_at"],
    "ix_games_white_totals": [
        "white_id",
        "is_private",
        "variant",
        "status",
        "result",
        "started_at",
        "black_id",
    ],
    "ix_games_variant_result": ["variant", "result", "is_private", "started_at", "id"],
    "ix_games_started": ["is_private", "started_at", "id"],
}


def upgrade() -> None:
    for name, columns in INDEXES.items():
        op.drop_index(name, table_name="games")
        op.create_index(name, "games", [*columns, "termination"])


def downgrade() -> None:
    for name, columns in INDEXES.items():
        op.drop_index(name, table_name="games")
        op.create_index(name, "games", columns)
