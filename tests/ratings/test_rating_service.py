"""`ratings.apply`, run in the transaction that stores a game's end: a rated game of two plies
or more moves both ratings once; casual, aborted and too-short games move nothing; two
transactions rating the same game at once (on PostgreSQL, really at once) rate it once."""

from __future__ import annotations

import asyncio
from datetime import datetime

import pytest
from sqlalchemy import func, select, text

from app.db.engine import Database
from app.db.models import Game as GameRow
from app.db.models import Rating, RatingChange, User
from app.errors import Code
from app.ratings import service as ratings
from app.rules import Result
from app.status import GameStatus
from app.tables import presence_store as stored_presence
from app.timeutil import utcnow
from tests.conftest import make_settings


async def _players(db: Database, *kinds: str) -> list[int]:
    async with db.session() as session:
        users = [User(name=f"p{n}-{kind}", kind=kind) for n, kind in enumerate(kinds)]
        session.add_all(users)
        await session.commit()
        return [u.id for u in users]


async def _ended_game(
    db: Database,
    black: int,
    white: int,
    *,
    rated: bool = True,
    result: str = Result.BLACK_WINS,
    plies: int = 30,
    base: int | None = 300,
    increment: int = 3,
) -> int:
    async with db.session() as session:
        game = GameRow(
            variant="english",
            black_id=black,
            white_id=white,
            status=GameStatus.FINISHED if result != Result.UNFINISHED else GameStatus.ABORTED,
            result=result,
            termination="resignation",
            rated=rated,
            ply_count=plies,
            clock_base_s=base,
            clock_increment_s=increment,
        )
        session.add(game)
        await session.commit()
        return game.id


async def _apply(db: Database, game_id: int, at: datetime | None = None) -> object:
    async with db.session() as session:
        row = await session.get(GameRow, game_id)
        assert row is not None
        change = await ratings.apply(session, row, at or utcnow(), make_settings())
        await session.commit()
        return change


async def _counts(db: Database) -> tuple[list[tuple[int, str, int]], int]:
    async with db.session() as session:
        rows = (
            await session.execute(
                select(Rating.user_id, Rating.category, Rating.games).order_by(Rating.user_id)
            )
        ).all()
        changes = await session.scalar(select(func.count()).select_from(RatingChange))
    return [(r[0], r[1], r[2]) for r in rows], int(changes or 0)


async def test_a_rated_game_moves_both_ratings_once(db: Database) -> None:
    black, white = await _players(db, "registered", "registered")
    game = await _ended_game(db, black, white)
    assert await _apply(db, game) == {
        "black": {"before": 1500, "after": 1741, "diff": 241},
        "white": {"before": 1500, "after": 1258, "diff": -242},
    }
    assert await _apply(db, game) is None  # already rated: nothing more
    assert await _counts(db) == ([(black, "blitz", 1), (white, "blitz", 1)], 2)
    async with db.session() as session:
        shown = await ratings.player_ratings(session, "p0-registered")
    assert [(r.variant, r.category, r.rating, r.games, r.provisional) for r in shown] == [
        ("english", "blitz", 1741, 1, True)
    ]
    assert shown[0].rd == pytest.approx(396.69, abs=0.01)


async def test_a_second_game_starts_from_the_first_games_ratings(db: Database) -> None:
    black, white = await _players(db, "registered", "registered")
    await _apply(db, await _ended_game(db, black, white))
    second = await _ended_game(db, white, black, result=Result.DRAW, base=None)
    change = await _apply(db, second)
    # Untimed is a category of its own: both start again from 1500 there.
    assert change == {
        "black": {"before": 1500, "after": 1500, "diff": 0},
        "white": {"before": 1500, "after": 1500, "diff": 0},
    }
    third = await _ended_game(db, white, black, result=Result.DRAW)
    change = await _apply(db, third)
    assert change is not None
    assert change["black"]["before"] == 1258 and change["white"]["before"] == 1741
    assert change["black"]["diff"] > 0 > change["white"]["diff"]


@pytest.mark.parametrize(
    ("rated", "result", "plies"),
    [
        (False, Result.BLACK_WINS, 30),  # casual
        (True, Result.UNFINISHED, 30),  # aborted
        (True, Result.WHITE_WINS, 1),  # fewer than two plies
        (True, Result.WHITE_WINS, 0),
    ],
)
async def test_games_that_move_no_rating(
    db: Database, rated: bool, result: str, plies: int
) -> None:
    black, white = await _players(db, "registered", "registered")
    game = await _ended_game(db, black, white, rated=rated, result=result, plies=plies)
    assert await _apply(db, game) is None
    assert await _counts(db) == ([], 0)


async def test_guests_may_not_play_rated_games(db: Database) -> None:
    member, visitor = await _players(db, "registered", "guest")
    async with db.session() as session:
        await ratings.check_may_play_rated(session, member)
        with pytest.raises(ratings.RatingError) as refused:
            await ratings.check_may_play_rated(session, visitor)
    assert refused.value.code is Code.RATED_NEEDS_ACCOUNT


async def test_two_transactions_rating_one_game_at_once_rate_it_once(db: Database) -> None:
    if db.engine.dialect.name != "postgresql":
        pytest.skip("SQLite runs one write transaction at a time")
    black, white = await _players(db, "registered", "registered")
    game = await _ended_game(db, black, white)
    async with db.session() as first, db.session() as second:
        row = await first.get(GameRow, game)
        assert row is not None
        assert (
            await ratings.apply(first, row, utcnow(), make_settings()) is not None
        )  # rows locked, no commit
        other = await second.get(GameRow, game)
        assert other is not None
        racing = asyncio.create_task(ratings.apply(second, other, utcnow(), make_settings()))
        async with db.session() as watcher:  # until the second waits for the first's locks
            while not await watcher.scalar(
                text(
                    "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()"
                    " AND wait_event_type = 'Lock'"
                )
            ):
                assert not racing.done()
                await asyncio.sleep(0.01)
        await first.commit()
        assert await racing is None
        await second.commit()
    assert await _counts(db) == ([(black, "blitz", 1), (white, "blitz", 1)], 2)


async def test_concurrent_games_of_one_player_each_count(db: Database) -> None:
    """Two games ending at once for the same player both move that rating (row locks in id
    order, so they wait for each other rather than deadlock or overwrite)."""
    a, b, c = await _players(db, "registered", "registered", "registered")
    one = await _ended_game(db, a, b)
    two = await _ended_game(db, c, a)
    await asyncio.gather(_apply(db, one), _apply(db, two))
    rows, changes = await _counts(db)
    assert (a, "blitz", 2) in rows and changes == 4


async def test_rating_a_game_does_not_wait_for_a_presence_change_of_its_player(
    db: Database,
) -> None:
    """A presence change locks the user's row and then their games' rows; an ending holds its
    game's row and then writes `rating_changes`, whose key refers to the user. The presence
    lock leaves that reference free, so the two cannot deadlock."""
    if db.engine.dialect.name != "postgresql":
        pytest.skip("row locks are PostgreSQL's")
    black, white = await _players(db, "registered", "registered")
    game = await _ended_game(db, black, white)
    async with db.session() as holding, db.session() as ending:
        await stored_presence.lock_user(holding, white)
        await ending.execute(text("SET LOCAL lock_timeout = '5s'"))
        row = await ending.get(GameRow, game)
        assert row is not None
        assert await ratings.apply(ending, row, utcnow(), make_settings()) is not None
        await ending.commit()
        await holding.rollback()
    assert (await _counts(db))[1] == 2
