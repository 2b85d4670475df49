"""Tables: opening one, sitting down (which starts the game), leaving, rematches, chat, closing.

Seats, rematch requests and the table's status are stored. Each change locks the table's row
(`SELECT … FOR UPDATE`), stores itself and its events (`table_log`) in one transaction, and is
announced after the commit; so of two processes racing for a seat, one wins.
"""

from __future__ import annotations

import json
import random
import secrets
from dataclasses import replace
from datetime import datetime
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from app.db import ai as stored_ai
from app.db import games as stored_games
from app.db import presence as presence_db
from app.db import rooms as stored_rooms
from app.db import table_log
from app.db import tables as stored_tables
from app.db.models import MAX_EVENT_SEQ
from app.db.table_log import Executor, StoredEvent
from app.rules import Color, Game, Result, RulesError, Variant, get_variant
from app.services import absences, attendance, events, fair_play, games, ratings
from app.services.clocks import MAX_CLOCK_BASE_S, MAX_CLOCK_INCREMENT_S, GameClock
from app.services.live import (
    LiveGame,
    LivePlay,
    PlayerRef,
    PlayError,
    TableInfo,
    dumps,
    no_table,
    read_listed,
    read_table,
)
from app.services.rooms import find_room, first_open_room, room_payload
from app.status import GameStatus, TableState
from app.timeutil import as_datetime

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


async def _locked(db: Executor, table_id: int) -> TableInfo:
    table = await read_table(db, table_id, lock=True)
    if table is None:
        raise no_table(table_id)
    return table


def _not_seated(table: TableInfo) -> PlayError:
    """The refusal of a seated player's action to someone else: `not_a_player` at a public
    table (listed in the lobby anyway), and as for no table at a private one."""
    if table.private:
        return no_table(table.id)
    return PlayError("not_a_player", f"you do not sit at table {table.id}")


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
        chat_lines = await _chat_history(session, table_id, user_id, version)
    game = None
    if table.game_id is not None:
        game = await games.snapshot(live, table.game_id)
    return {
        "v": version,
        "table": live.table_payload(table, with_invite=table.seated(user_id)),
        "game": game,
        "chat": chat_lines,
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
    return stored


def parse_clock(clock: dict[str, int] | None) -> tuple[int | None, int]:
    if clock is None:
        return None, 0
    base, increment = clock["base"], clock["increment"]
    if not 1 <= base <= MAX_CLOCK_BASE_S or not 0 <= increment <= MAX_CLOCK_INCREMENT_S:
        raise PlayError(
            "bad_message",
            f"clock base must be 1-{MAX_CLOCK_BASE_S} s and increment 0-{MAX_CLOCK_INCREMENT_S} s",
        )
    return base, increment


def checked_start(variant: str, start_fen: str | None) -> tuple[Variant, str | None]:
    """The rules of `variant` and the canonical form of a start position a game can be played
    from (None: the standard start); refused with `bad_message` / `invalid_fen`."""
    try:
        rules_variant = get_variant(variant)
    except ValueError:
        raise PlayError("bad_message", f"unknown variant {variant!r}") from None
    if start_fen is None:
        return rules_variant, None
    try:
        start = Game(rules_variant, start_fen=start_fen)
    except RulesError as exc:
        raise PlayError("invalid_fen", str(exc)) from exc
    if start.outcome() is not None:
        raise PlayError("invalid_fen", f"the game is already over in {start_fen}")
    return rules_variant, start.fen()


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
    rated: bool = False,
) -> dict[str, Any]:
    """Open a table with `user` seated as host; `room_clock` takes the room's default clock.
    A `rated` table's games move both players' ratings: it needs registered accounts and the
    standard start (as lichess, a game from a set position says little about strength)."""
    if colour not in COLOURS:
        raise PlayError("bad_message", "colour must be black, white or random")
    if rated and start_fen is not None:
        raise PlayError("rated_from_position", "rated games start from the standard position")
    if rated and private:
        # Rated games are public: nothing rated is hidden, nothing hidden shows in ratings.
        raise PlayError("rated_not_private", "rated games are public: a private table is casual")
    async with live.db.session() as session:
        # Locked: a room being closed (which closes its open tables) gets no new table, and
        # two tables opened at once in a full room do not both take its last place.
        room = await find_room(session, room_ref, lock=True)
        if room is None:
            raise PlayError("not_found", f"no room {room_ref}")
        if not room.is_open:
            raise PlayError("room_closed", f"room {room.name} is closed")
        name = variant or room.variant
        rules_variant, start_fen = checked_start(name, start_fen)
        if room_clock:
            base, increment = room.clock_base_s, room.clock_increment_s
        else:
            base, increment = parse_clock(clock)
        # Across all rooms, so one user cannot fill rooms; the user's row is locked so that
        # tables opened at once in different rooms (whose locks differ) count each other.
        await stored_tables.lock_host(session, user.id)
        if rated:
            await ratings.check_may_play_rated(session, user.id)
        most = live.settings.tables_per_user
        if await stored_tables.count_hosted(session, user.id) >= most:
            raise PlayError("too_many_tables", f"you already host {most} tables: close one first")
        if await stored_tables.count_open(session, room.id) >= room.table_limit:
            raise PlayError("room_closed", f"room {room.name} has no free table")
        table, created_at = await _store_table(
            session,
            room.id,
            user,
            variant=rules_variant.name,
            clock=(base, increment),
            colour=colour,
            private=private,
            start_fen=start_fen,
            rated=rated,
        )
        # The host as the table reads them, with the rating shown beside their name.
        shown = await read_table(session, table.id)
        table.owner = shown.owner if shown is not None else user
        stored = await live.record(session, table.id, [live.table_update(table)], created_at)
        await session.commit()
    await live.announce(stored)
    await live.publish_lobby(table)
    return live.table_payload(table, with_invite=True)


