"""A move's update of its game's row touches no index: `ix_games_deadline_at` goes (the sweep
finds due games among those in progress through `ix_games_status`), and on PostgreSQL the
`games` table leaves a tenth of each page free, so that the new version of a row fits beside
the old one (a heap-only tuple update).

With the deadline indexed, every move wrote a new entry into each of the table's nine indexes;
without it, the rows of games in progress are updated in place on their page.

Revision ID: 0009
Revises: 0008
Create Date: 2026-12-04
"""

from collections.abc import Sequence

from alembic import op

revision: str = "0009"
down_revision: str | None = "0008"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("games") as table:
        table.drop_index("ix_games_deadline_at")
    if op.get_bind().dialect.name == "postgresql":
        op.execute("ALTER TABLE games SET (fillfactor = 90)")


def downgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        op.execute("ALTER TABLE games RESET (fillfactor)")
    with op.batch_alter_table("games") as table:
        table.create_index("ix_games_deadline_at", ["deadline_at"])
