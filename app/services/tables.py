"""Tables: opening one, sitting down (which starts the game), leaving, rematches, chat, closing.

Seat changes are serialised per table by a lock in this process and, across processes, by
locking the table's row (`SELECT … FOR UPDATE`) in the transaction that starts a game.
"""

from __future__ import annotations

import random
import secrets
import time
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import func, insert, select, update

from app.db.models import Game as GameRow
from app.db.models import GameTable, Room, User
from app.rules import Game, RulesError, get_variant
from app.services import games
from app.services.clocks import GameClock
from app.services.live import (
    LiveGame,
    LivePlay,
    PlayerRef,
    PlayError,
    TableInfo,
    table_channel,
)
from app.services.rooms import find_room, room_payload

MAX_WAITING_TABLES = 3
MAX_CLOCK_BASE_S = 3 * 3600
MAX_CLOCK_INCREMENT_S = 180
COLOURS = ("black", "white", "random")


def _info(row: GameTable, owner: PlayerRef | None, game_id: int | None) -> TableInfo:
    return TableInfo(
        id=row.id,
        room_id=row.room_id,
        variant=row.variant,
        clock_base_s=row.clock_base_s,
        clock_increment_s=row.clock_increment_s,
        colour=row.colour,
        private=row.is_private,
        invite=row.invite_code,
        start_fen=row.start_fen,
        owner=owner,
        closed=row.status == "closed",
        game_id=game_id,
    )


async def load_table(live: LivePlay, table_id: int) -> TableInfo:
    """The table as stored now (host, open/closed, latest game), with its game in progress
    cached in this process."""
    async with live.db.session() as session:
        row = await session.get(GameTable, table_id)
        if row is None:
            raise PlayError("not_found", f"no table {table_id}")
        owner = None
        if row.owner_id is not None:
            name = await session.scalar(select(User.name).where(User.id == row.owner_id))
            owner = PlayerRef(row.owner_id, name or "?")
        latest = (
            await session.execute(
                select(GameRow.id, GameRow.status)
                .where(GameRow.table_id == table_id)
                .order_by(GameRow.id.desc())
                .limit(1)
            )
        ).first()
    info = _info(row, owner, latest[0] if latest else None)
    if latest is not None and latest[1] == "playing":
        await games.load(live, latest[0])
    live.tables[table_id] = info
    return info


def _may_see(table: TableInfo, user_id: int | None, invite: str | None, live: LivePlay) -> bool:
    if not table.private or (invite is not None and invite == table.invite):
        return True
    return user_id is not None and any(p.id == user_id for p in live.players_at(table))


async def snapshot(
    live: LivePlay, table_id: int, user_id: int | None, invite: str | None = None
) -> dict[str, Any]:
    """The table and its latest game, for a watcher; private tables need the invite code."""
    table = await load_table(live, table_id)
    if not _may_see(table, user_id, invite, live):
        raise PlayError("not_found", f"no table {table_id}")
    seated = user_id is not None and any(p.id == user_id for p in live.players_at(table))
    game = None
    if table.game_id is not None:
        game = await games.snapshot(live, table.game_id)
    return {"table": live.table_payload(table, with_invite=seated), "game": game}


def _parse_clock(clock: dict[str, int] | None) -> tuple[int | None, int]:
    if clock is None:
        return None, 0
    base, increment = clock["base"], clock["increment"]
    if not 1 <= base <= MAX_CLOCK_BASE_S or not 0 <= increment <= MAX_CLOCK_INCREMENT_S:
        raise PlayError(
            "bad_message",
            f"clock base must be 1-{MAX_CLOCK_BASE_S} s and increment 0-{MAX_CLOCK_INCREMENT_S} s",
        )
    return base, increment


async def open_table(
    live: LivePlay,
    user: PlayerRef,
    room_ref: str | int,
    *,
    variant: str | None = None,
    clock: dict[str, int] | None = None,
    room_clock: bool = True,
    colour: str = "random",
    private: bool = False,
    start_fen: str | None = None,
) -> dict[str, Any]:
    """Open a table with `user` seated as host; `room_clock` takes the room's default clock."""
    if colour not in COLOURS:
        raise PlayError("bad_message", "colour must be black, white or random")
    async with live.db.session() as session:
        # Locked: a room being closed (which closes its open tables) gets no new table, and
        # two tables opened at once in a full room do not both take its last place.
        room = await find_room(session, room_ref, lock=True)
        if room is None:
            raise PlayError("not_found", f"no room {room_ref}")
        if not room.is_open:
            raise PlayError("room_closed", f"room {room.name} is closed")
        name = variant or room.variant
        try:
            rules_variant = get_variant(name)
        except ValueError:
            raise PlayError("bad_message", f"unknown variant {name!r}") from None
        if start_fen is not None:
            try:
                start = Game(rules_variant, start_fen=start_fen)
            except RulesError as exc:
                raise PlayError("invalid_fen", str(exc)) from exc
            if start.outcome() is not None:
                raise PlayError("invalid_fen", f"the game is already over in {start_fen}")
            start_fen = start.fen()
        if room_clock:
            base, increment = room.clock_base_s, room.clock_increment_s
        else:
            base, increment = _parse_clock(clock)
        waiting = await session.scalar(
            select(func.count())
            .select_from(GameTable)
            .where(GameTable.owner_id == user.id, GameTable.status == "open")
        )
        if (waiting or 0) >= MAX_WAITING_TABLES:
            raise PlayError("seat_taken", f"you already host {MAX_WAITING_TABLES} tables")
        tables_in_room = await session.scalar(
            select(func.count())
            .select_from(GameTable)
            .where(GameTable.room_id == room.id, GameTable.status == "open")
        )
        if (tables_in_room or 0) >= room.table_limit:
            raise PlayError("room_closed", f"room {room.name} has no free table")
        row = GameTable(
            room_id=room.id,
            owner_id=user.id,
            variant=rules_variant.name,
            clock_base_s=base,
            clock_increment_s=increment,
            colour=colour,
            is_private=private,
            invite_code=secrets.token_urlsafe(8) if private else None,
            start_fen=start_fen,
        )
        session.add(row)
        await session.commit()
    table = _info(row, user, None)
    live.tables[table.id] = table
    await live.publish_table(table)
    return live.table_payload(table, with_invite=True)