async def open_ai_table(
    live: LivePlay,
    user: PlayerRef,
    ai: PlayerRef,
    room_ref: str | int | None,
    *,
    variant: str,
    clock: dict[str, int] | None,
    colour: str = "random",
    start_fen: str | None = None,
    address: str | None = None,
) -> dict[str, Any]:
    """Open a table for a game against the computer (`ai`, one of its users) and start it at
    once: `user` sits as host with the colour chosen (or by lot), the AI takes the other seat.
    Never rated, never listed as waiting. `room_ref` None: the first open room of the
    variant. `address`: the client's, counted by AI_GAMES_PER_ADDRESS (None: not counted)."""
    if colour not in COLOURS:
        raise PlayError("bad_message", "colour must be black, white or random")
    rules_variant, start_fen = checked_start(variant, start_fen)
    base, increment = parse_clock(clock)
    async with live.db.session() as session:
        if room_ref is None:
            room = await first_open_room(session, rules_variant.name)
        else:
            room = await find_room(session, room_ref, lock=True)
        if room is None:
            raise PlayError("not_found", f"no room {room_ref}" if room_ref else "no open room")
        if not room.is_open:
            raise PlayError("room_closed", f"room {room.name} is closed")
        await stored_tables.lock_host(session, user.id)
        most = live.settings.tables_per_user
        if await stored_tables.count_hosted(session, user.id) >= most:
            raise PlayError("too_many_tables", f"you already host {most} tables: close one first")
        await _limit_ai_games(live, session, user, address)
        table, _ = await _store_table(
            session,
            room.id,
            user,
            variant=rules_variant.name,
            clock=(base, increment),
            colour=colour,
            start_fen=start_fen,
        )
        user_colour = colour if colour != "random" else random.choice(COLOURS[:2])
        black, white = (user, ai) if user_colour == "black" else (ai, user)
        lg, stored = await _create_game(live, session, table, black, white, ai_address=address)
        await session.commit()
    await started(live, table, lg, stored)
    return live.table_payload(table, with_invite=True)


