"""Storage of tournaments: the events, their players, their games and the points won without a
game.

The director (`app.tournaments.director`) steps a tournament inside a transaction that
holds its row (`lock`: `FOR UPDATE SKIP LOCKED` on PostgreSQL), so however many server
processes run, one at a time pairs it, and a process that finds it held leaves it to the
other. On SQLite, one writer at a time does the same. It reads only the tournaments due
(`due`: `next_step_at` passed), and one whose pairing it computes outside the transaction it
leaves due a while later, so that the others leave it alone meanwhile.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import delete, func, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from app.db.models import Game, Tournament, TournamentPlayer, TournamentPoints, User
from app.live.log_store import Executor
from app.status import GameStatus

CREATED, STARTED, FINISHED, CANCELLED = "created", "started", "finished", "cancelled"


async def create(session: AsyncSession, **values: Any) -> Tournament:
    row = Tournament(**values)
    session.add(row)
    await session.flush()
    return row


async def get(session: AsyncSession, tournament_id: int) -> Tournament | None:
    return await session.get(Tournament, tournament_id)


async def lock(
    session: AsyncSession, tournament_id: int, *, wait: bool = True
) -> Tournament | None:
    """The tournament's row, held until the transaction ends; None if there is none or, with
    `wait` false, another transaction holds it (PostgreSQL: SKIP LOCKED)."""
    query = (
        select(Tournament)
        .where(Tournament.id == tournament_id)
        .with_for_update(skip_locked=not wait)
        .execution_options(populate_existing=True)
    )
    return (await session.scalars(query)).one_or_none()


async def due(db: Executor, now: datetime) -> list[int]:
    """The tournaments to step: those not over whose next step is due (`next_step_at`)."""
    query = (
        select(Tournament.id)
        .where(Tournament.status.in_([CREATED, STARTED]), Tournament.next_step_at <= now)
        .order_by(Tournament.next_step_at, Tournament.id)
    )
    return list((await db.scalars(query)).all())


async def to_remind(db: Executor, until: datetime) -> list[int]:
    """The tournaments starting by `until` whose players were not reminded."""
    query = select(Tournament.id).where(
        Tournament.status == CREATED,
        Tournament.starts_at <= until,
        Tournament.reminded.is_(False),
    )
    return list((await db.scalars(query)).all())


async def listing(
    session: AsyncSession,
    statuses: Sequence[str],
    limit: int,
    newest_first: bool,
    most_players_first: bool = False,
) -> list[Tournament]:
    """The first `limit` tournaments in these statuses, by start (`most_players_first`: by
    their count of players first, so that empty ones never hide one being played)."""
    order = [Tournament.starts_at.desc() if newest_first else Tournament.starts_at, Tournament.id]
    if most_players_first:
        count = (
            select(func.count())
            .where(TournamentPlayer.tournament_id == Tournament.id)
            .scalar_subquery()
        )
        order.insert(0, count.desc())
    query = select(Tournament).where(Tournament.status.in_(statuses)).order_by(*order).limit(limit)
    return list((await session.scalars(query)).all())


async def count_created_by(db: Executor, user_id: int, since: datetime) -> tuple[int, int]:
    """The user's tournaments not yet over, and how many they created since then."""
    query = select(
        func.count().filter(Tournament.status.in_([CREATED, STARTED])),
        func.count().filter(Tournament.created_at >= since),
    ).where(Tournament.created_by == user_id)
    row = (await db.execute(query)).one()
    return int(row[0]), int(row[1])


async def players(db: Executor, tournament_id: int) -> list[Any]:
    """Who joined: (user id, name, rating at joining, active, waiting since, last opponent,
    joined at), in the order they joined."""
    query = (
        select(
            TournamentPlayer.user_id,
            User.name,
            TournamentPlayer.rating,
            TournamentPlayer.active,
            TournamentPlayer.waiting_since,
            TournamentPlayer.last_opponent_id,
            TournamentPlayer.joined_at,
        )
        .join(User, User.id == TournamentPlayer.user_id)
        .where(TournamentPlayer.tournament_id == tournament_id)
        .order_by(TournamentPlayer.joined_at, TournamentPlayer.user_id)
    )
    return list((await db.execute(query)).all())


async def player(
    session: AsyncSession, tournament_id: int, user_id: int
) -> TournamentPlayer | None:
    return await session.get(TournamentPlayer, (tournament_id, user_id))


async def count_players(db: Executor, tournament_ids: Sequence[int]) -> dict[int, int]:
    """How many players each of these tournaments has (one query)."""
    if not tournament_ids:
        return {}
    query = (
        select(TournamentPlayer.tournament_id, func.count())
        .where(TournamentPlayer.tournament_id.in_(tournament_ids))
        .group_by(TournamentPlayer.tournament_id)
    )
    counts = {tournament_id: int(n) for tournament_id, n in (await db.execute(query)).all()}
    return {tournament_id: counts.get(tournament_id, 0) for tournament_id in tournament_ids}


