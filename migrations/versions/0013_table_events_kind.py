"""Each table event stores its type as data (`table_events.kind`), so that nothing matches
the event's JSON text to learn what it is (the chat history reads `kind = 'chat'`).

Revision ID: 0013
Revises: 0012
Create Date: 2026-12-05
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0013"
down_revision: str | None = "0012"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column("table_events", sa.Column("kind", sa.String(length=24), nullable=True))
    if op.get_bind().dialect.name == "postgresql":
        op.execute("UPDATE table_events SET kind = CAST(payload AS json) ->> 'type'")
    else:
        op.execute("UPDATE table_events SET kind = json_extract(payload, '$.type')")
    with op.batch_alter_table("table_events") as batch:
        batch.alter_column("kind", existing_type=sa.String(length=24), nullable=False)


def downgrade() -> None:
    with op.batch_alter_table("table_events") as batch:
        batch.drop_column("kind")