async def _create_game(
    live: LivePlay, table: TableInfo, black: PlayerRef, white: PlayerRef
) -> LiveGame:
    """Store a new game at the table, unless the table closed or a game started meanwhile."""
    now = time.time()
    base_ms = table.clock_base_s * 1000 if table.clock_base_s is not None else None
    async with live.db.engine.begin() as conn:
        status = await conn.scalar(
            select(GameTable.status).where(GameTable.id == table.id).with_for_update()
        )
        if status != "open":
            raise PlayError("not_found", f"table {table.id} is closed")
        busy = await conn.scalar(
            select(GameRow.id).where(GameRow.table_id == table.id, GameRow.status == "playing")
        )
        if busy is not None:
            raise PlayError("seat_taken", f"a game is already in progress at table {table.id}")
        started = datetime.fromtimestamp(now, UTC)
        game_id = await conn.scalar(
            insert(GameRow)
            .values(
                variant=table.variant,
                room_id=table.room_id,
                table_id=table.id,
                black_id=black.id,
                white_id=white.id,
                start_fen=table.start_fen,
                status="playing",
                result="*",
                clock_base_s=table.clock_base_s,
                clock_increment_s=table.clock_increment_s,
                black_clock_ms=base_ms,
                white_clock_ms=base_ms,
                rated=False,
                ply_count=0,
                source="live",
                started_at=started,
                last_move_at=started,
            )
            .returning(GameRow.id)
        )
    assert game_id is not None
    clock = None
    if base_ms is not None:
        clock = GameClock(table.clock_increment_s * 1000, base_ms, base_ms, now)
    lg = LiveGame(
        id=game_id,
        table_id=table.id,
        room_id=table.room_id,
        variant=table.variant,
        start_fen=table.start_fen,
        black=black,
        white=white,
        game=Game(get_variant(table.variant), start_fen=table.start_fen),
        clock=clock,
    )
    games.start(live, lg)
    table.game_id = game_id
    live.seated_after.pop(table.id, None)
    live.rematch.pop(table.id, None)
    await live.publish_table(table)
    await live.publish(
        table_channel(table.id),
        {"type": "game_started", "table": table.id, "game": games.game_payload(live, lg, now)},
    )
    return lg


async def sit(live: LivePlay, user: PlayerRef, table_id: int, invite: str | None = None) -> None:
    """Take the free seat; the game starts at once, colours as the host chose or by lot."""
    async with live.table_lock(table_id):
        table = await load_table(live, table_id)
        if table.closed or not _may_see(table, user.id, invite, live):
            raise PlayError("not_found", f"no table {table_id}")
        players = live.players_at(table)
        if any(p.id == user.id for p in players):
            raise PlayError("seat_taken", "you already sit at this table")
        if len(players) >= 2:
            raise PlayError("seat_taken", f"both seats at table {table_id} are taken")
        if not players:
            raise PlayError("not_found", f"table {table_id} has no host")
        host = players[0]
        host_colour = table.colour if table.colour != "random" else random.choice(COLOURS[:2])
        black, white = (host, user) if host_colour == "black" else (user, host)
        await _create_game(live, table, black, white)


async def rematch(live: LivePlay, user: PlayerRef, table_id: int) -> None:
    """Ask for a rematch; when both players have asked, a new game starts, colours swapped.

    Who sits after a game is known only here, so the cached table will do; starting the game
    checks the stored table again."""
    async with live.table_lock(table_id):
        table = live.tables.get(table_id) or await load_table(live, table_id)
        status = live.table_status(table)
        players = live.players_at(table)
        if not any(p.id == user.id for p in players):
            raise PlayError("not_a_player", f"you do not sit at table {table_id}")
        if status != "finished" or len(players) != 2:
            raise PlayError("too_early", "a rematch needs a finished game and both players")
        asking = live.rematch.setdefault(table_id, set())
        asking.add(user.id)
        if len(asking) < 2:
            await live.publish(
                table_channel(table_id),
                {"type": "rematch_offered", "table": table_id, "by": user.payload()},
            )
            await live.publish_table(table)
            return
        last_black, last_white = players
        await _create_game(live, table, last_white, last_black)


