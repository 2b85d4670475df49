"""Mail given up (issue 45): `email_outbox.failed_at` marks a mail the worker tries no more (one
that cannot be sent, or tried `MAIL_MAX_ATTEMPTS` times), and the index of due mail leaves it
out.

Revision ID: 0024
Revises: 0023
Create Date: 2026-12-20
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0024"
down_revision: str | None = "0023"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def _due_index(where: str) -> None:
    op.drop_index("ix_email_outbox_due", table_name="email_outbox")
    op.create_index(
        "ix_email_outbox_due",
        "email_outbox",
        ["next_try_at"],
        unique=False,
        postgresql_where=sa.text(where),
        sqlite_where=sa.text(where),
    )


def upgrade() -> None:
    # Nullable: instant on PostgreSQL, whatever the outbox holds.
    op.add_column("email_outbox", sa.Column("failed_at", sa.DateTime(timezone=True)))
    _due_index("sent_at IS NULL AND failed_at IS NULL")


def downgrade() -> None:
    _due_index("sent_at IS NULL")
    op.drop_column("email_outbox", "failed_at")
