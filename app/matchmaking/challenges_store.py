"""Storage of challenges: one player's offer of a game to another, until answered or expired.

An answer is a write conditional on the challenge still waiting (`status = 'created'` and not
expired), so of two answers racing on two processes one changes the row and the other finds
nothing to change.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import or_, select, update
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import aliased

from app.db.models import Challenge, User
from app.live.log_store import Executor

CREATED = "created"


async def create(session: AsyncSession, **values: Any) -> Challenge:
    challenge = Challenge(status=CREATED, **values)
    session.add(challenge)
    await session.flush()
    return challenge


async def get(db: Executor, challenge_id: int) -> tuple[Challenge, str, str] | None:
    """The challenge with its challenger's and challenged player's names."""
    challenger, dest = aliased(User), aliased(User)
    row = (
        await db.execute(
            select(Challenge, challenger.name, dest.name)
            .join(challenger, challenger.id == Challenge.challenger_id)
            .join(dest, dest.id == Challenge.dest_id)
            .where(Challenge.id == challenge_id)
        )
    ).first()
    return None if row is None else (row[0], row[1], row[2])


async def answer(
    db: Executor,
    challenge_id: int,
    now: datetime,
    status: str,
    *,
    reason: str | None = None,
    game_id: int | None = None,
) -> bool:
    """Move a waiting challenge to `status`; False if it no longer waits (answered,
    cancelled or expired)."""
    result = await db.execute(
        update(Challenge)
        .where(
            Challenge.id == challenge_id,
            Challenge.status == CREATED,
            Challenge.expires_at > now,
        )
        .values(status=status, decline_reason=reason, game_id=game_id)
    )
    return bool(result.rowcount)  # type: ignore[attr-defined]


async def waiting_for(
    db: Executor, user_id: int, now: datetime
) -> list[tuple[Challenge, str, str]]:
    """The challenges made by or to `user_id` that still wait for an answer, oldest first."""
    challenger, dest = aliased(User), aliased(User)
    rows = await db.execute(
        select(Challenge, challenger.name, dest.name)
        .join(challenger, challenger.id == Challenge.challenger_id)
        .join(dest, dest.id == Challenge.dest_id)
        .where(
            or_(Challenge.dest_id == user_id, Challenge.challenger_id == user_id),
            Challenge.status == CREATED,
            Challenge.expires_at > now,
        )
        .order_by(Challenge.id)
    )
    return [(row[0], row[1], row[2]) for row in rows.all()]


async def count_waiting_by(db: Executor, user_id: int, now: datetime) -> int:
    """How many waiting challenges `user_id` has made."""
    rows = await db.scalars(
        select(Challenge.id).where(
            Challenge.challenger_id == user_id,
            Challenge.status == CREATED,
            Challenge.expires_at > now,
        )
    )
    return len(rows.all())
