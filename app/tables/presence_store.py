"""Storage of who is connected: a `presence(instance, user_id)` row per user connected to a
server process, and the user's `last_seen_at` once they are connected nowhere.

A user's presence changes lock the user's row first (`lock_user`), so that changes made by
different processes for one user take turns. Which processes are live is the heartbeats'
business (`app.live.heartbeat`); the reads here take the live instances as an argument.
"""

from __future__ import annotations

from collections.abc import Collection
from datetime import datetime
from typing import Any

from sqlalchemy import delete, insert, or_, select, text, update

from app.db.models import GameTable, Presence, Rating, User
from app.live.log_store import Executor
from app.play.tables_store import rating_in_table_category
from app.status import TableStatus


async def lock_user(db: Executor, user_id: int) -> None:
    """Serialise the user's presence changes: lock the user's row until the transaction ends.
    `FOR NO KEY UPDATE`: it still excludes another presence change, but not the key-share lock
    a row referring to the user takes (a game's `rating_changes`, written by a transaction that
    already holds the game's row, which a presence change then locks: with a full lock the two
    would deadlock)."""
    await db.execute(select(User.id).where(User.id == user_id).with_for_update(key_share=True))


async def add(db: Executor, instance: str, user_id: int, since: datetime) -> None:
    """Note the user as connected to `instance` (if not already)."""
    found = await db.scalar(
        select(Presence.user_id).where(Presence.instance == instance, Presence.user_id == user_id)
    )
    if found is None:
        await db.execute(insert(Presence).values(instance=instance, user_id=user_id, since=since))


async def users_at(db: Executor, instance: str) -> set[int]:
    """The users noted as connected to `instance`."""
    rows = await db.scalars(select(Presence.user_id).where(Presence.instance == instance))
    return set(rows.all())


async def remove(db: Executor, instance: str, user_id: int) -> None:
    await db.execute(
        delete(Presence).where(Presence.instance == instance, Presence.user_id == user_id)
    )


async def connected_to_any(db: Executor, user_id: int, instances: Collection[str]) -> bool:
    """Whether the user has a row of one of these instances."""
    found = await db.scalar(
        select(Presence.instance)
        .where(Presence.user_id == user_id, Presence.instance.in_(instances))
        .limit(1)
    )
    return found is not None


async def online(db: Executor, user_ids: Collection[int], instances: Collection[str]) -> set[int]:
    """Those of these users with a row of one of these instances."""
    rows = await db.scalars(
        select(Presence.user_id).where(
            Presence.user_id.in_(user_ids), Presence.instance.in_(instances)
        )
    )
    return set(rows.all())


async def set_last_seen(db: Executor, user_id: int, at: datetime) -> None:
    await db.execute(update(User).where(User.id == user_id).values(last_seen_at=at))


async def last_seen(
    db: Executor, user_ids: Collection[int]
) -> dict[int, tuple[str, datetime | None]]:
    """Each of these users' name and when they were last connected (None: never gone)."""
    rows = await db.execute(
        select(User.id, User.name, User.last_seen_at).where(User.id.in_(user_ids))
    )
    return {user_id: (name, seen) for user_id, name, seen in rows.all()}


# The distinct instances of `presence`, one index probe each (PostgreSQL has no skip scan: a
# DISTINCT read every row, one per connected user, every second on every process).
_INSTANCES = text(
    """
    WITH RECURSIVE found(instance) AS (
        SELECT min(instance) FROM presence
        UNION ALL
        SELECT (SELECT min(p.instance) FROM presence AS p WHERE p.instance > found.instance)
        FROM found WHERE found.instance IS NOT NULL
    )
    SELECT instance FROM found WHERE instance IS NOT NULL
    """
)


async def instances(db: Executor) -> set[str]:
    """Every instance that has a presence row."""
    return set((await db.scalars(_INSTANCES)).all())


async def users_of(db: Executor, instances: Collection[str]) -> list[tuple[str, int]]:
    """(instance, user) for every presence row of these instances."""
    rows = await db.execute(
        select(Presence.instance, Presence.user_id).where(Presence.instance.in_(instances))
    )
    return [(instance, user_id) for instance, user_id in rows.all()]


async def banned_at(db: Executor, instance: str) -> list[tuple[int, str]]:
    """Users connected to `instance` who are banned now, with the reason."""
    rows = await db.execute(
        select(User.id, User.ban_reason)
        .join(Presence, Presence.user_id == User.id)
        .where(Presence.instance == instance, User.banned.is_(True))
    )
    return [(user_id, reason or "") for user_id, reason in rows.all()]


async def seated_in_room(
    db: Executor, room_id: int, instances: Collection[str]
) -> list[tuple[int, str, int | None, tuple[Any, ...]]]:
    """(user, name, table, rating) for each player seated at a table of the room that is not
    closed and connected to one of these instances, by name: the table is the lowest-numbered
    of their public ones there (None when they sit at private tables only: those are not
    shown to others), and the rating is the account's kind and its rating row in that table's
    variant and category (rating, rd, volatility, last_game_at; null without one)."""
    seat = or_(GameTable.owner_id == User.id, GameTable.guest_id == User.id)
    rows = await db.execute(
        select(
            User.id,
            User.name,
            GameTable.id,
            GameTable.is_private,
            User.kind,
            Rating.rating,
            Rating.rd,
            Rating.volatility,
            Rating.last_game_at,
        )
        .join(GameTable, seat)
        .outerjoin(Rating, rating_in_table_category(Rating, User))
        .where(
            GameTable.room_id == room_id,
            GameTable.status != TableStatus.CLOSED,
            select(Presence.user_id)
            .where(Presence.user_id == User.id, Presence.instance.in_(instances))
            .exists(),
        )
        .order_by(User.name, User.id, GameTable.is_private, GameTable.id)
    )
    seated: dict[int, tuple[int, str, int | None, tuple[Any, ...]]] = {}
    for user_id, name, table_id, private, *rating in rows.all():
        seated.setdefault(user_id, (user_id, name, None if private else table_id, tuple(rating)))
    return list(seated.values())
