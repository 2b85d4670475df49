"""Challenges, quick-pairing seeks and bot accounts: `challenges` holds each challenge of one
player by another until it is answered or expires; `seeks` the players waiting in a pairing
pool (one row per player); `users.is_bot` marks accounts upgraded for the bot API.

Revision ID: 0008
Revises: 0007
Create Date: 2026-12-01
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0008"
down_revision: str | None = "0007"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

BigId = sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def upgrade() -> None:
    op.add_column(
        "users",
        sa.Column("is_bot", sa.Boolean(), nullable=False, server_default=sa.false()),
    )
    op.create_table(
        "challenges",
        sa.Column("id", BigId, nullable=False),
        sa.Column("challenger_id", BigId, nullable=False),
        sa.Column("dest_id", BigId, nullable=False),
        sa.Column("variant", sa.String(length=16), nullable=False),
        sa.Column("clock_base_s", sa.Integer(), nullable=True),
        sa.Column("clock_increment_s", sa.Integer(), nullable=False),
        sa.Column("colour", sa.String(length=8), nullable=False),
        sa.Column("rated", sa.Boolean(), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("decline_reason", sa.String(length=40), nullable=True),
        sa.Column("game_id", BigId, nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("expires_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["challenger_id"],
            ["users.id"],
            name=op.f("fk_challenges_challenger_id_users"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["dest_id"], ["users.id"], name=op.f("fk_challenges_dest_id_users"), ondelete="CASCADE"
        ),
        sa.ForeignKeyConstraint(
            ["game_id"], ["games.id"], name=op.f("fk_challenges_game_id_games"), ondelete="SET NULL"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_challenges")),
    )
    op.create_index("ix_challenges_dest_status", "challenges", ["dest_id", "status"])
    op.create_index("ix_challenges_challenger_status", "challenges", ["challenger_id", "status"])
    op.create_table(
        "seeks",
        sa.Column("user_id", BigId, nullable=False),
        sa.Column("pool", sa.String(length=24), nullable=False),
        sa.Column("rated", sa.Boolean(), nullable=False),
        sa.Column("rating", sa.Float(), nullable=False),
        sa.Column("instance", sa.String(length=32), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["user_id"], ["users.id"], name=op.f("fk_seeks_user_id_users"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("user_id", name=op.f("pk_seeks")),
    )
    op.create_index("ix_seeks_pool", "seeks", ["pool", "created_at"])


def downgrade() -> None:
    op.drop_index("ix_seeks_pool", table_name="seeks")
    op.drop_table("seeks")
    op.drop_index("ix_challenges_challenger_status", table_name="challenges")
    op.drop_index("ix_challenges_dest_status", table_name="challenges")
    op.drop_table("challenges")
    with op.batch_alter_table("users") as batch:
        batch.drop_column("is_bot")
