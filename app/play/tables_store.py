"""Storage of tables: their rows in `tables` (settings, seats, status, rematch requests).

A table's seats change only on its row locked (`read(..., lock=True)`, or `locked`) in the
transaction that changes them, so of two processes racing for a seat one wins; each change is
stated once here: `seat` (a game starts: Black the owner, White the guest), `ask_rematch`,
`hand_over` (the guest leaves, or the owner and the guest becomes the host) and `close` (nobody
left, or an administrator's or a closed room's decision). The table's event log is
`app.live.log_store`.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import (
    ColumnElement,
    and_,
    bindparam,
    case,
    func,
    literal_column,
    or_,
    select,
    update,
)
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import aliased

from app.db.models import Game, GameTable, Rating, Room, User
from app.live.log_store import Executor
from app.ratings.categories import CORRESPONDENCE_FROM_S, MOVES_PER_GAME, UPPER_BOUNDS
from app.status import GameStatus, TableStatus

_OWNER, _GUEST = aliased(User), aliased(User)
_OWNER_RATING, _GUEST_RATING = aliased(Rating), aliased(Rating)
# The rating category of the table's clock, as `app.ratings.category_of` decides it.
_CATEGORY = case(
    (GameTable.clock_base_s.is_(None), literal_column("'untimed'")),
    (
        GameTable.clock_base_s >= literal_column(str(CORRESPONDENCE_FROM_S)),
        literal_column("'correspondence'"),
    ),
    *(
        (
            GameTable.clock_base_s
            + literal_column(str(MOVES_PER_GAME)) * GameTable.clock_increment_s
            < literal_column(str(limit)),
            literal_column(f"'{name}'"),
        )
        for limit, name in UPPER_BOUNDS
    ),
    else_=literal_column("'classical'"),
)


def rating_in_table_category(rating: type[Rating], user: type[User]) -> ColumnElement[bool]:
    """Join condition: `user`'s rating row in the table's variant and clock category."""
    return and_(
        rating.user_id == user.id,
        rating.variant == GameTable.variant,
        rating.category == _CATEGORY,
    )


_LATEST_GAME = (
    select(Game.id)
    .where(Game.table_id == GameTable.id)
    .order_by(Game.id.desc())
    .limit(1)
    .correlate(GameTable)
    .scalar_subquery()
)
# A table with its seats' names and its latest game, in one row: id, room_id, variant,
# clock_base_s, clock_increment_s, colour, is_private, invite_code, start_fen, owner_id, owner's
# name, guest_id, guest's name, status, rematch, the latest game's id and status, rated,
# takebacks; then
# per seat (owner, guest) the account's kind and its rating in the table's variant and category
# (rating, rd, volatility, last_game_at; null without a rating row), by primary key; then each
# seat's takeback preference (owner's, guest's; null for an empty seat).
_TABLE_QUERY = (
    select(
        GameTable.id,
        GameTable.room_id,
        GameTable.variant,
        GameTable.clock_base_s,
        GameTable.clock_increment_s,
        GameTable.colour,
        GameTable.is_private,
        GameTable.invite_code,
        GameTable.start_fen,
        GameTable.owner_id,
        _OWNER.name,
        GameTable.guest_id,
        _GUEST.name,
        GameTable.status,
        GameTable.rematch,
        Game.id,
        Game.status,
        GameTable.rated,
        GameTable.takebacks,
        *(
            column
            for user, rating in ((_OWNER, _OWNER_RATING), (_GUEST, _GUEST_RATING))
            for column in (
                user.kind,
                rating.rating,
                rating.rd,
                rating.volatility,
                rating.last_game_at,
            )
        ),
        _OWNER.takebacks,
        _GUEST.takebacks,
    )
    .outerjoin(_OWNER, _OWNER.id == GameTable.owner_id)
    .outerjoin(_GUEST, _GUEST.id == GameTable.guest_id)
    .outerjoin(_OWNER_RATING, rating_in_table_category(_OWNER_RATING, _OWNER))
    .outerjoin(_GUEST_RATING, rating_in_table_category(_GUEST_RATING, _GUEST))
    .outerjoin(Game, Game.id == _LATEST_GAME)
)


# One table by id, built once: the statement's cache key (its joins make it costly) is then
# computed once, not at every game start.
_READ = _TABLE_QUERY.where(GameTable.id == bindparam("table_id"))
_READ_LOCKED = _READ.with_for_update(of=GameTable)


async def read(db: Executor, table_id: int, *, lock: bool = False) -> Sequence[Any] | None:
    """The table's row as `_TABLE_QUERY` gives it (None: no such table); with `lock`, the
    table's row stays locked until the transaction ends."""
    return (await db.execute(_READ_LOCKED if lock else _READ, {"table_id": table_id})).first()


