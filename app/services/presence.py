"""Who is connected, stored, and what follows from it: absences in games, seats given up.

Each process keeps a `presence` row per user connected to it. A user with no row of a live
process is offline since `users.last_seen_at`; their games in progress note the absence (the
opponent may claim after the grace period), and past the grace period they stand up from tables
where no game is in progress. A process that crashed leaves rows behind: the other processes'
sweep finds that it is gone (its heartbeat, and on PostgreSQL its lock) and takes its users
offline as of its last beat. A user's presence changes lock the user's row, so a connection
opening on one process while another closes elsewhere cannot leave them marked away.
"""

from __future__ import annotations

import logging
import time
from datetime import datetime

from sqlalchemy import delete, select, update
from sqlalchemy.ext.asyncio import AsyncSession

from app.db.models import Presence, ServerHeartbeat, User
from app.db.table_log import StoredEvent
from app.services import absences, games, heartbeat, tables
from app.services.live import LivePlay, PlayerRef, PlayError
from app.timeutil import as_datetime, as_unix

logger = logging.getLogger(__name__)

SWITCH_SECONDS = 5.0  # a stopped process's users have this long to connect elsewhere


async def _lock_user(session: AsyncSession, user_id: int) -> None:
    """Serialise the user's presence changes. `FOR NO KEY UPDATE`: it still excludes another
    presence change, but not the key-share lock a row referring to the user takes (a game's
    `rating_changes`, written by a transaction that already holds the game's row, which a
    presence change then locks: with a full lock the two would deadlock)."""
    await session.execute(select(User.id).where(User.id == user_id).with_for_update(key_share=True))


async def _alive(live: LivePlay, session: AsyncSession) -> set[str]:
    alive = await heartbeat.alive(
        session, as_datetime(time.time()), live.settings.heartbeat_seconds
    )
    return alive | {live.instance}


async def connected(live: LivePlay, user: PlayerRef) -> None:
    """The user's first connection to this process: present, and back in their games."""
    async with live.db.session() as session:
        await _lock_user(session, user.id)
        if await session.get(Presence, (live.instance, user.id)) is None:
            session.add(
                Presence(instance=live.instance, user_id=user.id, since=as_datetime(time.time()))
            )
        stored = await absences.mark_back(live, session, user.id)
        await session.commit()
    await live.announce(stored)


async def _offline(
    live: LivePlay, session: AsyncSession, user_id: int, since: float
) -> list[StoredEvent]:
    """In the caller's transaction (user row locked, their row here gone): if no live process
    has them either, they are offline since `since`."""
    alive = await _alive(live, session)
    elsewhere = await session.scalar(
        select(Presence.instance).where(Presence.user_id == user_id, Presence.instance.in_(alive))
    )
    if elsewhere is not None:
        return []
    await session.execute(
        update(User).where(User.id == user_id).values(last_seen_at=as_datetime(since))
    )
    return await absences.mark_away(live, session, user_id, since)


async def disconnected(
    live: LivePlay, user_id: int, instance: str | None = None, since: float | None = None
) -> None:
    """The user's last connection to a process (this one, or `instance`, gone) closed."""
    instance = instance or live.instance
    since = time.time() if since is None else since
    async with live.db.session() as session:
        await _lock_user(session, user_id)
        await session.execute(
            delete(Presence).where(Presence.instance == instance, Presence.user_id == user_id)
        )
        stored = await _offline(live, session, user_id, since)
        await session.commit()
    await live.announce(stored)


async def _gone_instances(live: LivePlay) -> list[tuple[str, datetime | None, list[int]]]:
    """Processes that hold presence rows but are gone: id, last beat, users. One that stopped
    cleanly counts as gone `SWITCH_SECONDS` after its last beat, so that its clients, sent
    elsewhere by the balancer, are connected again by then."""
    async with live.db.session() as session:
        instances = set((await session.scalars(select(Presence.instance).distinct())).all()) - {
            live.instance
        }
        if not instances:
            return []
        alive = await _alive(live, session)
        gone: dict[str, list[int]] = {instance: [] for instance in instances - alive}
        if gone:
            rows = await session.execute(
                select(Presence.instance, Presence.user_id).where(Presence.instance.in_(gone))
            )
            for instance, user_id in rows.all():
                gone[instance].append(user_id)
        if not gone:
            return []
        beats = {
            instance: (beat_at, stopped)
            for instance, beat_at, stopped in (
                await session.execute(
                    select(
                        ServerHeartbeat.instance, ServerHeartbeat.beat_at, ServerHeartbeat.stopped
                    ).where(ServerHeartbeat.instance.in_(gone))
                )
            ).all()
        }
    switched = time.time() - SWITCH_SECONDS
    found = []
    for instance, users in gone.items():
        beat_at, stopped = beats.get(instance, (None, False))
        if stopped and beat_at is not None and as_unix(beat_at) > switched:
            continue
        found.append((instance, beat_at, users))
    return found


async def _stand_up_absent(live: LivePlay) -> None:
    """Seats without a game in progress whose holder has been offline past the grace period
    are given up (the table closes when nobody is left)."""
    async with live.db.session() as session:
        seats = await tables.seats_of(session, None)
        if not seats:
            return
        user_ids = sorted({user_id for _, user_id in seats})
        alive = await _alive(live, session)
        online = set(
            (
                await session.scalars(
                    select(Presence.user_id).where(
                        Presence.user_id.in_(user_ids), Presence.instance.in_(alive)
                    )
                )
            ).all()
        )
        rows = await session.execute(
            select(User.id, User.name, User.last_seen_at).where(User.id.in_(user_ids))
        )
        users = {user_id: (name, seen) for user_id, name, seen in rows.all()}
    cutoff = time.time() - live.settings.disconnect_grace_seconds
    for table_id, user_id in seats:
        if user_id in online or user_id not in users:
            continue
        name, seen = users[user_id]
        if seen is not None and as_unix(seen) > cutoff:
            continue
        try:
            await tables.leave(live, PlayerRef(user_id, name), table_id)
        except PlayError:
            continue  # a game started there meanwhile, or they stood up already


async def sweep(live: LivePlay) -> None:
    """What no single process may be relied on to do: flag clocks that ran out, take the users
    of crashed processes offline, and stand up players who did not come back. Every process
    sweeps; every write is conditional, so each thing happens once."""
    await games.flag_due(live)
    for instance, beat_at, users in await _gone_instances(live):
        since = as_unix(beat_at) if beat_at is not None else time.time()
        logger.info("server process %s is gone: %d users offline", instance, len(users))
        for user_id in users:
            await disconnected(live, user_id, instance=instance, since=since)
    # Seats wait a grace period, so looking for absent players a few times in it will do.
    now = time.monotonic()
    every = max(live.settings.sweep_seconds, live.settings.disconnect_grace_seconds / 4)
    if now - live.stood_up_at >= every - 0.01:
        live.stood_up_at = now
        await _stand_up_absent(live)


async def banned_here(live: LivePlay) -> list[tuple[int, str]]:
    """Users connected to this process who are banned now, with the reason."""
    async with live.db.session() as session:
        rows = await session.execute(
            select(User.id, User.ban_reason)
            .join(Presence, Presence.user_id == User.id)
            .where(Presence.instance == live.instance, User.banned.is_(True))
        )
        return [(user_id, reason or "") for user_id, reason in rows.all()]
