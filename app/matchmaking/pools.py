"""Quick pairing: players wait in a pool (a variant and a clock) and are paired with the
waiting player of the nearest rating within a range that widens while they wait.

The pools are the fixed list `POOLS`. A player waits in one pool at a time (a `seeks` row).
The range is ±`RANGE_START` rating points, widened by `RANGE_PER_SECOND` each second waited
(±300 after 10 s, ±700 after 30 s), as lichess's pools widen theirs; a pair needs each player
within the other's range, and the same rated-or-casual choice. The oldest seek is served first,
with the nearest rating (the older of two equally near).

Every server process runs the pairing step every `PAIRING_SECONDS`, and once right after a
seek is made. The step locks the pool's seeks with `FOR UPDATE SKIP LOCKED`, and deletes the
two seeks of each pair in the transaction that stores its game, on the condition that both are
still there. Two processes pairing the same pool at once therefore take disjoint sets of seeks
and neither waits for the other; a seek is paired once. (An advisory lock per pool would do it
too, but would make the second process wait for the first, and is PostgreSQL's alone; SQLite,
which has no row locks, runs one write transaction at a time and relies on the condition.)
"""

from __future__ import annotations

import asyncio
import bisect
import logging
import random
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from app.accounts import store as stored_accounts
from app.errors import Code
from app.live import heartbeat, messages
from app.live.liveplay import LivePlay, PlayError
from app.live.log_store import StoredEvent
from app.matchmaking import seeks_store as stored
from app.play import games
from app.play.clocks import DAY_S, clock_payload, days_of
from app.play.players import LiveGame, PlayerRef, TableInfo
from app.ratings import service as ratings
from app.ratings import store as stored_ratings
from app.ratings.categories import Category, category_of
from app.tables import seating
from app.timeutil import as_datetime, as_unix

logger = logging.getLogger(__name__)

RANGE_START = 100.0
RANGE_PER_SECOND = 20.0
PAIRING_SECONDS = 1.0
BATCH = 20  # pairs stored per transaction
DEFAULT_RATING = 1500.0


@dataclass(frozen=True, slots=True)
class Pool:
    variant: str
    base_s: int
    increment_s: int

    @property
    def days(self) -> int | None:
        """Days per move: a correspondence pool (None: a live one)."""
        return days_of(self.base_s)

    @property
    def id(self) -> str:
        if self.days is not None:
            return f"{self.variant}-{self.days}d"
        return f"{self.variant}-{self.base_s // 60}+{self.increment_s}"

    @property
    def name(self) -> str:
        if self.days is not None:
            return f"{self.variant.capitalize()} {self.days} days per move"
        return f"{self.variant.capitalize()} {self.base_s // 60}+{self.increment_s}"

    @property
    def category(self) -> Category:
        return category_of(self.base_s, self.increment_s)

    def payload(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "name": self.name,
            "variant": self.variant,
            "clock": clock_payload(self.base_s, self.increment_s),
            "category": self.category,
        }


POOLS: dict[str, Pool] = {
    pool.id: pool
    for pool in (
        Pool("english", 60, 0),
        Pool("english", 180, 2),
        Pool("english", 300, 3),
        Pool("english", 600, 5),
        Pool("english", 900, 10),
        Pool("pool", 180, 2),
        Pool("pool", 300, 3),
        Pool("pool", 600, 5),
        # Correspondence: a seek stays while its player is away, and is paired all the same
        # (the game waits for them: a day for a first move).
        Pool("english", 3 * DAY_S, 0),
        Pool("pool", 3 * DAY_S, 0),
    )
}

# The pools whose seeks stay while their players are away (their processes too).
CORRESPONDENCE_POOLS = frozenset(pool.id for pool in POOLS.values() if pool.days is not None)


@dataclass(frozen=True, slots=True)
class Seeker:
    user: PlayerRef
    rated: bool
    rating: float
    since: float  # Unix seconds

    def reach(self, now: float) -> float:
        return RANGE_START + RANGE_PER_SECOND * max(0.0, now - self.since)


def match(seekers: list[Seeker], now: float) -> list[tuple[Seeker, Seeker]]:
    """Pairs among `seekers` (oldest first): each, oldest first, with the nearest rating
    within both players' ranges, of the same rated-or-casual choice."""
    pairs: list[tuple[Seeker, Seeker]] = []
    for rated in (False, True):
        group = [s for s in seekers if s.rated is rated]
        by_rating = sorted(range(len(group)), key=lambda i: group[i].rating)
        ratings_sorted = [group[i].rating for i in by_rating]
        taken = [False] * len(group)
        for i, seeker in enumerate(group):
            if taken[i]:
                continue
            reach = seeker.reach(now)
            best: int | None = None
            best_key = (0.0, 0.0)
            low = bisect.bisect_left(ratings_sorted, seeker.rating - reach)
            high = bisect.bisect_right(ratings_sorted, seeker.rating + reach)
            for n in range(low, high):
                j = by_rating[n]
                if j == i or taken[j]:
                    continue
                other = group[j]
                gap = abs(other.rating - seeker.rating)
                if gap > other.reach(now):
                    continue
                key = (gap, other.since)
                if best is None or key < best_key:
                    best, best_key = j, key
            if best is not None:
                taken[i] = taken[best] = True
                pairs.append((seeker, group[best]))
    return pairs


