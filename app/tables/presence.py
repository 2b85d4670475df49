"""Who is connected, stored, and what follows from it: absences in games, seats given up.

Each process keeps a `presence` row per user connected to it. A user with no row of a live
process is offline since `users.last_seen_at`; their games in progress note the absence (the
opponent may claim after the grace period), and past the grace period they stand up from tables
where no game is in progress. A process that crashed leaves rows behind: the other processes'
sweep finds that it is gone (its heartbeat, and on PostgreSQL its lock) and takes its users
offline as of its last beat. A process that is only busy (its event loop held up, so that it
beats no more) still holds its lock on PostgreSQL and is not taken for gone
(`heartbeat.alive`): its users stay present, and nobody may claim their games. A user's
presence changes lock the user's row, so a connection opening on one process while another
closes elsewhere cannot leave them marked away.
"""

from __future__ import annotations

import logging
from datetime import datetime
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from app.errors import Code
from app.live import heartbeat
from app.live import heartbeat_store as heartbeats
from app.live.liveplay import LivePlay, PlayError
from app.live.log_store import StoredEvent
from app.play import absences, timeouts
from app.play.players import PlayerRef, seated_player
from app.tables import attendance, seating
from app.tables import presence_store as stored
from app.tables.rooms import find_room
from app.timeutil import as_datetime, as_unix

logger = logging.getLogger(__name__)

SWITCH_SECONDS = 5.0  # a stopped process's users have this long to connect elsewhere


async def _alive(live: LivePlay, session: AsyncSession) -> set[str]:
    alive = await heartbeat.alive(session, live.clock.now(), live.settings.heartbeat_seconds)
    return alive | {live.instance}


async def connected(live: LivePlay, user_id: int) -> None:
    """The user's first connection to this process: present, and back in their games."""
    async with live.change() as change:
        await stored.lock_user(change.session, user_id)
        await stored.add(change.session, live.instance, user_id, live.clock.now())
        change.add(await absences.mark_back(live, change.session, user_id))


async def _offline(
    live: LivePlay, session: AsyncSession, user_id: int, since: float
) -> list[StoredEvent]:
    """In the caller's transaction (user row locked, their row here gone): if no live process
    has them either, they are offline since `since`."""
    if await stored.connected_to_any(session, user_id, await _alive(live, session)):
        return []
    await stored.set_last_seen(session, user_id, as_datetime(since))
    return await absences.mark_away(live, session, user_id, since)


async def disconnected(
    live: LivePlay, user_id: int, instance: str | None = None, since: float | None = None
) -> None:
    """The user's last connection to a process (this one, or `instance`, gone) closed."""
    instance = instance or live.instance
    since = live.clock.time() if since is None else since
    async with live.change() as change:
        await stored.lock_user(change.session, user_id)
        if instance == live.instance and live.connected_here(user_id):
            # They connected here again while this waited for the user's row: that
            # connection's `connected` may have gone first, and its row must stay.
            return
        await stored.remove(change.session, instance, user_id)
        change.add(await _offline(live, change.session, user_id, since))


async def reassert(live: LivePlay) -> int:
    """Make sure every user connected to this process is noted as such: one whose row is
    gone (another process took this one for gone, as a cut connection once made it) is
    connected again, back in their games. How many were."""
    users = live.users_here()
    if not users:
        return 0
    async with live.db.session() as session:
        noted = await stored.users_at(session, live.instance)
    missing = [user_id for user_id in users if user_id not in noted]
    for user_id in missing:
        if live.connected_here(user_id):
            await connected(live, user_id)
    if missing:
        logger.warning("%d users connected here were noted away: set right", len(missing))
    return len(missing)


async def back(live: LivePlay, user_id: int) -> None:
    """The user is connected (to a live process): any absence their games still note ends."""
    async with live.change() as change:
        await stored.lock_user(change.session, user_id)
        change.add(await absences.mark_back(live, change.session, user_id))


async def present(live: LivePlay, session: AsyncSession, user_id: int) -> bool:
    """Whether the user is connected to a live server process."""
    if live.connected_here(user_id):
        return True
    return await stored.connected_to_any(session, user_id, await _alive(live, session))


