"""The seats of a table: sitting down (which starts a game), rematches, leaving; each change on
the table's locked row, stored with its events and announced after the commit. Of two
processes racing for a seat, one wins."""

from __future__ import annotations

import random
import secrets
from dataclasses import replace
from datetime import datetime
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from app.computer import limits as ai_limits
from app.correspondence import service as correspondence
from app.errors import Code
from app.live import events
from app.live.liveplay import LivePlay, PlayError, no_table
from app.live.log_store import Executor, StoredEvent
from app.live.messages import your_game
from app.play import absences, games
from app.play import cache as game_cache
from app.play import store as stored_games
from app.play import tables_store as stored_tables
from app.play.clocks import GameClock, first_move_allowance, is_correspondence, per_move_ms
from app.play.players import LiveGame, PlayerRef, TableInfo, read_table
from app.ratings import fair_play
from app.ratings import service as ratings
from app.rules import Color, Game, Result, get_variant
from app.status import GameStatus, TableState
from app.tables import attendance
from app.tables import presence_store as presence_db
from app.tables import rooms_store as stored_rooms
from app.tables import service as tables
from app.timeutil import as_datetime


async def create_game(
    live: LivePlay,
    db: Executor,
    table: TableInfo,
    black: PlayerRef,
    white: PlayerRef,
    *,
    rated_seats: bool = False,
    ai_address: str | None = None,
    tournament: dict[str, Any] | None = None,
) -> tuple[LiveGame, list[StoredEvent]]:
    """Store a new game at the (locked) table, Black and White now its two seats.
    `rated_seats`: both players come as the table was just read, with their ratings (a
    rematch). `ai_address`: a game against the computer started from that client address.
    `tournament`: a tournament's game, its columns (`tournament_id`, `tournament_round`…)."""
    if table.closed:
        raise PlayError(Code.NOT_FOUND, f"table {table.id} is closed")
    if table.game_status == GameStatus.PLAYING:
        raise PlayError(Code.SEAT_TAKEN, f"a game is already in progress at table {table.id}")
    now = live.clock.time()
    started = as_datetime(now)
    base_ms = table.clock_base_s * 1000 if table.clock_base_s is not None else None
    first_move = first_move_allowance(live.settings.first_move_seconds, table.clock_base_s)
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
        # A game against the computer: this process plays its moves (`app.computer.service`).
        ai_driver=live.instance if live.is_ai(black.id) or live.is_ai(white.id) else None,
        ai_address=ai_address,
        **(tournament or {}),
        # No clock runs before both sides' first moves: the first side's is due.
        deadline_at=as_datetime(now + first_move),
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
        clock = GameClock(
            table.clock_increment_s * 1000,
            base_ms,
            base_ms,
            now,
            per_move_ms=per_move_ms(table.clock_base_s),
        )
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
        first_move_deadline=now + first_move,
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
    if is_correspondence(table.clock_base_s):
        elsewhere = []  # nobody is away from a correspondence game; both are told it started
        assert isinstance(db, AsyncSession)
        await correspondence.started(live, db, lg)
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
    start_fen: str | None = None,
    tournament: dict[str, Any] | None = None,
) -> tuple[TableInfo, LiveGame, list[StoredEvent]]:
    """Open a table with both players seated and start their game, in the caller's
    transaction (a challenge accepted, a pairing): the caller commits, then calls `started`.
    The table is public, in the variant's first open room; it never waited in the lobby, so
    neither quota applies. A tournament's table allows no takebacks."""
    room = await stored_rooms.first_open(session, variant)
    if room is None:
        raise PlayError(Code.ROOM_CLOSED, f"no room is open for {variant} games")
    if rated:
        for player in (black, white):
            await ratings.check_may_play_rated(session, player.id)
    table, _ = await store_table(
        session,
        room.id,
        black,
        variant=variant,
        clock=(clock_base_s, clock_increment_s),
        colour="black",
        rated=rated,
        start_fen=start_fen,
        takebacks=tournament is None,
    )
    lg, stored = await create_game(live, session, table, black, white, tournament=tournament)
    return table, lg, stored


