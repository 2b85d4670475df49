"""An administrator's users: list, kick, ban, unban, and the ratings review queue."""

from __future__ import annotations

from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from app.accounts import store as accounts
from app.accounts.store import UserFilter as UserFilter
from app.db.audit import AuditFilter as AuditFilter
from app.db.models import AuditEntry, User
from app.errors import Code
from app.live import messages
from app.live.liveplay import LivePlay
from app.live.log_store import StoredEvent
from app.moderation.admin import (
    NotFound,
    Refused,
    _announce,
    _audit,
    _end,
    _open_table_ids,
    _playing_at,
)
from app.play import tables_store as stored_tables
from app.play.players import PlayerRef
from app.ratings import fair_play
from app.ratings import store as stored_ratings
from app.rules import Result
from app.status import TableStatus, UserKind
from app.tables import rooms_store as rooms
from app.timeutil import utcnow

BAN_REASON_LENGTH = 200  # users.ban_reason


async def _target_user(session: AsyncSession, actor: User, user_id: int, verb: str) -> User:
    user = await accounts.lock_user(session, user_id)
    if user is None:
        raise NotFound(f"user {user_id}")
    if user.id == actor.id:
        raise Refused(Code.OWN_ACCOUNT, f"administrators cannot {verb} themselves")
    return user


async def kick(
    session: AsyncSession,
    live: LivePlay,
    actor: User,
    user_id: int,
    note: str,
    *,
    table_id: int | None = None,
    room_id: int | None = None,
    result: str = Result.UNFINISHED,
) -> AuditEntry:
    """Send a user away from a table, from every table of a room, or (neither) from the server.

    From tables: their games there end with `result`, they lose their seats and stop watching.
    From the server: their connections are closed. Nothing stops them coming back: ban for that.
    """
    user = await _target_user(session, actor, user_id, "kick")
    if table_id is not None:
        table = await stored_tables.get(session, table_id)
        if table is None:
            raise NotFound(f"table {table_id}")
        if table.status == TableStatus.CLOSED:
            raise Refused(Code.TABLE_CLOSED, f"table {table_id} is closed")
        scope = [table_id]
    elif room_id is not None:
        if not await rooms.room_exists(session, room_id):
            raise NotFound(f"room {room_id}")
        scope = await _open_table_ids(session, room_id)
    else:
        scope = []
    ended = await _playing_at(session, scope, user_id)
    events: list[StoredEvent] = []
    for row in ended:
        events += await _end(live, session, row, result, note)
    details: dict[str, Any] = {"name": user.name, "table": table_id, "room": room_id}
    if ended:
        details |= {"games": [g.id for g in ended], "result": result}
    entry = _audit(session, actor, "user.kick", "user", user_id, note, **details)
    await session.commit()
    await _announce(
        live,
        events,
        control=messages.kick(
            user_id, scope if table_id is not None or room_id is not None else None, note
        ),
        unseat=(PlayerRef(user.id, user.name), scope),
    )
    return entry


async def ban(
    session: AsyncSession, live: LivePlay, actor: User, user_id: int, note: str
) -> AuditEntry:
    """Refuse the user's log-ins and tokens from now on and close their connections; never
    one of the computer's accounts (`ai_account`).

    Their tokens are revoked, so an unban asks them to log in again. A game they were playing is
    left to its clock and the abandonment rule, like any player who goes away.
    """
    user = await _target_user(session, actor, user_id, "ban")
    if user.kind == UserKind.AI:
        # The computer opponent has no password, no socket and no one to keep out.
        raise Refused(
            Code.AI_ACCOUNT, f"{user.name} is the computer's account: it cannot be banned"
        )
    if user.banned:
        raise Refused(Code.ALREADY_BANNED, f"{user.name} is already banned")
    user.banned, user.ban_reason = True, note[:BAN_REASON_LENGTH]
    await accounts.delete_tokens_of(session, user_id)
    entry = _audit(session, actor, "user.ban", "user", user_id, note, name=user.name)
    await session.commit()
    await _announce(live, [], control=messages.ban(user_id, f"banned: {note}"))
    return entry


async def unban(session: AsyncSession, actor: User, user_id: int, note: str) -> AuditEntry:
    user = await _target_user(session, actor, user_id, "unban")
    if not user.banned:
        raise Refused(Code.NOT_BANNED, f"{user.name} is not banned")
    user.banned, user.ban_reason = False, None
    entry = _audit(session, actor, "user.unban", "user", user_id, note, name=user.name)
    await session.commit()
    return entry


async def resolve_review(session: AsyncSession, actor: User, review_id: int) -> AuditEntry:
    """A moderator looked at a rating review (`app.ratings.fair_play`)."""
    if not await stored_ratings.resolve_review(session, review_id, actor.id, utcnow()):
        raise NotFound(f"open review {review_id}")
    entry = _audit(session, actor, "review.resolve", "review", review_id, None)
    await session.commit()
    return entry


async def reviews(
    session: AsyncSession, *, open_only: bool
) -> list[tuple[tuple[Any, ...], fair_play.Figures]]:
    """The ratings review queue (`app.ratings.fair_play`), oldest first: each review with its
    player's figures as they are now (not as when it was queued)."""
    now = utcnow()
    return [
        (row, await fair_play.figures(session, row[1], row[3], row[4], now))
        for row in await stored_ratings.reviews(session, open_only=open_only)
    ]


async def list_users(
    session: AsyncSession, flt: UserFilter, limit: int, offset: int
) -> tuple[list[User], int]:
    """Matching users by name, and how many match in all."""
    return await accounts.list_users(session, flt, limit, offset)