async def _limit_ai_games(
    live: LivePlay, db: Executor, user: PlayerRef, address: str | None
) -> None:
    """Refuse a new game against the computer beyond AI_GAMES_PER_USER games of `user`'s or
    AI_GAMES_PER_ADDRESS started from `address` in progress (`too_many_ai_games`), so that
    one person cannot keep the computer's workers busy. The caller holds `user`'s row; the
    address's lock makes its starts at once count each other."""
    settings = live.settings
    if address is not None:
        await stored_ai.lock_address(db, address)
        await stored_ai.forget_addresses(db)
    playing = await stored_ai.playing_against(db, user.id, list(live.ai_levels))
    if playing >= settings.ai_games_per_user:
        raise PlayError(
            "too_many_ai_games",
            f"you already play {playing} games against the computer: finish one first",
        )
    if address is not None and await stored_ai.playing_from(db, address) >= (
        most := settings.ai_games_per_address
    ):
        raise PlayError(
            "too_many_ai_games",
            f"{most} games against the computer are in progress from your address: "
            "finish one first",
        )


async def _store_table(
    session: AsyncSession,
    room_id: int,
    host: PlayerRef,
    *,
    variant: str,
    clock: tuple[int | None, int],
    colour: str,
    private: bool = False,
    start_fen: str | None = None,
    rated: bool = False,
) -> tuple[TableInfo, datetime]:
    """Store a new table with `host` in its first seat, in the caller's transaction: the table
    as live play knows it, and when it was made. A private table gets an invite code."""
    base, increment = clock
    row = await stored_tables.create(
        session,
        room_id=room_id,
        owner_id=host.id,
        variant=variant,
        clock_base_s=base,
        clock_increment_s=increment,
        colour=colour,
        is_private=private,
        invite_code=secrets.token_urlsafe(8) if private else None,
        start_fen=start_fen,
        rated=rated,
        event_seq=0,
    )
    table = TableInfo(
        id=row.id,
        room_id=row.room_id,
        variant=row.variant,
        clock_base_s=row.clock_base_s,
        clock_increment_s=row.clock_increment_s,
        colour=row.colour,
        private=row.is_private,
        invite=row.invite_code,
        start_fen=row.start_fen,
        owner=host,
        rated=row.rated,
    )
    return table, row.created_at


async def _create_game(
    live: LivePlay,
    db: Executor,
    table: TableInfo,
    black: PlayerRef,
    white: PlayerRef,
    *,
    rated_seats: bool = False,
    ai_address: str | None = None,
) -> tuple[LiveGame, list[StoredEvent]]:
    """Store a new game at the (locked) table, Black and White now its two seats.
    `rated_seats`: both players come as the table was just read, with their ratings (a
    rematch), so the seats need not be read again to show them. `ai_address`: a game against
    the computer started from that client address."""
    if table.closed:
        raise PlayError("not_found", f"table {table.id} is closed")
    if table.game_status == GameStatus.PLAYING:
        raise PlayError("seat_taken", f"a game is already in progress at table {table.id}")
    now = live.clock.time()
    started = as_datetime(now)
    base_ms = table.clock_base_s * 1000 if table.clock_base_s is not None else None
    # A rated table's game is casual between accounts that shared an address, or past the
    # pair's rated games for the day (`fair_play`).
    rated = table.rated and (
        await fair_play.casual_reason(db, live.settings, black.id, white.id, started) is None
    )
    game_id = await stored_games.create(
        db,
        variant=table.variant,
        room_id=table.room_id,
        table_id=table.id,
        black_id=black.id,
        white_id=white.id,
        start_fen=table.start_fen,
        status=GameStatus.PLAYING,
        result=Result.UNFINISHED,
        clock_base_s=table.clock_base_s,
        clock_increment_s=table.clock_increment_s,
        black_clock_ms=base_ms,
        white_clock_ms=base_ms,
        rated=rated,
        is_private=table.private,
        ply_count=0,
        source="live",
        started_at=started,
        last_move_at=started,
        # A game against the computer: this process plays its moves (`app.services.ai`).
        ai_driver=live.instance if live.is_ai(black.id) or live.is_ai(white.id) else None,
        ai_address=ai_address,
        # No clock runs before both sides' first moves: the first side's is due.
        deadline_at=as_datetime(now + live.settings.first_move_seconds),
    )
    await stored_tables.seat(db, table.id, black.id, white.id)
    if not rated_seats:
        # Both seats as the table now reads them: with the ratings shown beside their names
        # (the player who just sat down came without theirs).
        seated = await read_table(db, table.id)
        if seated is not None and seated.owner is not None and seated.guest is not None:
            black, white = seated.owner, seated.guest
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
        first_move_deadline=now + live.settings.first_move_seconds,
        rated=rated,
        private=table.private,
    )
    table.owner, table.guest, table.rematch = black, white, frozenset()
    table.game_id, table.game_status = game_id, GameStatus.PLAYING
    update = live.table_update(table)
    stored = await live.record(
        db,
        table.id,
        [update, events.game_started(table.id, games.game_payload(live, lg, now), update["state"])],
        started,
    )
    lg.table = replace(table)
    # A host who went offline while the table waited is away from the game from its start.
    # (The computer opponent is never away.)
    elsewhere = [
        p.id for p in (black, white) if not live.connected_here(p.id) and not live.is_ai(p.id)
    ]
    for user_id in await _offline(live, db, elsewhere) if elsewhere else ():
        stored += await absences.mark_away(live, db, user_id, now)
        lg.away[lg.colour_of(user_id) or Color.BLACK] = now
    return lg, stored