async def _read_all(db: Executor, *where: ColumnElement[bool]) -> list[Sequence[Any]]:
    rows = await db.execute(_TABLE_QUERY.where(*where).order_by(GameTable.id))
    return list(rows.all())


async def read_listed(db: Executor, room_ids: Collection[int]) -> list[Sequence[Any]]:
    """The open public tables of these rooms, by id, as `read` gives each, in one query."""
    return await _read_all(
        db,
        GameTable.status == TableStatus.OPEN,
        GameTable.is_private.is_(False),
        GameTable.room_id.in_(room_ids),
    )


async def listed_rooms(db: Executor) -> list[Room]:
    """The rooms the lobby lists, by id."""
    return list(
        (await db.scalars(select(Room).where(Room.is_listed.is_(True)).order_by(Room.id))).all()
    )


async def lock_host(db: Executor, user_id: int) -> None:
    """Lock a user's row (`FOR NO KEY UPDATE`: it excludes another opening by the user, not
    the key-share lock of a row referring to the user), so that tables opened at once by one
    user in different rooms count each other."""
    await db.execute(select(User.id).where(User.id == user_id).with_for_update(key_share=True))


async def hosted(db: Executor, user_id: int) -> list[tuple[int, bool]]:
    """The tables the user hosts that count towards TABLES_PER_USER, by id, each with whether
    a game is in progress there: open tables that wait for a player or hold a game in
    progress (a table whose game has ended counts no more, nor does a correspondence game)."""
    rows = await db.execute(
        select(GameTable.id, Game.status)
        .outerjoin(Game, Game.id == _LATEST_GAME)
        .where(
            GameTable.owner_id == user_id,
            GameTable.status == TableStatus.OPEN,
            or_(
                Game.id.is_(None),
                and_(
                    Game.status == GameStatus.PLAYING,
                    # A correspondence game in progress does not count: one plays many.
                    or_(Game.clock_base_s.is_(None), Game.clock_base_s < CORRESPONDENCE_FROM_S),
                ),
            ),
        )
        .order_by(GameTable.id)
    )
    return [(table_id, status == GameStatus.PLAYING) for table_id, status in rows.all()]


async def count_open(db: Executor, room_id: int | None = None) -> int:
    """How many tables are open (in one room, if given)."""
    query = select(func.count()).select_from(GameTable).where(GameTable.status == TableStatus.OPEN)
    if room_id is not None:
        query = query.where(GameTable.room_id == room_id)
    return int(await db.scalar(query) or 0)


async def open_ids(db: Executor, room_id: int | None = None) -> list[int]:
    """The open tables' ids (of one room, if given), in order."""
    query = select(GameTable.id).where(GameTable.status == TableStatus.OPEN).order_by(GameTable.id)
    if room_id is not None:
        query = query.where(GameTable.room_id == room_id)
    return list((await db.scalars(query)).all())


async def create(session: AsyncSession, **values: Any) -> GameTable:
    """Store a new table (the columns of `tables`); its row, with its id and creation time."""
    row = GameTable(**values)
    session.add(row)
    await session.flush()
    return row