async def _gone_instances(live: LivePlay) -> list[tuple[str, datetime | None, list[int]]]:
    """Processes that hold presence rows but are gone: id, last beat, users. One that stopped
    cleanly counts as gone `SWITCH_SECONDS` after its last beat, so that its clients, sent
    elsewhere by the balancer, are connected again by then."""
    async with live.db.session() as session:
        instances = await stored.instances(session) - {live.instance}
        if not instances:
            return []
        alive = await _alive(live, session)
        gone: dict[str, list[int]] = {instance: [] for instance in instances - alive}
        if gone:
            for instance, user_id in await stored.users_of(session, gone):
                gone[instance].append(user_id)
        if not gone:
            return []
        beats = {
            instance: (beat.beat_at, beat.stopped)
            for instance, beat in (await heartbeats.of(session, set(gone))).items()
        }
    switched = live.clock.time() - SWITCH_SECONDS
    found = []
    for instance, users in gone.items():
        beat_at, stopped = beats.get(instance, (None, False))
        if stopped and beat_at is not None and as_unix(beat_at) > switched:
            continue
        found.append((instance, beat_at, users))
    return found


async def _stand_up_absent(live: LivePlay) -> None:
    """Seats without a game in progress that their holder has not watched for the grace
    period are given up (the table closes when nobody is left); see `attendance`. A seat
    with no attendance noted (taken before it was) follows its holder's presence instead. A
    correspondence table waiting for its first game keeps its host (as a lobby seek would)."""
    async with live.db.session() as session:
        seats = await seating.seats_of(session, None, kept=False)
        if not seats:
            return
        user_ids = sorted({user_id for _, user_id in seats})
        alive = await _alive(live, session)
        watched = await attendance.unattended(session, seats, alive)
        online = await stored.online(session, user_ids, alive)
        users = await stored.last_seen(session, user_ids)
    cutoff = live.clock.time() - live.settings.disconnect_grace_seconds
    for table_id, user_id in seats:
        if user_id not in users or live.is_ai(user_id):
            continue  # the computer opponent stays while its opponent does
        name, seen = users[user_id]
        if (table_id, user_id) in watched:
            since = watched[table_id, user_id]
            if since is None or since > cutoff:
                continue
        elif user_id in online or (seen is not None and as_unix(seen) > cutoff):
            continue
        try:
            await seating.leave(live, PlayerRef(user_id, name), table_id)
        except PlayError:
            continue  # a game started there meanwhile, or they stood up already


async def sweep(live: LivePlay) -> None:
    """What no single process may be relied on to do: flag clocks that ran out, take the users
    of crashed processes offline, and stand up players who did not come back. Every process
    sweeps; every write is conditional, so each thing happens once."""
    await timeouts.flag_due(live)
    for instance, beat_at, users in await _gone_instances(live):
        since = as_unix(beat_at) if beat_at is not None else live.clock.time()
        logger.info("server process %s is gone: %d users offline", instance, len(users))
        for user_id in users:
            await disconnected(live, user_id, instance=instance, since=since)
    # Seats wait a grace period, so looking for absent players a few times in it will do.
    now = live.clock.monotonic()
    every = max(live.settings.sweep_seconds, live.settings.disconnect_grace_seconds / 4)
    if now - live.stood_up_at >= every - 0.01:
        live.stood_up_at = now
        await _stand_up_absent(live)


async def banned_here(live: LivePlay) -> list[tuple[int, str]]:
    """Users connected to this process who are banned now, with the reason."""
    async with live.db.session() as session:
        return await stored.banned_at(session, live.instance)


async def online_in_room(live: LivePlay, room_ref: str | int) -> dict[str, Any]:
    """Who is in a room now: the players seated at its tables (waiting for an opponent,
    playing, or after a game) who are connected to a live server process, each with their
    account's kind and their rating in their table's category, as seats show it."""
    async with live.db.session() as session:
        room = await find_room(session, room_ref)
        if room is None:
            raise PlayError(Code.NOT_FOUND, f"no room {room_ref}")
        seated = await stored.seated_in_room(session, room.id, await _alive(live, session))
    now = live.clock.time()
    players = []
    for user_id, name, table, rating in seated:
        player = seated_player(user_id, name, rating, now)
        assert player is not None
        players.append(player.seat_payload() | {"kind": rating[0], "table": table})
    return {"room": room.id, "slug": room.slug, "count": len(players), "players": players}