async def started(
    live: LivePlay,
    table: TableInfo,
    lg: LiveGame,
    stored: list[StoredEvent],
    tournament: int | None = None,
) -> None:
    """After the commit that started a game (of `tournament`): serve it here, send its
    events, tell the lobby and each player, on every connection of theirs to any process
    (`your_game`, through the control channel)."""
    game_cache.start(live, lg)
    await live.announce(stored)
    await live.publish_lobby(table)
    for colour, player, opponent in (
        (Color.BLACK, lg.black, lg.white),
        (Color.WHITE, lg.white, lg.black),
    ):
        due = lg.first_move_deadline
        notice = your_game(lg.table_id, lg.id, colour.value, opponent.payload(), due, tournament)
        await live.notify(player.id, notice)


async def sit(live: LivePlay, user: PlayerRef, table_id: int, invite: str | None = None) -> None:
    """Take the free seat; the game starts at once, colours as the host chose or by lot."""
    async with live.table_lock(table_id), live.change() as change:
        session = change.session
        table = await tables.locked(session, table_id)
        if table.closed or not tables.may_see(table, user.id, invite):
            raise no_table(table_id)
        players = table.players
        if any(p.id == user.id for p in players):
            raise PlayError(Code.SEAT_TAKEN, "you already sit at this table")
        if len(players) >= 2:
            raise PlayError(Code.SEAT_TAKEN, f"both seats at table {table_id} are taken")
        if not players:
            raise PlayError(Code.NOT_FOUND, f"table {table_id} has no host")
        if table.rated:
            await ratings.check_may_play_rated(session, user.id)
        host = players[0]
        host_colour = (
            table.colour if table.colour != "random" else random.choice(tables.COLOURS[:2])
        )
        black, white = (host, user) if host_colour == "black" else (user, host)
        lg, stored = await create_game(live, session, table, black, white)
        await session.commit()
    await started(live, table, lg, stored)


async def rematch(
    live: LivePlay, user: PlayerRef, table_id: int, address: str | None = None
) -> None:
    """Ask for a rematch; when both players have asked, a new game starts, colours swapped.
    Against the computer it starts at once, within the limits of a new game against it
    (`address`: the client's, as for `open_ai_table`)."""
    async with live.table_lock(table_id), live.change() as change:
        session = change.session
        table = await tables.locked(session, table_id)
        players = table.players
        if not table.seated(user.id):
            raise tables.not_seated(table)
        if table.status != TableState.FINISHED or len(players) != 2:
            raise PlayError(Code.TOO_EARLY, "a rematch needs a finished game and both players")
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
            await ai_limits.limit_ai_games(live, session, user, address)
        lg, stored = await create_game(
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
    async with live.table_lock(table_id), live.change() as change:
        session = change.session
        table = await tables.locked(session, table_id)
        if not table.seated(user.id):
            raise tables.not_seated(table)
        if table.status == TableState.PLAYING:
            raise PlayError(Code.GAME_IN_PROGRESS, "resign or abort the game before leaving")
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
        await change.record(table_id, out, now)
    await live.publish_lobby(table)


async def seats_of(
    db: Executor, user_ids: list[int] | None, *, kept: bool = True
) -> list[tuple[int, int]]:
    """(table, user) for every seat held at a table without a game in progress, by these
    users (None: by anyone); `kept` False: but at correspondence tables waiting for a game."""
    if user_ids is not None and not user_ids:
        return []
    return [
        (table_id, user_id)
        for table_id, owner, guest in await stored_tables.seats_without_game(
            db, user_ids, kept=kept
        )
        for user_id in (owner, guest)
        if user_id is not None and (user_ids is None or user_id in user_ids)
    ]


async def store_table(
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
    takebacks: bool = True,
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
        takebacks=takebacks and not rated,
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
        takebacks=row.takebacks,
    )
    return table, row.created_at
