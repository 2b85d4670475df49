"""Ratings: `ratings` holds each player's Glicko-2 rating per variant and time-control
category; `rating_changes` what each rated game did to each player's rating (at most once per
game and player: its primary key), which is also the rating history.

Revision ID: 0006
Revises: 0005
Create Date: 2026-12-01
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0006"
down_revision: str | None = "0005"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

BigId = sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def upgrade() -> None:
    op.create_table(
        "ratings",
        sa.Column("user_id", BigId, nullable=False),
        sa.Column("variant", sa.String(length=16), nullable=False),
        sa.Column("category", sa.String(length=16), nullable=False),
        sa.Column("rating", sa.Float(), nullable=False),
        sa.Column("rd", sa.Float(), nullable=False),
        sa.Column("volatility", sa.Float(), nullable=False),
        sa.Column("games", sa.Integer(), nullable=False),
        sa.Column("last_game_at", sa.DateTime(timezone=True), nullable=True),
        sa.ForeignKeyConstraint(
            ["user_id"], ["users.id"], name=op.f("fk_ratings_user_id_users"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("user_id", "variant", "category", name=op.f("pk_ratings")),
    )
    op.create_index(
        "ix_ratings_leaderboard",
        "ratings",
        ["variant", "category", "rating"],
        postgresql_where=sa.text("rd <= 75"),
        sqlite_where=sa.text("rd <= 75"),
    )
    op.create_table(
        "rating_changes",
        sa.Column("game_id", BigId, nullable=False),
        sa.Column("user_id", BigId, nullable=False),
        sa.Column("variant", sa.String(length=16), nullable=False),
        sa.Column("category", sa.String(length=16), nullable=False),
        sa.Column("rating_before", sa.Float(), nullable=False),
        sa.Column("rd_before", sa.Float(), nullable=False),
        sa.Column("rating_after", sa.Float(), nullable=False),
        sa.Column("rd_after", sa.Float(), nullable=False),
        sa.Column("volatility_after", sa.Float(), nullable=False),
        sa.Column("at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["game_id"],
            ["games.id"],
            name=op.f("fk_rating_changes_game_id_games"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["user_id"],
            ["users.id"],
            name=op.f("fk_rating_changes_user_id_users"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("game_id", "user_id", name=op.f("pk_rating_changes")),
    )
    op.create_index("ix_rating_changes_user_at", "rating_changes", ["user_id", "at"])


def downgrade() -> None:
    op.drop_index("ix_rating_changes_user_at", table_name="rating_changes")
    op.drop_table("rating_changes")
    op.drop_index("ix_ratings_leaderboard", table_name="ratings")
    op.drop_table("ratings")