async def leave(live: LivePlay, user: PlayerRef, table_id: int) -> None:
    """Stand up; the other player becomes the host, and an empty table closes."""
    async with live.table_lock(table_id):
        table = await load_table(live, table_id)
        players = live.players_at(table)
        if table.closed or not any(p.id == user.id for p in players):
            raise PlayError("not_a_player", f"you do not sit at table {table_id}")
        if live.table_status(table) == "playing":
            raise PlayError("game_in_progress", "resign or abort the game before leaving")
        remaining = [p for p in players if p.id != user.id]
        live.seated_after.pop(table_id, None)
        live.rematch.pop(table_id, None)
        if remaining:
            table.owner = remaining[0]
            values: dict[str, Any] = {"owner_id": remaining[0].id}
        else:
            table.closed = True
            values = {"status": "closed", "closed_at": datetime.now(UTC)}
        async with live.db.engine.begin() as conn:
            await conn.execute(update(GameTable).where(GameTable.id == table_id).values(values))
        await live.publish_table(table)
        if table.closed:
            await live.publish(
                table_channel(table_id),
                {"type": "table_closed", "table": table_id, "reason": "everyone left"},
            )
            live.tables.pop(table_id, None)


async def leave_waiting(live: LivePlay, user: PlayerRef) -> None:
    """Stand up from every table where `user` sits without a game in progress (they went
    offline): the tables they host, and those where their game has ended."""
    async with live.db.session() as session:
        hosted = await session.scalars(
            select(GameTable.id).where(GameTable.owner_id == user.id, GameTable.status == "open")
        )
        table_ids = set(hosted)
    table_ids |= {
        table_id
        for table_id, players in live.seated_after.items()
        if any(p.id == user.id for p in players)
    }
    for table_id in sorted(table_ids):
        try:
            await leave(live, user, table_id)
        except PlayError:
            continue  # a game is in progress there, or someone else hosts it now


async def chat(live: LivePlay, user: PlayerRef, table_id: int, text: str) -> None:
    text = text.strip()
    if not text:
        raise PlayError("bad_message", "empty chat message")
    if len(text) > live.settings.chat_max_length:
        raise PlayError(
            "bad_message", f"chat messages are at most {live.settings.chat_max_length} characters"
        )
    table = live.tables.get(table_id) or await load_table(live, table_id)
    if table.closed:
        raise PlayError("not_found", f"no table {table_id}")
    await live.publish(
        table_channel(table_id),
        {"type": "chat", "table": table_id, "from": user.payload(), "text": text},
    )


async def close_table(live: LivePlay, table_id: int, reason: str) -> None:
    """Close a table by decision (administration); a game in progress there is aborted."""
    async with live.table_lock(table_id):
        table = await load_table(live, table_id)
        if table.closed:
            return
        if table.game_id is not None and table.game_id in live.games:
            await games.finish_game(live, table.game_id, "*", "admin")
        async with live.db.engine.begin() as conn:
            await conn.execute(
                update(GameTable)
                .where(GameTable.id == table_id)
                .values(status="closed", closed_at=datetime.now(UTC))
            )
        table.closed = True
        await _tell_closed(live, table, reason)


async def announce_closing(live: LivePlay, table_id: int, reason: str) -> None:
    """Follow a closing that administration stored itself (in the transaction of its audit
    entry): forget the table's seats in this process and tell its watchers and the lobby."""
    async with live.table_lock(table_id):
        table = await load_table(live, table_id)
        if not table.closed:
            return
        await _tell_closed(live, table, reason)


async def _tell_closed(live: LivePlay, table: TableInfo, reason: str) -> None:
    """Forget a closed table's seats in this process and tell its watchers and the lobby."""
    live.seated_after.pop(table.id, None)
    live.rematch.pop(table.id, None)
    await live.publish_table(table)
    await live.publish(
        table_channel(table.id), {"type": "table_closed", "table": table.id, "reason": reason}
    )
    live.tables.pop(table.id, None)


async def lobby(live: LivePlay) -> list[dict[str, Any]]:
    """Every listed room with its public tables that wait for a player or play."""
    async with live.db.session() as session:
        rooms = (
            await session.scalars(select(Room).where(Room.is_listed.is_(True)).order_by(Room.id))
        ).all()
        table_ids = (
            await session.scalars(
                select(GameTable.id)
                .where(GameTable.status == "open", GameTable.is_private.is_(False))
                .order_by(GameTable.id)
            )
        ).all()
    by_room: dict[int, list[dict[str, Any]]] = {room.id: [] for room in rooms}
    for table_id in table_ids:
        table = live.tables.get(table_id) or await load_table(live, table_id)
        if table.room_id in by_room and not table.closed:
            by_room[table.room_id].append(live.table_payload(table))
    return [room_payload(room) | {"tables": by_room[room.id]} for room in rooms]