async def _offline(live: LivePlay, db: Executor, user_ids: list[int]) -> set[int]:
    """Those of these users with no connection to a live server process."""
    alive = await live.alive.get(db, live.settings.heartbeat_seconds)
    online = await presence_db.online(db, user_ids, alive | {live.instance})
    return set(user_ids) - online


async def seat_two(
    live: LivePlay,
    session: AsyncSession,
    black: PlayerRef,
    white: PlayerRef,
    *,
    variant: str,
    clock_base_s: int | None,
    clock_increment_s: int,
    rated: bool,
) -> tuple[TableInfo, LiveGame, list[StoredEvent]]:
    """Open a table with both players seated and start their game, in the caller's
    transaction (a challenge accepted, a pairing): the caller commits, then calls `started`.
    The table is public, in the variant's first open room; it never waited in the lobby, so
    neither the host's table quota nor the room's table limit applies to it."""
    room = await stored_rooms.first_open(session, variant)
    if room is None:
        raise PlayError("room_closed", f"no room is open for {variant} games")
    if rated:
        for player in (black, white):
            await ratings.check_may_play_rated(session, player.id)
    table, _ = await _store_table(
        session,
        room.id,
        black,
        variant=variant,
        clock=(clock_base_s, clock_increment_s),
        colour="black",
        rated=rated,
    )
    lg, stored = await _create_game(live, session, table, black, white)
    return table, lg, stored


async def started(
    live: LivePlay, table: TableInfo, lg: LiveGame, stored: list[StoredEvent]
) -> None:
    """After the commit that started a game: serve it here, send its events, tell the lobby
    and both players (`your_game`)."""
    games.start(live, lg)
    await live.announce(stored)
    await live.publish_lobby(table)
    await _tell_players(live, lg)


async def _tell_players(live: LivePlay, lg: LiveGame) -> None:
    """Tell each player, on every connection of theirs to any process (watching the table or
    not), that their game has started: `your_game`, through the control channel."""
    for colour, player, opponent in (
        (Color.BLACK, lg.black, lg.white),
        (Color.WHITE, lg.white, lg.black),
    ):
        notice = events.your_game(
            lg.table_id, lg.id, colour.value, opponent.payload(), lg.first_move_deadline
        )
        await live.notify(player.id, notice)


