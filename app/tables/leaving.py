"""A player leaving a table's page: at a table against the computer whose game has ended,
they stand up at once (and the table, the computer left alone, closes), rather than after the
grace period a person's seat is kept for a reload or a rematch."""

from __future__ import annotations

from app.live.liveplay import LivePlay, PlayError
from app.play.players import PlayerRef, read_table
from app.status import TableState
from app.tables import seating


async def left_page(live: LivePlay, user: PlayerRef, table_id: int) -> bool:
    """`user` no longer watches the table from any connection here: stand them up if it is a
    finished table against the computer. True if they stood up."""
    async with live.db.session() as session:
        table = await read_table(session, table_id)
    if (
        table is None
        or table.status != TableState.FINISHED
        or not table.seated(user.id)
        or not any(live.is_ai(p.id) for p in table.players)
    ):
        return False
    try:
        await seating.leave(live, user, table_id)
    except PlayError:  # a rematch started meanwhile, or they stood up already
        return False
    return True