def pool_of(pool_id: str) -> Pool:
    pool = POOLS.get(pool_id)
    if pool is None:
        raise PlayError(
            Code.BAD_MESSAGE, f"unknown pool {pool_id!r}; the pools: {', '.join(POOLS)}"
        )
    return pool


async def seek(
    live: LivePlay, user: PlayerRef, pool_id: str, *, rated: bool = False
) -> messages.Seeking:
    """Wait in a pool (instead of wherever the user waited); the pairing step pairs them."""
    pool = pool_of(pool_id)
    # Correspondence games go on beside anything; a live game is one at a time.
    if pool.days is None and await games.playing_for(live, user.id, live_clocks_only=True):
        raise PlayError(Code.GAME_IN_PROGRESS, "finish your game in progress first")
    now = live.clock.time()
    async with live.db.session() as session:
        if await stored_accounts.is_bot(session, user.id):
            raise PlayError(Code.BAD_MESSAGE, "bots do not wait in the pools: they play challenges")
        rating = DEFAULT_RATING
        if rated:
            await ratings.check_may_play_rated(session, user.id)
            for row in await stored_ratings.of_user(session, user.id):
                if (row.variant, row.category) == (pool.variant, pool.category):
                    rating = row.rating
        await stored.put(session, user.id, pool.id, rated, rating, live.instance, as_datetime(now))
        await session.commit()
    return messages.seeking(pool.id, rated, rating)


async def cancel(live: LivePlay, user_id: int, *, gone: bool = False) -> bool:
    """Stop waiting; False if the user was not waiting (paired meanwhile, or never). `gone`:
    the user's last connection closed, which ends a live pool's seek only."""
    async with live.db.session() as session:
        removed = await stored.remove(session, user_id, keep=CORRESPONDENCE_POOLS if gone else ())
        await session.commit()
    return removed


def _seekers(rows: list[tuple[int, str, bool, float, datetime]]) -> list[Seeker]:
    return [
        Seeker(PlayerRef(user_id, name), rated, rating, as_unix(since))
        for user_id, name, rated, rating, since in rows
    ]


async def pair(live: LivePlay, pool_id: str) -> int:
    """One pairing step of a pool: the games of the pairs it makes start. Returns how many.

    The pairs are stored `BATCH` at a time, each batch in a transaction of its own that locks
    and matches the pool afresh: the first players paired do not wait for a whole crowd's
    games to be stored."""
    pool = POOLS.get(pool_id)
    if pool is None:  # a pool no longer offered: its seeks never pair
        return 0
    made = 0
    while True:
        batch = await _pair_batch(live, pool)
        if batch is None:
            return made
        for table, lg, events in batch:
            await seating.started(live, table, lg, events)
        made += len(batch)
        if len(batch) < BATCH:
            return made


async def _pair_batch(
    live: LivePlay, pool: Pool
) -> list[tuple[TableInfo, LiveGame, list[StoredEvent]]] | None:
    """Lock the pool's free seeks, match them, and store the games of the first `BATCH`
    pairs; None if none was stored."""
    made: list[tuple[TableInfo, LiveGame, list[StoredEvent]]] = []
    async with live.db.session() as session:
        seekers = _seekers(await stored.lock_pool(session, pool.id))
        for one, two in match(seekers, live.clock.time())[:BATCH]:
            black, white = (one.user, two.user) if random.random() < 0.5 else (two.user, one.user)
            if not await stored.take(session, [black.id, white.id]):
                await session.rollback()  # paired elsewhere meanwhile (SQLite): next step
                return None
            made.append(
                await seating.seat_two(
                    live,
                    session,
                    black,
                    white,
                    variant=pool.variant,
                    clock_base_s=pool.base_s,
                    clock_increment_s=pool.increment_s,
                    rated=one.rated,
                )
            )
        if not made:
            return None
        await session.commit()
    return made


async def pair_all(live: LivePlay) -> int:
    """A pairing step of every pool where someone waits, after dropping the seeks of users
    whose server process has died."""
    async with live.db.session() as session:
        now = live.clock.now()
        alive = await heartbeat.alive(session, now, live.settings.heartbeat_seconds)
        await stored.remove_dead(session, alive | {live.instance}, CORRESPONDENCE_POOLS)
        await session.commit()
        pools = await stored.pools(session)
    made = 0
    for pool_id in pools:
        made += await pair(live, pool_id)
    return made


async def waiting(live: LivePlay) -> list[dict[str, Any]]:
    """The pools, each with how many wait in it now."""
    async with live.db.session() as session:
        counts = await stored.waiting(session)
    return [pool.payload() | {"waiting": counts.get(pool.id, 0)} for pool in POOLS.values()]


async def run(live: LivePlay) -> None:
    """Run `pair_all` every `PAIRING_SECONDS`, whatever fails (it is tried again)."""
    while True:
        await live.clock.sleep(PAIRING_SECONDS)
        try:
            await pair_all(live)
        except asyncio.CancelledError:
            raise
        except Exception:
            logger.warning("the pairing step failed; retrying", exc_info=True)
