"""Storage of imported games: finished games added in batches, each known by its import key
(a hash of its record), with their moves."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sqlalchemy import insert, select
from sqlalchemy.ext.asyncio import AsyncSession

from app.db.models import Game, Move


async def known_keys(session: AsyncSession, keys: Sequence[str]) -> set[str]:
    """Which of these import keys are stored already."""
    return set(await session.scalars(select(Game.import_key).where(Game.import_key.in_(keys))))


async def add_games(session: AsyncSession, games: Sequence[dict[str, Any]]) -> list[Game]:
    """Add games (their column values), flushed so that they have their ids."""
    rows = [Game(**values) for values in games]
    session.add_all(rows)
    await session.flush()
    return rows


async def add_moves(session: AsyncSession, moves: Sequence[dict[str, Any]]) -> None:
    """Add moves (`game_id`, `ply`, `move`, `played_at`) with one multi-row insert."""
    if moves:
        await session.execute(insert(Move), moves)
