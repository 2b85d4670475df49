"""Storage of the puzzles (`puzzles`, `puzzle_players`, `puzzle_rounds`)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import exists, func, select
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.ext.asyncio import AsyncSession

from app.db.models import Puzzle, PuzzlePlayer, PuzzleRound

NEAR = 12  # puzzles looked at on each side of a rating, one of them chosen


async def count(session: AsyncSession) -> int:
    return int((await session.execute(select(func.count()).select_from(Puzzle))).scalar_one())


async def keys(session: AsyncSession) -> set[str]:
    return set(await session.scalars(select(Puzzle.key)))


async def add_missing(session: AsyncSession, rows: Sequence[dict[str, Any]]) -> int:
    """Insert the puzzles whose key is not stored yet (another process may be doing the same);
    how many were new."""
    if not rows:
        return 0
    before = await count(session)
    make = pg_insert if session.get_bind().dialect.name == "postgresql" else sqlite_insert
    for start in range(0, len(rows), 500):
        await session.execute(
            make(Puzzle).values(list(rows[start : start + 500])).on_conflict_do_nothing()
        )
    return await count(session) - before


async def get(session: AsyncSession, puzzle_id: int, *, lock: bool = False) -> Puzzle | None:
    if lock:
        return (
            await session.scalars(select(Puzzle).where(Puzzle.id == puzzle_id).with_for_update())
        ).first()
    return await session.get(Puzzle, puzzle_id)


async def near(
    session: AsyncSession, variant: str, rating: float, theme: str | None, user_id: int | None
) -> list[Puzzle]:
    """Up to ``NEAR`` puzzles of ``variant`` on each side of ``rating`` (of ``theme``, and not
    tried by ``user_id`` yet), nearest first on each side."""
    query = select(Puzzle).where(Puzzle.variant == variant)
    if theme is not None:
        query = query.where(Puzzle.themes.contains(f" {theme} "))
    if user_id is not None:
        query = query.where(
            ~exists().where(PuzzleRound.user_id == user_id, PuzzleRound.puzzle_id == Puzzle.id)
        )
    above = await session.scalars(
        query.where(Puzzle.rating >= rating).order_by(Puzzle.rating).limit(NEAR)
    )
    below = await session.scalars(
        query.where(Puzzle.rating < rating).order_by(Puzzle.rating.desc()).limit(NEAR)
    )
    return [*above, *below]


async def themes(session: AsyncSession, variant: str) -> dict[str, int]:
    """Each theme of ``variant``'s puzzles, with how many have it."""
    found: dict[str, int] = {}
    for text in await session.scalars(select(Puzzle.themes).where(Puzzle.variant == variant)):
        for theme in text.split():
            found[theme] = found.get(theme, 0) + 1
    return dict(sorted(found.items()))


async def player(session: AsyncSession, user_id: int, *, lock: bool = False) -> PuzzlePlayer | None:
    query = select(PuzzlePlayer).where(PuzzlePlayer.user_id == user_id)
    if lock:
        query = query.with_for_update()
    return (await session.scalars(query)).first()


async def round_of(session: AsyncSession, user_id: int, puzzle_id: int) -> PuzzleRound | None:
    return await session.get(PuzzleRound, (user_id, puzzle_id))


async def rounds(session: AsyncSession, user_id: int, limit: int) -> list[PuzzleRound]:
    """The user's latest tries, newest first."""
    query = (
        select(PuzzleRound)
        .where(PuzzleRound.user_id == user_id)
        .order_by(PuzzleRound.at.desc(), PuzzleRound.puzzle_id.desc())
        .limit(limit)
    )
    return list(await session.scalars(query))


def new_round(
    user_id: int, puzzle_id: int, solved: bool, at: datetime, rating_after: int, diff: int
) -> PuzzleRound:
    return PuzzleRound(
        user_id=user_id,
        puzzle_id=puzzle_id,
        solved=solved,
        at=at,
        rating_after=rating_after,
        rating_diff=diff,
    )