async def sit(live: LivePlay, user: PlayerRef, table_id: int, invite: str | None = None) -> None:
    """Take the free seat; the game starts at once, colours as the host chose or by lot."""
    async with live.table_lock(table_id), live.db.engine.connect() as session:
        table = await _locked(session, table_id)
        if table.closed or not may_see(table, user.id, invite):
            raise no_table(table_id)
        players = table.players
        if any(p.id == user.id for p in players):
            raise PlayError("seat_taken", "you already sit at this table")
        if len(players) >= 2:
            raise PlayError("seat_taken", f"both seats at table {table_id} are taken")
        if not players:
            raise PlayError("not_found", f"table {table_id} has no host")
        if table.rated:
            await ratings.check_may_play_rated(session, user.id)
        host = players[0]
        host_colour = table.colour if table.colour != "random" else random.choice(COLOURS[:2])
        black, white = (host, user) if host_colour == "black" else (user, host)
        lg, stored = await _create_game(live, session, table, black, white)
        await session.commit()
    await started(live, table, lg, stored)


async def rematch(
    live: LivePlay, user: PlayerRef, table_id: int, address: str | None = None
) -> None:
    """Ask for a rematch; when both players have asked, a new game starts, colours swapped.
    Against the computer it starts at once, within the limits of a new game against it
    (`address`: the client's, as for `open_ai_table`)."""
    async with live.table_lock(table_id), live.db.engine.connect() as session:
        table = await _locked(session, table_id)
        players = table.players
        if not table.seated(user.id):
            raise _not_seated(table)
        if table.status != TableState.FINISHED or len(players) != 2:
            raise PlayError("too_early", "a rematch needs a finished game and both players")
        asking = table.rematch | {user.id}
        # The computer opponent always accepts a rematch.
        asking |= {p.id for p in players if live.is_ai(p.id)}
        if len(asking) < 2:
            table.rematch = asking
            await stored_tables.ask_rematch(session, table_id, asking)
            stored = await live.record(
                session,
                table_id,
                [
                    events.rematch_offered(table_id, user.payload()),
                    live.table_update(table),
                ],
                live.clock.now(),
            )
            await session.commit()
            await live.announce(stored)
            await live.publish_lobby(table)
            return
        last_black, last_white = players
        against_ai = any(live.is_ai(p.id) for p in players)
        if against_ai:
            await stored_tables.lock_host(session, user.id)
            await _limit_ai_games(live, session, user, address)
        lg, stored = await _create_game(
            live,
            session,
            table,
            last_white,
            last_black,
            rated_seats=True,
            ai_address=address if against_ai else None,
        )
        await session.commit()
    await started(live, table, lg, stored)


async def leave(live: LivePlay, user: PlayerRef, table_id: int) -> None:
    """Stand up; the other player becomes the host, and an empty table closes."""
    async with live.table_lock(table_id), live.db.engine.connect() as session:
        table = await _locked(session, table_id)
        if not table.seated(user.id):
            raise _not_seated(table)
        if table.status == TableState.PLAYING:
            raise PlayError("game_in_progress", "resign or abort the game before leaving")
        # The computer opponent does not stay alone at a table: it closes.
        remaining = [p for p in table.players if p.id != user.id and not live.is_ai(p.id)]
        now = live.clock.now()
        table.guest, table.rematch = None, frozenset()
        if remaining:
            table.owner = remaining[0]
            await stored_tables.hand_over(session, table_id, remaining[0].id)
        else:
            table.closed = True
            await stored_tables.close(session, table_id, now)
        await attendance.forget(session, table_id, None if table.closed else user.id)
        out: list[events.TableEvent] = [live.table_update(table)]
        if table.closed:
            out.append(events.table_closed(table_id, "everyone left"))
        stored = await live.record(session, table_id, out, now)
        await session.commit()
    await live.announce(stored)
    await live.publish_lobby(table)


async def seats_of(db: Executor, user_ids: list[int] | None) -> list[tuple[int, int]]:
    """(table, user) for every seat held at a table without a game in progress, by these
    users (None: by anyone)."""
    if user_ids is not None and not user_ids:
        return []
    return [
        (table_id, user_id)
        for table_id, owner, guest in await stored_tables.seats_without_game(db, user_ids)
        for user_id in (owner, guest)
        if user_id is not None and (user_ids is None or user_id in user_ids)
    ]


