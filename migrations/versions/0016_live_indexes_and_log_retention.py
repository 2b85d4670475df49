"""Live play at production size: every query of live play and of the periodic work served by
an index (a table's latest game, names by their lower case, the banned accounts, the bots, the
computer's levels, a table's chat lines), and the closed tables' logs pruned after a retention
period (`tables.log_pruned`, and the index of the logs still kept).

Revision ID: 0016
Revises: 0015
Create Date: 2026-12-05
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0016"
down_revision: str | None = "0015"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def _where(postgresql: str, sqlite: str) -> dict[str, sa.TextClause]:
    return {"postgresql_where": sa.text(postgresql), "sqlite_where": sa.text(sqlite)}


def upgrade() -> None:
    op.create_index("ix_games_table_latest", "games", ["table_id", "id"])
    op.drop_index("ix_games_table_id", table_name="games")
    op.create_index("ix_users_lower_name", "users", [sa.text("lower(name)")])
    op.create_index("ix_users_banned", "users", ["id"], **_where("banned IS true", "banned IS 1"))
    op.create_index("ix_users_bots", "users", ["name"], **_where("is_bot IS true", "is_bot IS 1"))
    op.create_index("ix_users_ai", "users", ["id"], **_where("kind = 'ai'", "kind = 'ai'"))
    op.create_index(
        "ix_table_events_chat",
        "table_events",
        ["table_id", "seq"],
        **_where("kind = 'chat'", "kind = 'chat'"),
    )
    op.add_column(
        "tables",
        sa.Column("log_pruned", sa.Boolean(), server_default=sa.false(), nullable=False),
    )
    op.create_index(
        "ix_tables_log_kept",
        "tables",
        ["closed_at"],
        **_where(
            "status = 'closed' AND log_pruned IS false", "status = 'closed' AND log_pruned IS 0"
        ),
    )


def downgrade() -> None:
    op.drop_index("ix_tables_log_kept", table_name="tables")
    with op.batch_alter_table("tables") as table:
        table.drop_column("log_pruned")
    op.drop_index("ix_table_events_chat", table_name="table_events")
    op.drop_index("ix_users_ai", table_name="users")
    op.drop_index("ix_users_bots", table_name="users")
    op.drop_index("ix_users_banned", table_name="users")
    op.drop_index("ix_users_lower_name", table_name="users")
    op.create_index("ix_games_table_id", "games", ["table_id"])
    op.drop_index("ix_games_table_latest", table_name="games")
