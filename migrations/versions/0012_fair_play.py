"""Fair play: the addresses each registered account used (`account_addresses`: rated games
between accounts that shared one recently are casual) and the moderators' queue of accounts
whose rating rose sharply against few opponents (`rating_reviews`). Tables that were private
and rated become casual: a private table cannot be rated any more.

Revision ID: 0012
Revises: 0011
Create Date: 2026-12-05
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0012"
down_revision: str | None = "0011"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

BigId = sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def upgrade() -> None:
    op.create_table(
        "account_addresses",
        sa.Column("user_id", BigId, nullable=False),
        sa.Column("address", sa.String(length=64), nullable=False),
        sa.Column("first_seen", sa.DateTime(timezone=True), nullable=False),
        sa.Column("last_seen", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["user_id"],
            ["users.id"],
            name=op.f("fk_account_addresses_user_id_users"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("user_id", "address", name=op.f("pk_account_addresses")),
    )
    op.create_index(
        "ix_account_addresses_address", "account_addresses", ["address", "last_seen"]
    )
    op.create_table(
        "rating_reviews",
        sa.Column("id", BigId, nullable=False),
        sa.Column("user_id", BigId, nullable=False),
        sa.Column("variant", sa.String(length=16), nullable=False),
        sa.Column("category", sa.String(length=16), nullable=False),
        sa.Column("reason", sa.String(length=200), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("resolved_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("resolved_by", BigId, nullable=True),
        sa.ForeignKeyConstraint(
            ["user_id"], ["users.id"], name=op.f("fk_rating_reviews_user_id_users"), ondelete="CASCADE"
        ),
        sa.ForeignKeyConstraint(
            ["resolved_by"],
            ["users.id"],
            name=op.f("fk_rating_reviews_resolved_by_users"),
            ondelete="SET NULL",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_rating_reviews")),
    )
    op.create_index(op.f("ix_rating_reviews_user_id"), "rating_reviews", ["user_id"])
    op.execute("UPDATE tables SET rated = false WHERE is_private = true")


def downgrade() -> None:
    op.drop_index(op.f("ix_rating_reviews_user_id"), table_name="rating_reviews")
    op.drop_table("rating_reviews")
    op.drop_index("ix_account_addresses_address", table_name="account_addresses")
    op.drop_table("account_addresses")
