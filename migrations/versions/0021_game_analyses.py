"""Game analyses (issue 34): one per game, queued, run by a worker holding a lease, stored
once done with each ply's evaluation, best move, line and label.

Revision ID: 0021
Revises: 0020
Create Date: 2026-12-06
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0021"
down_revision: str | None = "0020"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

BigId = sa.BigInteger().with_variant(sa.Integer(), "sqlite")
WHEN = sa.DateTime(timezone=True)
WAITING = "status IN ('queued', 'running')"


def upgrade() -> None:
    op.create_table(
        "game_analyses",
        sa.Column("game_id", BigId, nullable=False),
        sa.Column("status", sa.String(8), nullable=False),
        sa.Column("requested_by", BigId, nullable=True),
        sa.Column("requested_at", WHEN, nullable=False),
        sa.Column("nodes", sa.Integer(), nullable=False),
        sa.Column("done", sa.Integer(), server_default=sa.text("0"), nullable=False),
        sa.Column("total", sa.Integer(), nullable=False),
        sa.Column("worker", sa.String(64), nullable=True),
        sa.Column("lease_until", WHEN, nullable=True),
        sa.Column("started_at", WHEN, nullable=True),
        sa.Column("finished_at", WHEN, nullable=True),
        sa.Column("start", sa.JSON(), nullable=True),
        sa.Column("plies", sa.JSON(), nullable=True),
        sa.Column("accuracy_black", sa.Float(), nullable=True),
        sa.Column("accuracy_white", sa.Float(), nullable=True),
        sa.Column("error", sa.String(200), nullable=True),
        sa.ForeignKeyConstraint(
            ["game_id"], ["games.id"], name=op.f("fk_game_analyses_game_id_games")
        ),
        sa.ForeignKeyConstraint(
            ["requested_by"], ["users.id"], name=op.f("fk_game_analyses_requested_by_users")
        ),
        sa.PrimaryKeyConstraint("game_id", name=op.f("pk_game_analyses")),
    )
    op.create_index(
        op.f("ix_game_analyses_requested_by"), "game_analyses", ["requested_by"], unique=False
    )
    op.create_index(
        "ix_game_analyses_waiting",
        "game_analyses",
        ["requested_at"],
        postgresql_where=sa.text(WAITING),
        sqlite_where=sa.text(WAITING),
    )


def downgrade() -> None:
    op.drop_index("ix_game_analyses_waiting", table_name="game_analyses")
    op.drop_index(op.f("ix_game_analyses_requested_by"), table_name="game_analyses")
    op.drop_table("game_analyses")
