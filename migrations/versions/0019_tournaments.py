"""Tournaments (issue 33): arenas, Swiss events and round robins. `tournaments` holds each
event's settings and where it has got to, `tournament_players` who joined (and, in an arena,
who waits to be paired), `tournament_points` the points won without a game (byes, rounds
missed by a late joiner). A tournament's games are ordinary games that name it, with their
round, their ballot opening and game of the match, and whether a player went berserk.

Revision ID: 0019
Revises: 0018
Create Date: 2026-12-06
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0019"
down_revision: str | None = "0018"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

BigId = sa.BigInteger().with_variant(sa.Integer(), "sqlite")
WHEN = sa.DateTime(timezone=True)
LIVE = "status IN ('created', 'started')"


def upgrade() -> None:
    op.create_table(
        "tournaments",
        sa.Column("id", BigId, nullable=False),
        sa.Column("kind", sa.String(16), nullable=False),
        sa.Column("name", sa.String(80), nullable=False),
        sa.Column("variant", sa.String(16), nullable=False),
        sa.Column("clock_base_s", sa.Integer(), nullable=False),
        sa.Column("clock_increment_s", sa.Integer(), nullable=False),
        sa.Column("rated", sa.Boolean(), nullable=False),
        sa.Column("ballot", sa.String(8), nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("starts_at", WHEN, nullable=False),
        sa.Column("minutes", sa.Integer(), nullable=True),
        sa.Column("rounds", sa.Integer(), nullable=True),
        sa.Column("double", sa.Boolean(), nullable=False),
        sa.Column("max_players", sa.Integer(), nullable=True),
        sa.Column("draw_after_move", sa.Integer(), server_default=sa.text("0"), nullable=False),
        sa.Column("round", sa.Integer(), server_default=sa.text("0"), nullable=False),
        sa.Column("every_minutes", sa.Integer(), nullable=True),
        sa.Column("created_by", BigId, nullable=True),
        sa.Column("created_at", WHEN, nullable=False),
        sa.Column("started_at", WHEN, nullable=True),
        sa.Column("finished_at", WHEN, nullable=True),
        sa.ForeignKeyConstraint(
            ["created_by"], ["users.id"], name=op.f("fk_tournaments_created_by_users")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_tournaments")),
    )
    op.create_index(
        "ix_tournaments_live",
        "tournaments",
        ["starts_at"],
        postgresql_where=sa.text(LIVE),
        sqlite_where=sa.text(LIVE),
    )
    op.create_index("ix_tournaments_status_starts", "tournaments", ["status", "starts_at"])
    op.create_table(
        "tournament_players",
        sa.Column("tournament_id", BigId, nullable=False),
        sa.Column("user_id", BigId, nullable=False),
        sa.Column("joined_at", WHEN, nullable=False),
        sa.Column("rating", sa.Integer(), nullable=False),
        sa.Column("active", sa.Boolean(), nullable=False),
        sa.Column("waiting_since", WHEN, nullable=True),
        sa.Column("last_opponent_id", sa.Integer(), nullable=True),
        sa.ForeignKeyConstraint(
            ["tournament_id"],
            ["tournaments.id"],
            name=op.f("fk_tournament_players_tournament_id_tournaments"),
        ),
        sa.ForeignKeyConstraint(
            ["user_id"], ["users.id"], name=op.f("fk_tournament_players_user_id_users")
        ),
        sa.PrimaryKeyConstraint("tournament_id", "user_id", name=op.f("pk_tournament_players")),
    )
    op.create_index(
        op.f("ix_tournament_players_user_id"), "tournament_players", ["user_id"], unique=False
    )
    op.create_table(
        "tournament_points",
        sa.Column("tournament_id", BigId, nullable=False),
        sa.Column("user_id", BigId, nullable=False),
        sa.Column("round", sa.Integer(), nullable=False),
        sa.Column("half_points", sa.Integer(), nullable=False),
        sa.Column("reason", sa.String(8), nullable=False),
        sa.ForeignKeyConstraint(
            ["tournament_id"],
            ["tournaments.id"],
            name=op.f("fk_tournament_points_tournament_id_tournaments"),
        ),
        sa.ForeignKeyConstraint(
            ["user_id"], ["users.id"], name=op.f("fk_tournament_points_user_id_users")
        ),
        sa.PrimaryKeyConstraint(
            "tournament_id", "user_id", "round", name=op.f("pk_tournament_points")
        ),
    )
    if op.get_bind().dialect.name == "sqlite":
        # SQLite adds a column with its foreign key in one statement (alembic would need to
        # copy the whole table to add the constraint after).
        op.execute(
            "ALTER TABLE games ADD COLUMN tournament_id INTEGER "
            "CONSTRAINT fk_games_tournament_id_tournaments REFERENCES tournaments (id)"
        )
    else:
        op.add_column("games", sa.Column("tournament_id", BigId, nullable=True))
        op.create_foreign_key(
            op.f("fk_games_tournament_id_tournaments"),
            "games",
            "tournaments",
            ["tournament_id"],
            ["id"],
        )
    op.add_column("games", sa.Column("tournament_round", sa.Integer(), nullable=True))
    op.add_column("games", sa.Column("opening", sa.String(40), nullable=True))
    op.add_column("games", sa.Column("match_game", sa.Integer(), nullable=True))
    for colour in ("black", "white"):
        op.add_column(
            "games",
            sa.Column(f"{colour}_berserk", sa.Boolean(), server_default=sa.false(), nullable=False),
        )
    op.create_index(
        "ix_games_tournament",
        "games",
        ["tournament_id", "status"],
        postgresql_where=sa.text("tournament_id IS NOT NULL"),
        sqlite_where=sa.text("tournament_id IS NOT NULL"),
    )


def downgrade() -> None:
    op.drop_index("ix_games_tournament", table_name="games")
    for name in (
        "white_berserk",
        "black_berserk",
        "match_game",
        "opening",
        "tournament_round",
    ):
        op.drop_column("games", name)
    if op.get_bind().dialect.name != "sqlite":
        op.drop_constraint(op.f("fk_games_tournament_id_tournaments"), "games", type_="foreignkey")
    op.drop_column("games", "tournament_id")
    op.drop_table("tournament_points")
    op.drop_index(op.f("ix_tournament_players_user_id"), table_name="tournament_players")
    op.drop_table("tournament_players")
    op.drop_index("ix_tournaments_status_starts", table_name="tournaments")
    op.drop_index("ix_tournaments_live", table_name="tournaments")
    op.drop_table("tournaments")
