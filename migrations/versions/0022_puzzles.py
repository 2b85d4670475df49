"""Puzzles (issue 34): the positions with their solution and rating, each player's puzzle
rating, and each player's first try at each puzzle.

Revision ID: 0022
Revises: 0021
Create Date: 2026-12-06
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0022"
down_revision: str | None = "0021"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

BigId = sa.BigInteger().with_variant(sa.Integer(), "sqlite")
WHEN = sa.DateTime(timezone=True)


def upgrade() -> None:
    op.create_table(
        "puzzles",
        sa.Column("id", BigId, nullable=False),
        sa.Column("key", sa.String(16), nullable=False),
        sa.Column("variant", sa.String(16), nullable=False),
        sa.Column("fen", sa.String(200), nullable=False),
        sa.Column("before_fen", sa.String(200), nullable=True),
        sa.Column("last_move", sa.String(80), nullable=True),
        sa.Column("moves", sa.JSON(), nullable=False),
        sa.Column("themes", sa.String(200), nullable=False),
        sa.Column("source", sa.String(200), nullable=False),
        sa.Column("rating", sa.Float(), nullable=False),
        sa.Column("rd", sa.Float(), nullable=False),
        sa.Column("volatility", sa.Float(), nullable=False),
        sa.Column("plays", sa.Integer(), server_default=sa.text("0"), nullable=False),
        sa.Column("wins", sa.Integer(), server_default=sa.text("0"), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_puzzles")),
        sa.UniqueConstraint("key", name=op.f("uq_puzzles_key")),
    )
    op.create_index("ix_puzzles_variant_rating", "puzzles", ["variant", "rating"], unique=False)
    op.create_table(
        "puzzle_players",
        sa.Column("user_id", BigId, nullable=False),
        sa.Column("rating", sa.Float(), nullable=False),
        sa.Column("rd", sa.Float(), nullable=False),
        sa.Column("volatility", sa.Float(), nullable=False),
        sa.Column("played", sa.Integer(), nullable=False),
        sa.Column("solved", sa.Integer(), nullable=False),
        sa.Column("last_at", WHEN, nullable=True),
        sa.ForeignKeyConstraint(
            ["user_id"], ["users.id"], name=op.f("fk_puzzle_players_user_id_users")
        ),
        sa.PrimaryKeyConstraint("user_id", name=op.f("pk_puzzle_players")),
    )
    op.create_table(
        "puzzle_rounds",
        sa.Column("user_id", BigId, nullable=False),
        sa.Column("puzzle_id", BigId, nullable=False),
        sa.Column("solved", sa.Boolean(), nullable=False),
        sa.Column("at", WHEN, nullable=False),
        sa.Column("rating_after", sa.Integer(), nullable=False),
        sa.Column("rating_diff", sa.Integer(), nullable=False),
        sa.ForeignKeyConstraint(
            ["puzzle_id"], ["puzzles.id"], name=op.f("fk_puzzle_rounds_puzzle_id_puzzles")
        ),
        sa.ForeignKeyConstraint(
            ["user_id"], ["users.id"], name=op.f("fk_puzzle_rounds_user_id_users")
        ),
        sa.PrimaryKeyConstraint("user_id", "puzzle_id", name=op.f("pk_puzzle_rounds")),
    )
    op.create_index("ix_puzzle_rounds_user_at", "puzzle_rounds", ["user_id", "at"], unique=False)


def downgrade() -> None:
    op.drop_index("ix_puzzle_rounds_user_at", table_name="puzzle_rounds")
    op.drop_table("puzzle_rounds")
    op.drop_table("puzzle_players")
    op.drop_index("ix_puzzles_variant_rating", table_name="puzzles")
    op.drop_table("puzzles")
