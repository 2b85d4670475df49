"""Games for the archive tests: real legal moves from the rules engine, stored as live play does."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from app.db.models import Game, Move, Room, User
from app.rules import Game as RulesGame


def at(day: str, seconds: int = 0) -> datetime:
    """A UTC time on `day` (YYYY-MM-DD), `seconds` after midnight."""
    return datetime.fromisoformat(day).replace(tzinfo=UTC) + timedelta(seconds=seconds)


async def user(session: AsyncSession, name: str) -> int:
    found = await session.scalar(select(User.id).where(User.name == name))
    if found is not None:
        return found
    account = User(name=name, kind="registered")
    session.add(account)
    await session.flush()
    return account.id


async def add_game(
    session: AsyncSession,
    *,
    black: str | None,
    white: str | None,
    started_at: datetime,
    variant: str = "english",
    plies: int = 10,
    result: str = "*",
    status: str = "finished",
    termination: str | None = None,
    room: str | None = None,
    rated: bool = False,
    start_fen: str | None = None,
    clock: tuple[int, int] | None = (300, 3),
    seed: int = 0,
) -> int:
    """Store a game of `plies` random legal moves (fewer if the rules end it first)."""
    rng = random.Random(seed)
    game = RulesGame(variant, start_fen=start_fen)
    while game.ply < plies and game.outcome() is None:
        game.play(rng.choice(game.legal_moves()))
    room_id = None
    if room is not None:
        room_id = await session.scalar(select(Room.id).where(Room.slug == room))
    row = Game(
        variant=variant,
        room_id=room_id,
        black_id=None if black is None else await user(session, black),
        white_id=None if white is None else await user(session, white),
        start_fen=start_fen,
        status=status,
        result=result,
        termination=termination,
        clock_base_s=None if clock is None else clock[0],
        clock_increment_s=0 if clock is None else clock[1],
        rated=rated,
        ply_count=game.ply,
        started_at=started_at,
        last_move_at=started_at + timedelta(seconds=5 * game.ply),
        finished_at=None if status == "playing" else started_at + timedelta(seconds=5 * game.ply),
    )
    session.add(row)
    await session.flush()
    left = [None if clock is None else clock[0] * 1000] * 2
    for ply, move in enumerate(game.moves, start=1):
        side = (ply - 1) % 2
        mover_left = left[side]
        if mover_left is not None and clock is not None:
            mover_left = mover_left - 4000 + clock[1] * 1000
            left[side] = mover_left
        session.add(
            Move(
                game_id=row.id,
                ply=ply,
                move=str(move),
                clock_ms=mover_left,
                played_at=started_at + timedelta(seconds=5 * ply),
            )
        )
    await session.flush()
    return row.id
