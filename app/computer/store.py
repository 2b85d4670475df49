"""Storage of the computer opponent: its users (one per level), which server process plays
its moves in each game in progress (`games.ai_driver`), and who has how many games against it
in progress (`games.ai_address`)."""

from __future__ import annotations

import hashlib
from collections.abc import Collection

from sqlalchemy import and_, func, or_, select, text, update
from sqlalchemy.ext.asyncio import AsyncSession

from app.db.models import Game, User
from app.live.log_store import Executor
from app.status import GameStatus, UserKind

AI_KIND = UserKind.AI
NAME_PREFIX = "AI level "


async def players(db: Executor) -> dict[int, int]:
    """The AI's users: user id → level (from the name, "AI level N")."""
    rows = (await db.execute(select(User.id, User.name).where(User.kind == AI_KIND))).all()
    found = {}
    for user_id, name in rows:
        if name.startswith(NAME_PREFIX) and name[len(NAME_PREFIX) :].isdigit():
            found[user_id] = int(name[len(NAME_PREFIX) :])
    return found


async def drivers(db: Executor, ai_ids: Collection[int]) -> list[tuple[int, int, str | None]]:
    """Games in progress against the AI: (game, table, the process that plays its moves or
    None)."""
    if not ai_ids:
        return []
    rows = await db.execute(
        select(Game.id, Game.table_id, Game.ai_driver).where(
            Game.status == GameStatus.PLAYING,
            or_(Game.black_id.in_(ai_ids), Game.white_id.in_(ai_ids)),
        )
    )
    return [(game, table, driver) for game, table, driver in rows.all() if table is not None]


async def claim(db: Executor, game_id: int, instance: str, previous: str | None) -> bool:
    """Make `instance` the game's driver if its driver is still `previous` (conditional: of
    two processes taking over at once, one wins)."""
    current = Game.ai_driver.is_(None) if previous is None else Game.ai_driver == previous
    result = await db.execute(
        update(Game)
        .where(Game.id == game_id, Game.status == GameStatus.PLAYING, current)
        .values(ai_driver=instance)
    )
    return bool(getattr(result, "rowcount", 0))


# --- how many games against the AI a user or an address plays --------------------------------

ADDRESS_LOCK_SPACE = 0x41494144  # "AIAD": the first key of the per-address advisory locks
FORGET_AT_ONCE = 100  # ended games whose address one start clears, at most


async def lock_address(db: Executor, address: str) -> None:
    """Make the games against the AI started from `address` at once take turns counting, until
    the transaction ends (SQLite already serialises write transactions)."""
    conn = await db.connection() if isinstance(db, AsyncSession) else db
    if conn.dialect.name != "postgresql":
        return
    key = int.from_bytes(hashlib.sha256(address.encode()).digest()[:4], "big") - 2**31
    await db.execute(
        text("SELECT pg_advisory_xact_lock(:space, :key)"),
        {"space": ADDRESS_LOCK_SPACE, "key": key},
    )


async def playing_against(db: Executor, user_id: int, ai_ids: Collection[int]) -> int:
    """How many games against the AI (its users `ai_ids`) the user plays now."""
    found = await db.scalar(
        select(func.count())
        .select_from(Game)
        .where(
            Game.status == GameStatus.PLAYING,
            or_(
                and_(Game.black_id == user_id, Game.white_id.in_(ai_ids)),
                and_(Game.white_id == user_id, Game.black_id.in_(ai_ids)),
            ),
        )
    )
    return int(found or 0)


async def playing_from(db: Executor, address: str) -> int:
    """How many games against the AI started from `address` are in progress."""
    found = await db.scalar(
        select(func.count())
        .select_from(Game)
        .where(Game.ai_address == address, Game.status == GameStatus.PLAYING)
    )
    return int(found or 0)


async def forget_addresses(db: Executor) -> None:
    """Clear the address of games against the AI that have ended (a few at a time, skipping
    rows another transaction holds): an address is kept only while it counts."""
    ended = (
        select(Game.id)
        .where(Game.ai_address.is_not(None), Game.status != GameStatus.PLAYING)
        .limit(FORGET_AT_ONCE)
        .with_for_update(skip_locked=True)
    )
    await db.execute(update(Game).where(Game.id.in_(ended)).values(ai_address=None))
