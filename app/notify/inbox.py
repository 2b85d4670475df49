"""Notifications: each player's inbox on the site, and mail for those who asked for it.

A notice is written in the transaction of what caused it (a correspondence move, a game's start
or end, a challenge, a tournament about to start): if that is stored, so is the notice, and if
not, neither is. Its mail, for the kinds mailed (`MAIL_KINDS`, to a confirmed address whose
owner has not turned that kind off), goes to the outbox in the same transaction, keyed so that
it is written at most once (`app.notify.mail`). Once the transaction is committed the caller
pushes the notices to their owners' open pages (`push`: a `notification` message on every
connection of theirs), where the header's count goes up and the browser may show it. `add`
keeps the notices on the session, and the session's commit pushes them (in the background):
no caller forgets it, and a rolled back notice is never pushed.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta
from typing import Any, Literal, get_args

from sqlalchemy import event
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import Session

from app.db.models import Notification
from app.live.events import unix_ms
from app.live.liveplay import LivePlay
from app.notify import mail
from app.notify import store as stored
from app.timeutil import as_unix

Kind = Literal[
    "your_move",
    "time_alarm",
    "game_started",
    "game_ended",
    "challenge",
    "tournament_soon",
    "tournament_cancelled",
]
KINDS: tuple[Kind, ...] = get_args(Kind)
MAX_PAGE = 100


@dataclass(frozen=True, slots=True)
class Notice:
    """A notice written, to push to its owner once committed."""

    user_id: int
    payload: dict[str, Any]


def text(kind: str, data: dict[str, Any]) -> str:
    """A notice in words, as the inbox and the browser show it."""
    opponent = data.get("opponent", "your opponent")
    match kind:
        case "your_move":
            return f"Your move against {opponent} (correspondence, table {data.get('table')})."
        case "time_alarm":
            return f"Time is running out for your move against {opponent}."
        case "game_started":
            return f"Your correspondence game against {opponent} has started."
        case "game_ended":
            return f"Your correspondence game against {opponent} has ended: {data.get('result')}."
        case "challenge":
            return f"{data.get('from', 'Someone')} challenges you."
        case "tournament_soon":
            return f"The tournament {data.get('name', '')} starts soon."
        case "tournament_cancelled":
            return f"The tournament {data.get('name', '')} was cancelled: {data.get('reason', '')}."
    return kind


def payload(row: Notification) -> dict[str, Any]:
    return {
        "id": row.id,
        "kind": row.kind,
        "data": row.data,
        "text": text(row.kind, row.data),
        "at": unix_ms(as_unix(row.created_at)),
        "read": row.read_at is not None,
    }


async def add(
    live: LivePlay, session: AsyncSession, user_id: int, kind: Kind, data: dict[str, Any]
) -> Notice:
    """Write a notice in `user_id`'s inbox, and its mail if it is mailed, in the caller's
    transaction; push the notice returned once committed."""
    row = await stored.add(session, user_id, kind, data, live.clock.now())
    if kind in mail.MAIL_KINDS and live.settings.mail_enabled:
        await mail.queue_notice(live, session, user_id, kind, data, text(kind, data))
    notice = Notice(user_id, payload(row))
    session.info.setdefault(_PENDING, []).append(notice)
    session.info[_LIVE] = live
    return notice


_PENDING, _LIVE = "notices", "notices_live"


@event.listens_for(Session, "after_commit")
def _committed(session: Session) -> None:
    notices: list[Notice] | None = session.info.pop(_PENDING, None)
    live: LivePlay | None = session.info.pop(_LIVE, None)
    if notices and live is not None:
        live.spawn(push(live, notices))


@event.listens_for(Session, "after_rollback")
def _rolled_back(session: Session) -> None:
    session.info.pop(_PENDING, None)
    session.info.pop(_LIVE, None)


async def push(live: LivePlay, notices: list[Notice]) -> None:
    """Tell each notice's owner, on every connection of theirs (after the commit)."""
    for notice in notices:
        await live.notify(notice.user_id, {"type": "notification", "notification": notice.payload})
    if any(n.payload["kind"] in mail.MAIL_KINDS for n in notices):
        live.mail_wanted.set()


async def inbox(
    live: LivePlay, user_id: int, limit: int = 30, before: int | None = None
) -> dict[str, Any]:
    """The user's notices, newest first (older than `before`), and how many are unread."""
    async with live.db.session() as session:
        rows = await stored.page(session, user_id, min(limit, MAX_PAGE), before)
        unread = await stored.unread(session, user_id)
    return {"unread": unread, "data": [payload(row) for row in rows]}


async def read(live: LivePlay, user_id: int, ids: list[int] | None = None) -> dict[str, Any]:
    """Mark the user's notices read (all, or `ids`); how many stay unread."""
    async with live.db.session() as session:
        await stored.mark_read(session, user_id, live.clock.now(), ids)
        await session.commit()
        unread = await stored.unread(session, user_id)
    return {"unread": unread}


# Notices are kept this long in the inbox, and sent mail in the outbox (`app.notify.mailer`);
# both are pruned by the live log's pruning loop (`app.live.retention.run`).
NOTICE_DAYS = timedelta(days=90)
SENT_MAIL_DAYS = timedelta(days=7)
PRUNE_ROWS = 1000  # per batch
PRUNE_BATCHES = 20  # per pruning: a backlog is worked off over several


async def prune(live: LivePlay, max_batches: int = PRUNE_BATCHES) -> int:
    """Delete the notices older than `NOTICE_DAYS` and the mail sent over `SENT_MAIL_DAYS` ago,
    batch by batch; how many rows."""
    now = live.clock.now()
    notices_before, mail_before = now - NOTICE_DAYS, now - SENT_MAIL_DAYS
    pruned = 0
    for _ in range(max_batches):
        async with live.db.session() as session:
            done = await stored.prune(session, notices_before, mail_before, PRUNE_ROWS)
            await session.commit()
        pruned += done
        if done < PRUNE_ROWS:
            break
    return pruned
