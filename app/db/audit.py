"""Storage of the administrators' audit log (`audit_log`): entries added with the change they
record, in the caller's transaction, and read back newest first."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import Select, func, select
from sqlalchemy.ext.asyncio import AsyncSession

from app.db.models import AuditEntry, Room, User


def add_entry(
    session: AsyncSession,
    actor_id: int,
    action: str,
    target_type: str,
    target_id: int | str,
    note: str | None,
    details: dict[str, Any] | None,
) -> AuditEntry:
    """An entry, written with the caller's transaction."""
    entry = AuditEntry(
        actor_id=actor_id,
        action=action,
        target_type=target_type,
        target_id=str(target_id),
        details=details or None,
        note=note,
    )
    session.add(entry)
    return entry


@dataclass(frozen=True)
class AuditFilter:
    actor: str | None = None  # the administrator's name
    action: str | None = None  # `user.ban`, or a family: `user.`
    target_type: str | None = None
    target_id: str | None = None
    since: datetime | None = None
    until: datetime | None = None


def _query(flt: AuditFilter) -> Select[AuditEntry, str]:
    query = select(AuditEntry, User.name).outerjoin(User, User.id == AuditEntry.actor_id)
    if flt.actor is not None:
        query = query.where(func.lower(User.name) == flt.actor.lower())
    if flt.action is not None:
        if flt.action.endswith("."):
            query = query.where(AuditEntry.action.startswith(flt.action, autoescape=True))
        else:
            query = query.where(AuditEntry.action == flt.action)
    if flt.target_type is not None:
        query = query.where(AuditEntry.target_type == flt.target_type)
    if flt.target_id is not None:
        query = query.where(AuditEntry.target_id == flt.target_id)
    if flt.since is not None:
        query = query.where(AuditEntry.at >= flt.since)
    if flt.until is not None:
        query = query.where(AuditEntry.at < flt.until)
    return query


async def entries(
    session: AsyncSession, flt: AuditFilter, limit: int, before_id: int | None = None
) -> list[tuple[AuditEntry, str | None]]:
    """At most `limit` matching entries with their actor's name, newest first, older than the
    entry `before_id` if given."""
    query = _query(flt)
    if before_id is not None:
        query = query.where(AuditEntry.id < before_id)
    rows = await session.execute(query.order_by(AuditEntry.id.desc()).limit(limit))
    return [(entry, name) for entry, name in rows.all()]


async def target_names(
    session: AsyncSession, entries: Sequence[AuditEntry]
) -> dict[tuple[str, str], str]:
    """The names of the users and the rooms these entries are about, by (target_type,
    target_id): one primary-key look-up per kind, for a page of entries at once."""
    found: dict[tuple[str, str], str] = {}
    for kind, model in (("user", User), ("room", Room)):
        ids = {
            int(e.target_id)
            for e in entries
            if e.target_type == kind and e.target_id is not None and e.target_id.isdigit()
        }
        if ids:
            rows = await session.execute(select(model.id, model.name).where(model.id.in_(ids)))
            found |= {(kind, str(target_id)): name for target_id, name in rows.all()}
    return found
