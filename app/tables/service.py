"""Tables as people see them: who may see one, its snapshot and missed events, the lobby's
list, and the events of its closing. Opening one is `table_opening`, its seats `seating`, its
chat `table_chat`.
"""

from __future__ import annotations

from typing import Any

from app.db.models import MAX_EVENT_SEQ
from app.errors import Code
from app.live import events
from app.live import log_store as table_log
from app.live.liveplay import LivePlay, PlayError, no_table
from app.live.log_store import Executor, StoredEvent
from app.play import games
from app.play import store as stored_games
from app.play import tables_store as stored_tables
from app.play.players import TableInfo, read_listed, read_table
from app.status import TableState
from app.tables import attendance
from app.tables import chat as table_chat
from app.tables.rooms import room_payload

COLOURS = ("black", "white", "random")
LISTED = (TableState.OPEN, TableState.PLAYING)  # what the lobby shows
SNAPSHOT_EVENTS = 500  # a resume that missed more than this gets a snapshot instead


async def load_table(live: LivePlay, table_id: int) -> TableInfo:
    """The table as stored now."""
    async with live.db.session() as session:
        table = await read_table(session, table_id)
    if table is None:
        raise no_table(table_id)
    return table


async def locked(db: Executor, table_id: int) -> TableInfo:
    table = await read_table(db, table_id, lock=True)
    if table is None:
        raise no_table(table_id)
    return table


def not_seated(table: TableInfo) -> PlayError:
    """The refusal of a seated player's action to someone else: `not_a_player` at a public
    table (listed in the lobby anyway), and as for no table at a private one."""
    if table.private:
        return no_table(table.id)
    return PlayError(Code.NOT_A_PLAYER, f"you do not sit at table {table.id}")


def may_see(table: TableInfo, user_id: int | None, invite: str | None) -> bool:
    """Public tables are for everyone; a private one for its players and holders of the code."""
    if not table.private or (invite is not None and invite == table.invite):
        return True
    return table.seated(user_id)


async def snapshot(
    live: LivePlay, table_id: int, user_id: int | None, invite: str | None = None
) -> dict[str, Any]:
    """The table and its latest game for a watcher, with `v`, the number of the table's latest
    event it includes; private tables need the invite code. The number is read first, so the
    state may be newer than it, never older: events after it may repeat what the state shows
    (clients ignore a move whose ply they already hold)."""
    async with live.db.session() as session:
        version = await table_log.head(session, table_id)
        table = await read_table(session, table_id)
        if table is None or not may_see(table, user_id, invite):
            raise no_table(table_id)
        chat_lines, withheld = await table_chat.chat_history(
            session, table_id, user_id, version, after_game=table.status != TableState.PLAYING
        )
        played_in = None
        if table.game_id is not None:
            played_in = await stored_games.tournament_of(session, table.game_id)
    game = None
    if table.game_id is not None:
        game = await games.snapshot(live, table.game_id)
    return {
        "v": version,
        "table": live.table_payload(table, with_invite=table.seated(user_id)),
        "game": game,
        # The tournament its latest game is played in: the page links back to it.
        "tournament": (
            {
                "id": played_in.id,
                "name": played_in.name,
                "kind": played_in.kind,
                "round": played_in.tournament_round,
                "opening": played_in.opening,
            }
            if played_in is not None
            else None
        ),
        "chat": chat_lines,
        # Spectators' lines were kept from this player: shown once the game is over.
        "chat_withheld": withheld,
    }


async def missed(
    live: LivePlay,
    table_id: int,
    since: int,
    user_id: int | None,
    invite: str | None = None,
) -> list[StoredEvent] | None:
    """The table's events after `since` for a client resuming, or None when a snapshot serves
    it better (too many missed, or a number the table never reached). Private tables need the
    same right as their snapshot."""
    async with live.db.session() as session:
        table = await read_table(session, table_id)
        if table is None or not may_see(table, user_id, invite):
            raise no_table(table_id)
        if since > MAX_EVENT_SEQ:  # no log reaches it (nor can the column hold it)
            return None
        stored = await table_log.since(session, table_id, since, SNAPSHOT_EVENTS + 1)
        head = await table_log.head(session, table_id)
    if since > head or len(stored) > SNAPSHOT_EVENTS:
        return None
    if since < head and (not stored or stored[0].seq != since + 1):
        return None  # the log was pruned (`app.live.retention`): only a snapshot serves
    return stored


async def record_closing(
    live: LivePlay, db: Executor, table_id: int, reason: str
) -> list[StoredEvent]:
    """Close a table (its game already ended) in the caller's transaction, with its events."""
    now = live.clock.now()
    await stored_tables.close(db, table_id, now)
    await attendance.forget(db, table_id)
    table = await read_table(db, table_id)
    assert table is not None
    return await live.record(
        db,
        table_id,
        [
            live.table_update(table),
            events.table_closed(table_id, reason),
        ],
        now,
    )


async def lobby(live: LivePlay) -> list[dict[str, Any]]:
    """Every listed room with its public tables that wait for a player or play (a table
    whose game ended is kept for its players' rematch, but no longer listed)."""
    async with live.db.session() as session:
        rooms = await stored_tables.listed_rooms(session)
        by_room: dict[int, list[dict[str, Any]]] = {room.id: [] for room in rooms}
        listed = await read_listed(session, list(by_room))
        for table in listed:  # one query, however many tables (a snapshot per new subscriber)
            if table.status in LISTED:
                by_room[table.room_id].append(live.table_payload(table))
    return [room_payload(room) | {"tables": by_room[room.id]} for room in rooms]
