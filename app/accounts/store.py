"""Storage of accounts: users, their bearer tokens (by SHA-256 only) and bans.

Every query on `users` and `auth_tokens` outside live play is here; the caller's session is the
transaction, and the caller commits.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import delete, func, or_, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from app.db.models import AuthToken, Game, Presence, User
from app.live.log_store import Executor
from app.rules import Termination
from app.status import UserKind

# A game the archive lists, and an account's count of games counts: every game but one aborted
# before its second move (`app.archive.store` reads by it too).
LISTED = Game.termination.is_distinct_from(Termination.ABORTED)


async def find_user(session: AsyncSession, name: str) -> User | None:
    """The account with this name, ignoring case (names are unique regardless of case).

    The exact spelling is looked up first: it uses the unique index, and is what clients send.
    """
    user = await session.scalar(select(User).where(User.name == name))
    if user is None:
        result = await session.scalars(select(User).where(func.lower(User.name) == name.lower()))
        user = result.first()
    return user


async def add_user(session: AsyncSession, **values: Any) -> User:
    """A new account, flushed so that it has its id (a name taken meanwhile raises
    `IntegrityError` here)."""
    user = User(**values)
    session.add(user)
    await session.flush()
    return user


async def ids_of(session: AsyncSession, names: Iterable[str]) -> dict[str, int]:
    """The ids of the accounts with exactly these names (those that exist)."""
    rows = await session.execute(select(User.name, User.id).where(User.name.in_(list(names))))
    return {name: user_id for name, user_id in rows}


async def add_imported_users(session: AsyncSession, names: Iterable[str]) -> dict[str, int]:
    """New accounts of kind `imported` (players named in imported games, who cannot log in),
    flushed; their ids by name."""
    users = [User(name=name, kind=UserKind.IMPORTED) for name in names]
    session.add_all(users)
    await session.flush()
    return {user.name: user.id for user in users}


async def kind_of(db: Executor, user_id: int) -> UserKind | None:
    """The account's kind (None: no such user)."""
    kind = await db.scalar(select(User.kind).where(User.id == user_id))
    return None if kind is None else UserKind(kind)


async def lock_user(session: AsyncSession, user_id: int) -> User | None:
    """The account by id, locked until the transaction ends. `FOR NO KEY UPDATE`: a change to
    an account changes no key, and an ending stored meanwhile (holding its game's row) may need
    the key-share lock of its `rating_changes` on this user."""
    return await session.scalar(
        select(User).where(User.id == user_id).with_for_update(key_share=True)
    )


@dataclass(frozen=True)
class UserFilter:
    name: str | None = None  # part of the name, any case
    kind: UserKind | None = None
    role: str | None = None
    banned: bool | None = None


async def list_users(
    session: AsyncSession, flt: UserFilter, limit: int, offset: int
) -> tuple[list[User], int]:
    """Matching users by name, and how many match in all."""
    query = select(User)
    if flt.name:
        query = query.where(func.lower(User.name).contains(flt.name.lower(), autoescape=True))
    if flt.kind is not None:
        query = query.where(User.kind == flt.kind)
    if flt.role is not None:
        query = query.where(User.role == flt.role)
    if flt.banned is not None:
        query = query.where(User.banned.is_(flt.banned))
    total = await session.scalar(select(func.count()).select_from(query.subquery()))
    users = await session.scalars(query.order_by(User.name).limit(limit).offset(offset))
    return list(users.all()), int(total or 0)


# --- tokens ------------------------------------------------------------------------------


def add_token(session: AsyncSession, token_hash: str, user_id: int, expires_at: datetime) -> None:
    session.add(AuthToken(token_hash=token_hash, user_id=user_id, expires_at=expires_at))


async def user_by_token(session: AsyncSession, token_hash: str, now: datetime) -> User | None:
    """The user of a token that has not expired by `now`; None as well if the user is banned."""
    result = await session.scalars(
        select(User)
        .join(AuthToken, AuthToken.user_id == User.id)
        .where(
            AuthToken.token_hash == token_hash,
            AuthToken.expires_at > now,
            User.banned.is_(False),
        )
    )
    return result.first()


async def token_expiries(session: AsyncSession, token_hashes: Sequence[str]) -> dict[str, datetime]:
    """When each of these tokens (by hash) expires; a token revoked (its row gone) is absent."""
    rows = await session.execute(
        select(AuthToken.token_hash, AuthToken.expires_at).where(
            AuthToken.token_hash.in_(token_hashes)
        )
    )
    return {token_hash: expires_at for token_hash, expires_at in rows.all()}


async def delete_token(session: AsyncSession, token_hash: str) -> None:
    await session.execute(delete(AuthToken).where(AuthToken.token_hash == token_hash))


async def delete_expired_tokens(session: AsyncSession, user_id: int, now: datetime) -> None:
    await session.execute(
        delete(AuthToken).where(AuthToken.user_id == user_id, AuthToken.expires_at <= now)
    )


async def delete_tokens_of(session: AsyncSession, user_id: int) -> None:
    """Revoke every token of a user (a ban)."""
    await session.execute(delete(AuthToken).where(AuthToken.user_id == user_id))


async def has_games(db: Executor, user_id: int) -> bool:
    """Whether the user played (or plays) any game, live or imported: one aborted before it
    began does not count, as it counts in no listing (`LISTED`)."""
    found = await db.scalar(
        select(Game.id)
        .where(or_(Game.black_id == user_id, Game.white_id == user_id), LISTED)
        .limit(1)
    )
    return found is not None


async def make_bot(session: AsyncSession, user_id: int) -> None:
    await session.execute(update(User).where(User.id == user_id).values(is_bot=True))


async def bots_online(
    session: AsyncSession, seen_since: datetime, instances: Iterable[str], limit: int
) -> list[User]:
    """Bot accounts (not banned) seen since `seen_since` or connected to one of these server
    processes, by name, at most `limit`."""
    # Asked per bot (a probe of the user's presence rows), not as the set of every connected
    # user, which one statement reading all of `presence` would build.
    present = (
        select(Presence.user_id)
        .where(Presence.user_id == User.id, Presence.instance.in_(list(instances)))
        .exists()
    )
    rows = await session.scalars(
        select(User)
        .where(
            User.is_bot.is_(True),
            User.banned.is_(False),
            or_(User.last_seen_at >= seen_since, present),
        )
        .order_by(User.name)
        .limit(limit)
    )
    return list(rows.all())


async def is_bot(db: Executor, user_id: int) -> bool:
    return bool(await db.scalar(select(User.is_bot).where(User.id == user_id)))


# --- preferences ---------------------------------------------------------------------------


async def set_takebacks(session: AsyncSession, user_id: int, allowed: bool) -> None:
    """Store the account's takeback preference (`users.takebacks`)."""
    await session.execute(update(User).where(User.id == user_id).values(takebacks=allowed))


async def takeback_refusers(db: Executor, user_ids: Collection[int]) -> dict[int, str]:
    """Those of these accounts that turned takebacks off, with their names: by primary key."""
    rows = await db.execute(
        select(User.id, User.name).where(User.id.in_(user_ids), User.takebacks.is_(False))
    )
    return {user_id: name for user_id, name in rows.all()}