async def pause(db: Executor, tournament_id: int, user_id: int) -> None:
    """An arena player set aside (as a withdrawal): not paired until they join again."""
    await db.execute(
        update(TournamentPlayer)
        .where(TournamentPlayer.tournament_id == tournament_id, TournamentPlayer.user_id == user_id)
        .values(active=False, waiting_since=None)
    )


async def any_playing(db: Executor, tournament_id: int) -> bool:
    """Whether one of the tournament's games is in progress."""
    query = (
        select(Game.id)
        .where(Game.tournament_id == tournament_id, Game.status == GameStatus.PLAYING)
        .limit(1)
    )
    return (await db.execute(query)).first() is not None


async def ended_games(db: Executor, tournament_id: int) -> int:
    """How many of the tournament's games have ended."""
    query = select(func.count()).where(
        Game.tournament_id == tournament_id, Game.status != GameStatus.PLAYING
    )
    return int((await db.execute(query)).scalar_one())


async def names(db: Executor, user_ids: Sequence[int]) -> dict[int, str]:
    """The names of these users."""
    if not user_ids:
        return {}
    query = select(User.id, User.name).where(User.id.in_(set(user_ids)))
    return {user_id: name for user_id, name in (await db.execute(query)).all()}


async def set_waiting(
    db: Executor, tournament_id: int, user_ids: Sequence[int], since: datetime | None
) -> None:
    if not user_ids:
        return
    await db.execute(
        update(TournamentPlayer)
        .where(
            TournamentPlayer.tournament_id == tournament_id,
            TournamentPlayer.user_id.in_(user_ids),
        )
        .values(waiting_since=since)
    )


async def paired(db: Executor, tournament_id: int, one: int, two: int) -> None:
    """Two arena players paired: neither waits, each is the other's last opponent."""
    for user_id, opponent in ((one, two), (two, one)):
        await db.execute(
            update(TournamentPlayer)
            .where(
                TournamentPlayer.tournament_id == tournament_id,
                TournamentPlayer.user_id == user_id,
            )
            .values(waiting_since=None, last_opponent_id=opponent)
        )


def _game_columns() -> tuple[Any, ...]:
    return (
        Game.id,
        Game.black_id,
        Game.white_id,
        Game.status,
        Game.result,
        Game.termination,
        Game.ply_count,
        Game.tournament_round,
        Game.match_game,
        Game.opening,
        Game.black_berserk,
        Game.white_berserk,
        Game.table_id,
        Game.started_at,
        Game.finished_at,
    )


async def games(db: Executor, tournament_id: int, round_no: int | None = None) -> list[Any]:
    """The tournament's games (of round `round_no` only, if given), in the order they started
    (`_game_columns`)."""
    query = (
        select(*_game_columns())
        .where(Game.tournament_id == tournament_id)
        .order_by(Game.started_at, Game.id)
    )
    if round_no is not None:
        query = query.where(Game.tournament_round == round_no)
    return list((await db.execute(query)).all())


async def any_game(db: Executor, tournament_id: int) -> bool:
    """Whether the tournament has a game yet."""
    query = select(Game.id).where(Game.tournament_id == tournament_id).limit(1)
    return (await db.execute(query)).first() is not None


async def playing(db: Executor, tournament_id: int) -> list[Any]:
    """Its games in progress (`_game_columns`)."""
    query = select(*_game_columns()).where(
        Game.tournament_id == tournament_id, Game.status == GameStatus.PLAYING
    )
    return list((await db.execute(query)).all())


async def points(db: Executor, tournament_id: int) -> list[Any]:
    """Points won without a game: (user id, round, half points, reason)."""
    query = (
        select(
            TournamentPoints.user_id,
            TournamentPoints.round,
            TournamentPoints.half_points,
            TournamentPoints.reason,
        )
        .where(TournamentPoints.tournament_id == tournament_id)
        .order_by(TournamentPoints.round, TournamentPoints.user_id)
    )
    return list((await db.execute(query)).all())


async def add_points(
    session: AsyncSession,
    tournament_id: int,
    user_id: int,
    round_no: int,
    half_points: int,
    reason: str,
) -> None:
    await session.execute(
        delete(TournamentPoints).where(
            TournamentPoints.tournament_id == tournament_id,
            TournamentPoints.user_id == user_id,
            TournamentPoints.round == round_no,
        )
    )
    session.add(
        TournamentPoints(
            tournament_id=tournament_id,
            user_id=user_id,
            round=round_no,
            half_points=half_points,
            reason=reason,
        )
    )
    await session.flush()
