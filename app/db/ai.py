"""Storage of the computer opponent: its users (one per level) and which server process plays
its moves in each game in progress (`games.ai_driver`)."""

from __future__ import annotations

from collections.abc import Collection

from sqlalchemy import or_, select, update

from app.db.models import Game, User
from app.db.table_log import Executor
from app.status import GameStatus

AI_KIND = "ai"
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
