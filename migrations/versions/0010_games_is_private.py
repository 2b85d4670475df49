"""A game carries whether it was played at a private table (`games.is_private`), and the
archive's keyset indexes hold it, so that who may list a game is a condition on the game's
own row: a listing for someone who is not one of its players asks for `is_private = false`,
and each index serves the public games (and, separately, the private ones) as one range in
start order. The condition it replaces, "no private table holds this game" (a `NOT EXISTS`
on `tables`), was estimated at one row by PostgreSQL, which then gave up the index scans.

The column is filled from the tables for the games already stored; the four indexes are
rebuilt, and two added for a player's totals (a few minutes on PostgreSQL for ten million games).

Revision ID: 0010
Revises: 0009
Create Date: 2026-12-05
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0010"
down_revision: str | None = "0009"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

INDEXES = {
    # name: (columns before, columns after)
    "ix_games_black_started": (
        ["black_id", "started_at", "id"],
        ["black_id", "is_private", "started_at", "id"],
    ),
    "ix_games_white_started": (
        ["white_id", "started_at", "id", "black_id"],
        ["white_id", "is_private", "started_at", "id", "black_id"],
    ),
    "ix_games_variant_result": (
        ["variant", "result"],
        ["variant", "result", "is_private", "started_at", "id"],
    ),
    "ix_games_started": (["started_at", "id"], ["is_private", "started_at", "id"]),
}
# New: a player's totals per variant and result, read from the index alone in group order.
TOTALS = {
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
}


def upgrade() -> None:
    op.add_column(
        "games",
        sa.Column("is_private", sa.Boolean(), nullable=False, server_default=sa.false()),
    )
    op.execute(
        "UPDATE games SET is_private = true WHERE table_id IN "
        "(SELECT id FROM tables WHERE is_private = true)"
    )
    with op.batch_alter_table("games") as table:
        for name in INDEXES:
            table.drop_index(name)
    with op.batch_alter_table("games") as table:
        for name, (_, after) in INDEXES.items():
            table.create_index(name, after)
        for name, columns in TOTALS.items():
            table.create_index(name, columns)


def downgrade() -> None:
    with op.batch_alter_table("games") as table:
        for name in [*INDEXES, *TOTALS]:
            table.drop_index(name)
    with op.batch_alter_table("games") as table:
        for name, (before, _) in INDEXES.items():
            table.create_index(name, before)
        table.drop_column("is_private")
