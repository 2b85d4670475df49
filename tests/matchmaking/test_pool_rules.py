"""Quick pairing: who is paired with whom (nearest rating, ranges widening with the wait,
rated apart from casual, oldest first), and each seek paired once when two processes run the
pairing step at once (PostgreSQL: `FOR UPDATE SKIP LOCKED`; SQLite: one writer at a time)."""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import AsyncIterator

import pytest
from sqlalchemy import func, select

from app.broker.memory import MemoryBroker
from app.db.engine import Database
from app.db.models import Game, Seek, User
from app.live.liveplay import LivePlay
from app.matchmaking import pools as pairing
from app.matchmaking.pools import Seeker, match
from app.play.players import PlayerRef
from tests.conftest import make_settings

NOW = 1_000_000.0


def seeker(user_id: int, rating: float, waited: float = 0.0, rated: bool = False) -> Seeker:
    return Seeker(PlayerRef(user_id, f"p{user_id}"), rated, rating, NOW - waited)


def ids(pairs: list[tuple[Seeker, Seeker]]) -> list[tuple[int, int]]:
    return [(a.user.id, b.user.id) for a, b in pairs]


def test_the_nearest_rating_within_range_is_chosen() -> None:
    seekers = [seeker(1, 1500, 3), seeker(2, 1590, 2), seeker(3, 1520, 1), seeker(4, 1580)]
    assert ids(match(seekers, NOW)) == [(1, 3), (2, 4)]


def test_ranges_widen_with_the_wait() -> None:
    apart = [seeker(1, 1500), seeker(2, 1800)]
    assert match(apart, NOW) == []  # ±100 each
    assert match(apart, NOW + 5) == []  # ±200 each
    assert ids(match(apart, NOW + 10)) == [(1, 2)]  # ±300 each
    # Both players' ranges must reach: a newcomer's ±100 does not take the old seek's ±700.
    old_and_new = [seeker(1, 1500, 30), seeker(2, 1800)]
    assert match(old_and_new, NOW) == []
    assert pairing.RANGE_START == 100 and pairing.RANGE_PER_SECOND == 20


def test_rated_and_casual_seeks_are_kept_apart_and_the_oldest_comes_first() -> None:
    seekers = [seeker(1, 1500, 5, rated=True), seeker(2, 1500, 4), seeker(3, 1510, 3, rated=True)]
    assert ids(match(seekers, NOW)) == [(1, 3)]
    # The oldest seek is served first, even if two others are nearer each other.
    crowd = [seeker(1, 1500, 9), seeker(2, 1560, 1), seeker(3, 1570, 1)]
    assert ids(match(crowd, NOW)) == [(1, 2)]


def test_the_pools_are_a_fixed_documented_list() -> None:
    assert "english-5+3" in pairing.POOLS and "pool-10+5" in pairing.POOLS
    assert pairing.POOLS["english-5+3"].name == "English 5+3"
    assert pairing.POOLS["pool-10+5"].payload()["clock"] == {"base": 600, "increment": 5}


@pytest.fixture
async def two_processes(db_url: str) -> AsyncIterator[tuple[LivePlay, LivePlay]]:
    """Two live-play registries on separate connection pools: two server processes' worth."""
    made = []
    for name in ("one", "two"):
        broker = MemoryBroker()
        await broker.connect()
        live = LivePlay(Database(db_url), broker, make_settings(database_url=db_url))
        live.instance = name
        made.append(live)
    try:
        yield made[0], made[1]
    finally:
        for live in made:
            await live.stop()
            await live.broker.disconnect()
            await live.db.dispose()


async def test_two_processes_pairing_at_once_pair_each_seek_once(
    two_processes: tuple[LivePlay, LivePlay],
) -> None:
    one, two = two_processes
    players = 40
    async with one.db.session() as session:
        users = [User(name=f"seeker{n}", kind="guest") for n in range(players)]
        session.add_all(users)
        await session.commit()
        refs = [PlayerRef(u.id, u.name) for u in users]
    for n, ref in enumerate(refs):
        await pairing.seek(one if n % 2 else two, ref, "english-5+3")
    made = 0
    for _ in range(players):
        counts = await asyncio.gather(
            pairing.pair(one, "english-5+3"), pairing.pair(two, "english-5+3")
        )
        made += sum(counts)
        async with one.db.session() as session:
            if not await session.scalar(select(func.count()).select_from(Seek)):
                break
    assert made == players // 2
    async with one.db.session() as session:
        rows = (await session.execute(select(Game.black_id, Game.white_id))).all()
    seats = Counter(user_id for row in rows for user_id in row)
    assert len(rows) == players // 2
    assert sorted(seats) == sorted(r.id for r in refs) and set(seats.values()) == {1}


async def test_the_seeks_of_a_dead_process_are_dropped(
    two_processes: tuple[LivePlay, LivePlay],
) -> None:
    one, gone = two_processes
    async with one.db.session() as session:
        users = [User(name=f"seeker{n}", kind="guest") for n in range(2)]
        session.add_all(users)
        await session.commit()
        mine, theirs = (PlayerRef(u.id, u.name) for u in users)
    await pairing.seek(gone, theirs, "pool-10+5")  # "two" never beat: not alive
    await pairing.seek(one, mine, "english-5+3")
    assert await pairing.pair_all(one) == 0
    async with one.db.session() as session:
        left = (await session.execute(select(Seek.user_id, Seek.pool))).all()
    assert [tuple(row) for row in left] == [(mine.id, "english-5+3")]
