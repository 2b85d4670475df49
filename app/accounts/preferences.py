"""An account's preferences, kept on the account: whether takebacks may be asked in its games
(lichess's "Takebacks: never" when off). The takeback rule (`takebacks`) and the tables the
account opens (`table_opening`) read it."""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy.ext.asyncio import AsyncSession

from app.accounts import store as accounts
from app.db.models import User
from app.live.log_store import Executor


@dataclass(frozen=True, slots=True)
class Preferences:
    """What an account allows in its games."""

    takebacks: bool = True  # off: nobody asks it to take a move back, nor does it ask


def of(user: User) -> Preferences:
    return Preferences(takebacks=user.takebacks)


async def update(
    session: AsyncSession, user: User, *, takebacks: bool | None = None
) -> Preferences:
    """Change what is given (None: unchanged) and commit; the account's preferences now."""
    now = Preferences(takebacks=user.takebacks if takebacks is None else takebacks)
    if takebacks is not None:
        await accounts.set_takebacks(session, user.id, takebacks)
        await session.commit()
    return now


async def allows_takebacks(db: Executor, user_id: int) -> bool:
    """Whether the account lets takebacks be asked in its games."""
    return user_id not in await accounts.takeback_refusers(db, [user_id])
