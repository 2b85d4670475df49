"""Storage of notifications: the inboxes, and the e-mail outbox its worker leases mail from.

The worker (`app.notify.mailer`) takes due mail with `FOR UPDATE SKIP LOCKED` on PostgreSQL,
leasing it for a while in a transaction of its own, so that two processes never send the same
mail at once and a crashed process's leases run out and are taken again; on SQLite (one
process) the lease's conditional update alone does it. A mail is due until it is sent or given
up (`failed_at`)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import and_, delete, func, or_, select, update
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.ext.asyncio import AsyncSession

from app.db.models import Notification, OutboxMail, User
from app.live.log_store import Executor

# --- the inbox -----------------------------------------------------------------------------


async def add(
    session: AsyncSession, user_id: int, kind: str, data: dict[str, Any], at: datetime
) -> Notification:
    """A notice in `user_id`'s inbox, in the caller's transaction (its id once flushed)."""
    row = Notification(user_id=user_id, kind=kind, data=data, created_at=at)
    session.add(row)
    await session.flush()
    return row


async def page(
    db: Executor, user_id: int, limit: int, before: int | None = None
) -> Sequence[Notification]:
    """The user's notices, newest first, older than the id `before` if given."""
    query = select(Notification).where(Notification.user_id == user_id)
    if before is not None:
        query = query.where(Notification.id < before)
    rows = await db.execute(query.order_by(Notification.id.desc()).limit(limit))
    return rows.scalars().all()


async def unread(db: Executor, user_id: int) -> int:
    query = select(func.count()).where(
        Notification.user_id == user_id, Notification.read_at.is_(None)
    )
    return int(await db.scalar(query) or 0)


async def mark_read(
    db: Executor, user_id: int, at: datetime, ids: Sequence[int] | None = None
) -> int:
    """Mark the user's unread notices read (only `ids`, if given); how many were."""
    query = update(Notification).where(
        Notification.user_id == user_id, Notification.read_at.is_(None)
    )
    if ids is not None:
        query = query.where(Notification.id.in_(ids))
    result = await db.execute(query.values(read_at=at))
    return int(result.rowcount)  # type: ignore[attr-defined]


async def prune(db: Executor, notices_before: datetime, mail_before: datetime, limit: int) -> int:
    """Delete up to `limit` notices made before `notices_before` and as many mails sent or
    given up before `mail_before`; how many rows in all."""
    old_notices = (
        select(Notification.id).where(Notification.created_at < notices_before).limit(limit)
    )
    gone = await db.execute(delete(Notification).where(Notification.id.in_(old_notices)))
    old_mail = (
        select(OutboxMail.id)
        .where(
            or_(
                and_(OutboxMail.sent_at.is_not(None), OutboxMail.sent_at < mail_before),
                and_(OutboxMail.failed_at.is_not(None), OutboxMail.failed_at < mail_before),
            )
        )
        .limit(limit)
    )
    sent = await db.execute(delete(OutboxMail).where(OutboxMail.id.in_(old_mail)))
    return int(gone.rowcount) + int(sent.rowcount)  # type: ignore[attr-defined]


# --- mail ----------------------------------------------------------------------------------


async def by_email_token(
    session: AsyncSession, token_hash: str, *, lock: bool = True
) -> User | None:
    """The account whose address waits with this token, locked unless `lock` is False."""
    query = select(User).where(User.email_token_hash == token_hash)
    if lock:
        query = query.with_for_update()
    return (await session.scalars(query)).one_or_none()


async def forget_email(db: Executor, user_id: int) -> None:
    await db.execute(
        update(User)
        .where(User.id == user_id)
        .values(email=None, email_pending=None, email_token_hash=None, email_key=None)
    )


async def set_email_off(db: Executor, user_id: int, off: list[str]) -> None:
    await db.execute(update(User).where(User.id == user_id).values(email_off=off))


async def recipient(db: Executor, user_id: int) -> tuple[str | None, list[str], str | None]:
    """A user's confirmed address, the kinds they want no mail of, and their link key."""
    row = (
        await db.execute(
            select(User.email, User.email_off, User.email_key).where(User.id == user_id)
        )
    ).one_or_none()
    if row is None:
        return None, [], None
    return row[0], list(row[1] or []), row[2]


async def queue(session: AsyncSession, values: dict[str, Any]) -> bool:
    """Put a mail in the outbox, in the caller's transaction; False (nothing written) if a mail
    of the same `key` is there already: each is sent at most once."""
    insert = pg_insert if session.get_bind().dialect.name == "postgresql" else sqlite_insert
    statement = insert(OutboxMail).values(**values).on_conflict_do_nothing(index_elements=["key"])
    result = await session.execute(statement)
    return bool(result.rowcount)  # type: ignore[attr-defined]


async def lease(
    session: AsyncSession, now: datetime, until: datetime, limit: int
) -> Sequence[OutboxMail]:
    """Lease up to `limit` due mails (neither sent nor given up, their next try come, not
    leased by a live lease) until `until`; the caller commits."""
    due = (
        select(OutboxMail.id)
        .where(
            OutboxMail.sent_at.is_(None),
            OutboxMail.failed_at.is_(None),
            OutboxMail.next_try_at <= now,
            or_(OutboxMail.lease_until.is_(None), OutboxMail.lease_until <= now),
        )
        .order_by(OutboxMail.next_try_at, OutboxMail.id)
        .limit(limit)
    )
    if session.get_bind().dialect.name == "postgresql":
        due = due.with_for_update(skip_locked=True)
    ids = list((await session.scalars(due)).all())
    if not ids:
        return []
    # Conditional: a lease taken meanwhile (SQLite) is not taken twice.
    await session.execute(
        update(OutboxMail)
        .where(
            OutboxMail.id.in_(ids),
            OutboxMail.sent_at.is_(None),
            or_(OutboxMail.lease_until.is_(None), OutboxMail.lease_until <= now),
        )
        .values(lease_until=until)
    )
    rows = await session.scalars(
        select(OutboxMail)
        .where(OutboxMail.id.in_(ids), OutboxMail.lease_until == until)
        .order_by(OutboxMail.id)
    )
    return rows.all()


async def sent(db: Executor, mail_id: int, at: datetime) -> None:
    await db.execute(
        update(OutboxMail)
        .where(OutboxMail.id == mail_id)
        .values(sent_at=at, lease_until=None, attempts=OutboxMail.attempts + 1, last_error=None)
    )


async def failed(db: Executor, mail_id: int, next_try: datetime, error: str) -> None:
    await db.execute(
        update(OutboxMail)
        .where(OutboxMail.id == mail_id)
        .values(
            next_try_at=next_try,
            lease_until=None,
            attempts=OutboxMail.attempts + 1,
            last_error=error[:300],
        )
    )


async def give_up(db: Executor, mail_id: int, at: datetime, error: str) -> None:
    """Try the mail no more: it failed for good, or as often as it may."""
    await db.execute(
        update(OutboxMail)
        .where(OutboxMail.id == mail_id)
        .values(
            failed_at=at,
            lease_until=None,
            attempts=OutboxMail.attempts + 1,
            last_error=error[:300],
        )
    )


async def backlog(db: Executor) -> tuple[int, int]:
    """How many mails wait to be sent, and how many were given up (and not yet pruned)."""
    waiting = OutboxMail.sent_at.is_(None) & OutboxMail.failed_at.is_(None)
    row = (
        await db.execute(
            select(
                func.count().filter(waiting),
                func.count().filter(OutboxMail.failed_at.is_not(None)),
            )
        )
    ).one()
    return int(row[0]), int(row[1])