async def get(session: AsyncSession, table_id: int) -> GameTable | None:
    """The table's row (not locked)."""
    return await session.get(GameTable, table_id)


async def locked(db: Executor, table_id: int) -> GameTable | None:
    """The table's row, locked until the transaction ends."""
    return await db.scalar(select(GameTable).where(GameTable.id == table_id).with_for_update())


async def locked_open_in_room(db: Executor, room_id: int) -> list[GameTable]:
    """The room's open tables, locked, by id."""
    rows = await db.scalars(
        select(GameTable)
        .where(GameTable.room_id == room_id, GameTable.status == TableStatus.OPEN)
        .order_by(GameTable.id)
        .with_for_update()
    )
    return list(rows.all())


async def is_seated(db: Executor, table_id: int, user_id: int) -> bool:
    """Whether the user sits at the table and it is open."""
    found = await db.scalar(
        select(GameTable.id).where(
            GameTable.id == table_id,
            GameTable.status == TableStatus.OPEN,
            or_(GameTable.owner_id == user_id, GameTable.guest_id == user_id),
        )
    )
    return found is not None


# The two changes of every game start, built once (see `_READ`).
_SEAT = (
    update(GameTable)
    .where(GameTable.id == bindparam("table_id"))
    .values(owner_id=bindparam("black_id"), guest_id=bindparam("white_id"), rematch=None)
)
_ASK_REMATCH = (
    update(GameTable)
    .where(GameTable.id == bindparam("table_id"))
    .values(rematch=bindparam("asking", type_=GameTable.rematch.type))
)


async def seat(db: Executor, table_id: int, black_id: int, white_id: int) -> None:
    """A game starts at the (locked) table: Black is its owner, White its guest, and no
    rematch is asked any more."""
    await db.execute(_SEAT, {"table_id": table_id, "black_id": black_id, "white_id": white_id})


async def ask_rematch(db: Executor, table_id: int, asking: Collection[int]) -> None:
    """Who asked for a rematch at the (locked) table."""
    await db.execute(_ASK_REMATCH, {"table_id": table_id, "asking": sorted(asking)})


async def hand_over(db: Executor, table_id: int, owner_id: int) -> None:
    """One player is left at the (locked) table, as its host."""
    await _set(db, table_id, owner_id=owner_id, guest_id=None, rematch=None)


async def close(db: Executor, table_id: int, at: datetime) -> None:
    """Close the (locked) table: its guest stands up, its rematch requests go."""
    await _set(db, table_id, status=TableStatus.CLOSED, closed_at=at, guest_id=None, rematch=None)


async def _set(db: Executor, table_id: int, **values: Any) -> None:
    await db.execute(update(GameTable).where(GameTable.id == table_id).values(values))


async def seats_without_game(
    db: Executor, user_ids: Collection[int] | None, *, kept: bool = True
) -> list[tuple[int, int | None, int | None]]:
    """(table, owner, guest) for every open table without a game in progress where one of
    these users (None: anyone) sits; `kept` False leaves out the correspondence tables that
    wait for their first game (their seats are kept while their hosts are away)."""
    playing = select(Game.id).where(
        Game.table_id == GameTable.id, Game.status == GameStatus.PLAYING
    )
    query = select(GameTable.id, GameTable.owner_id, GameTable.guest_id).where(
        GameTable.status == TableStatus.OPEN, ~playing.exists()
    )
    if not kept:
        any_game = select(Game.id).where(Game.table_id == GameTable.id)
        query = query.where(
            or_(
                GameTable.clock_base_s.is_(None),
                GameTable.clock_base_s < CORRESPONDENCE_FROM_S,
                any_game.exists(),
            )
        )
    if user_ids is not None:
        query = query.where(or_(GameTable.owner_id.in_(user_ids), GameTable.guest_id.in_(user_ids)))
    rows = await db.execute(query)
    return [(table_id, owner, guest) for table_id, owner, guest in rows.all()]