async def leave_waiting(live: LivePlay, user: PlayerRef) -> None:
    """Stand up from every table where `user` sits without a game in progress: the tables
    they host, and those where their game has ended."""
    async with live.db.session() as session:
        seats = await seats_of(session, [user.id])
    for table_id, _ in sorted(seats):
        try:
            await leave(live, user, table_id)
        except PlayError:
            continue  # a game started there meanwhile, or they stood up already


async def chat(
    live: LivePlay, user: PlayerRef, table_id: int, text: str, *, watching: bool = False
) -> None:
    """Say something at a table: allowed to its players, and to those `watching` it (a watch
    the server granted, so a private table's invite was checked). Anyone else is told the
    same whether the table exists or not."""
    text = text.strip()
    if not text:
        raise PlayError("bad_message", "empty chat message")
    if len(text) > live.settings.chat_max_length:
        raise PlayError(
            "bad_message", f"chat messages are at most {live.settings.chat_max_length} characters"
        )
    async with live.db.engine.connect() as session:
        table = await read_table(session, table_id)
        if not watching and (table is None or not table.seated(user.id)):
            raise PlayError("not_found", f"watch table {table_id} to chat there")
        if table is None or table.closed:
            raise no_table(table_id)
        stored = await live.record(
            session, table_id, [_chat_line(table, user, text)], live.clock.now()
        )
        await session.commit()
    await live.announce(stored)


def _chat_line(table: TableInfo, user: PlayerRef, text: str) -> events.Chat:
    """A seated player writes to the players' channel, anyone else to the spectators'; during
    a game the spectators' lines are kept from its two players."""
    if table.seated(user.id):
        return events.chat(table.id, user.payload(), text, "players")
    hidden = [p.id for p in table.players] if table.status == TableState.PLAYING else None
    return events.chat(table.id, user.payload(), text, "spectators", hidden)


_CHAT_HEAD = '{"type":"chat",'
_HIDDEN = '"hide_from":'
CHAT_HISTORY = 50  # chat lines in a table snapshot


def kept_from(event: StoredEvent) -> tuple[str, frozenset[int]] | None:
    """For a spectators' line written during a game: the frame clients get (without the
    stored list of whom it must not reach) and the players it is kept from; None for any
    other event (its frame goes to everyone)."""
    payload = event.payload
    if not payload.startswith(_CHAT_HEAD) or _HIDDEN not in payload:
        return None
    data = json.loads(payload)
    hidden = frozenset(data.pop("hide_from", ()))
    return dumps({"v": event.seq} | data), hidden


def withheld_frame(event: StoredEvent) -> str:
    """What a player receives instead of a spectators' line kept from them: only the event's
    number, so that the table's numbering reaches them without a gap."""
    return dumps({"v": event.seq, "type": "chat_withheld", "table": event.table_id})


def frame_for(event: StoredEvent, user_id: int | None) -> str:
    """The event's frame as `user_id` may receive it (`withheld_frame` for a line kept from
    them)."""
    kept = kept_from(event)
    if kept is None:
        return event.frame
    frame, hidden = kept
    return withheld_frame(event) if user_id is not None and user_id in hidden else frame


async def _chat_history(
    db: Executor, table_id: int, user_id: int | None, upto: int
) -> list[dict[str, Any]]:
    """The table's last `CHAT_HISTORY` chat lines up to event `upto` that `user_id` may see,
    oldest first, as the `chat` events show them."""
    found: list[dict[str, Any]] = []
    while len(found) < CHAT_HISTORY:
        rows = await table_log.latest_starting(db, table_id, _CHAT_HEAD, upto, CHAT_HISTORY)
        for event in rows:
            line = json.loads(frame_for(event, user_id))
            if line["type"] == "chat" and len(found) < CHAT_HISTORY:
                found.append(line)
        if len(rows) < CHAT_HISTORY:
            break
        upto = rows[-1].seq - 1
    return found[::-1]


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
