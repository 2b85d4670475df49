"""Playing a game: moves, endings, clocks and flags, draw offers, absences, and recovery.

Moves take the fast path: checked against the cached game, stored by the group-commit writer
with a write conditional on the ply the cache believed in, together with their table events.
A write that matches no row means another process got there first: the cache is dropped and
rebuilt from the database, and the request is refused as stale. Everything else a game keeps
(endings, draw offers, absences) is decided on the game's row, locked and read afresh in the
transaction that changes it, so it holds whichever process the players are on.
"""

from __future__ import annotations

import asyncio
import json
import logging
from dataclasses import replace
from datetime import datetime
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from app.db import games as stored_games
from app.db.models import Game as GameRow
from app.db.table_log import Executor, StoredEvent
from app.metrics import GAMES_FINISHED, GAMES_LIVE, GAMES_LOADED, MOVES_REJECTED
from app.rules import Color, Game, Outcome, Result, RulesError, Termination, get_variant
from app.services import events, heartbeat, ratings, refusals
from app.services.clocks import GameClock
from app.services.commits import MoveCommit
from app.services.game_state import (
    away_of,
    clocks_run,
    first_move_deadline,
    standing_offer,
    stored_clock,
    turn_of,
)
from app.services.live import (
    LiveGame,
    LivePlay,
    PlayerRef,
    PlayError,
    TableInfo,
    dumps,
    no_game,
    read_table,
)
from app.status import GameStatus
from app.timeutil import as_datetime, as_unix

logger = logging.getLogger(__name__)


# --- loading -------------------------------------------------------------------------------


async def _read(live: LivePlay, game_id: int) -> LiveGame | None:
    """Rebuild a game from the database by replaying its stored moves."""
    async with live.db.session() as session:
        loaded = await stored_games.load(session, game_id)
        if loaded is None:
            return None
        row, moves, names = loaded.row, loaded.moves, loaded.names
        if row.table_id is None or row.black_id is None or row.white_id is None:
            return None
        table = await read_table(session, row.table_id)
    game = Game(get_variant(row.variant), start_fen=row.start_fen)
    for text in moves:
        game.play(text)
    return LiveGame(
        id=row.id,
        table_id=row.table_id,
        room_id=row.room_id,
        variant=row.variant,
        start_fen=row.start_fen,
        black=_side(row.black_id, names, table),
        white=_side(row.white_id, names, table),
        game=game,
        clock=stored_clock(row),
        status=row.status,
        result=row.result,
        rated=row.rated,
        termination=row.termination,
        draw_offer=standing_offer(row),
        away=away_of(row),
        first_move_deadline=first_move_deadline(row),
        table=table,
        private=row.is_private,
    )


async def read(live: LivePlay, game_id: int) -> LiveGame | None:
    """The game as stored now, read afresh (not this process's cached copy, nor cached)."""
    return await _read(live, game_id)


def _side(user_id: int, names: dict[int, str], table: TableInfo | None) -> PlayerRef:
    """A game's player, with the rating their table shows if they still sit there."""
    seated = [p for p in table.players if p.id == user_id] if table is not None else []
    return seated[0] if seated else PlayerRef(user_id, names.get(user_id, "?"))


async def _get(live: LivePlay, game_id: int) -> LiveGame:
    """The game from the cache, or read and (if in progress) cached. Hold the game's lock."""
    cached = live.games.get(game_id)
    if cached is not None:
        return cached
    loaded = await _read(live, game_id)
    if loaded is None:
        raise no_game(game_id)
    if loaded.status == GameStatus.PLAYING:
        GAMES_LOADED.inc()
        _cache(live, loaded)
    return loaded


def _cache(live: LivePlay, lg: LiveGame) -> None:
    live.games[lg.id] = lg
    lg.lock = live.game_lock(lg.id)
    GAMES_LIVE.inc()
    _arm(live, lg)


def _forget(live: LivePlay, lg: LiveGame) -> None:
    if lg.timer is not None:
        lg.timer.cancel()
        lg.timer = None
    if live.games.get(lg.id) is lg:
        del live.games[lg.id]
        GAMES_LIVE.dec()


def forget(live: LivePlay, game_id: int) -> None:
    """Drop this process's copy of a game (it changed in storage)."""
    cached = live.games.get(game_id)
    if cached is not None:
        _forget(live, cached)


async def _refused_stale(live: LivePlay, lg: LiveGame) -> PlayError:
    """The database moved on without this cache: reload it and say why the request failed."""
    _forget(live, lg)
    fresh = await _get(live, lg.id)
    if fresh.status != GameStatus.PLAYING:
        return PlayError("game_over", f"game {lg.id} has ended ({fresh.result})")
    return PlayError("stale_ply", refusals.STALE_PLY)


async def _catch_up(live: LivePlay, lg: LiveGame) -> LiveGame:
    """Bring a cached game up to storage: apply the moves stored since (by another process)
    and take the stored clocks, in one query, rather than replaying the whole game; read it
    afresh if they do not follow on. Hold the game's lock."""
    known = lg.game.ply
    async with live.db.engine.connect() as conn:
        rows = await stored_games.since_ply(conn, lg.id, known)
    moves = [row.move for row in rows if row.move is not None]
    if not rows or rows[0].status != GameStatus.PLAYING or rows[0].ply_count != known + len(moves):
        _forget(live, lg)
        return await _get(live, lg.id)
    try:
        for text in moves:
            lg.game.play(text)
    except RulesError:
        _forget(live, lg)
        return await _get(live, lg.id)
    lg.clock = stored_clock(rows[0])
    lg.first_move_deadline = _first_move_due(lg.game.ply, rows[0].deadline_at)
    _arm(live, lg)
    return lg


def _first_move_due(ply: int, deadline: datetime | None) -> float | None:
    """The first-move deadline of a game at `ply` whose stored deadline is `deadline`."""
    return None if clocks_run(ply) or deadline is None else as_unix(deadline)


_MOVE_HEAD = '{"type":"move",'
_ENDED_HEAD = '{"type":"game_ended",'
_STARTED_HEAD = '{"type":"game_started",'


def follow(live: LivePlay, event: StoredEvent) -> None:
    """Keep a cached game current from an event stored by another process (rung on the broker
    or read from the log), so that the next move here needs no query: a move that follows on
    from this copy is played on it, with the clocks it carries; an ending drops the copy.

    A copy busy under its lock (this process is still announcing its own last move, typically)
    takes the event once the lock is free: waiters get a lock in the order they asked, so the
    events are applied in their order, before any move asked for after them here. A copy that
    does not follow on is left to `_catch_up`, which reads storage."""
    payload = event.payload
    if payload.startswith(_MOVE_HEAD):
        data: events.MoveEvent = json.loads(payload)
        lg = live.games.get(data["game"])
        if lg is None:
            return
        if lg.lock is not None and lg.lock.locked():
            live.spawn(_follow_when_free(live, lg.lock, data))
            return
        _follow_move(live, lg, data)
    elif payload.startswith(_ENDED_HEAD):
        lg = live.games.get(json.loads(payload)["game"])
        if lg is not None and not (lg.lock is not None and lg.lock.locked()):
            _forget(live, lg)
    elif payload.startswith(_STARTED_HEAD):
        started: events.GameStarted = json.loads(payload)
        lg = _started(live, started)
        if lg is not None:
            _cache(live, lg)


def _started(live: LivePlay, event: events.GameStarted) -> LiveGame | None:
    """The copy of a game another process just started, built from its `game_started` alone
    (no query at its first move here), if one of its players is connected to this process and
    the event shows it as it began; else None (it is read from storage if it is used)."""
    data, state = event["game"], event.get("table_state")
    black, white = data["black"], data["white"]
    if (
        state is None
        or data["id"] in live.games
        or ((lock := live.game_locks.get(data["id"])) is not None and lock.locked())
        or data["ply"] != 0
        or data["status"] != GameStatus.PLAYING
        or not (live.connected_here(black["id"]) or live.connected_here(white["id"]))
    ):
        return None
    table = TableInfo.of_state(state)
    clocks = data["clocks"]
    due = data["first_move_deadline"]
    return LiveGame(
        id=data["id"],
        table_id=data["table"],
        room_id=table.room_id,
        variant=data["variant"],
        start_fen=data["start_fen"],
        black=PlayerRef.of_seat(black),
        white=PlayerRef.of_seat(white),
        game=Game(get_variant(data["variant"]), start_fen=data["start_fen"]),
        # No clock runs before both sides' first moves, so when it was started is not needed.
        clock=GameClock(
            table.clock_increment_s * 1000, clocks["black"], clocks["white"], live.clock.time()
        )
        if clocks is not None
        else None,
        draw_offer=None,
        away={Color(colour): since / 1000 for colour, since in data["away"].items()},
        first_move_deadline=due / 1000 if due is not None else None,
        table=table,
        rated=bool(data.get("rated", False)),
        private=table.private,
    )


async def _follow_when_free(live: LivePlay, lock: asyncio.Lock, data: events.MoveEvent) -> None:
    async with lock:
        lg = live.games.get(data["game"])
        if lg is not None:
            _follow_move(live, lg, data)


def _follow_move(live: LivePlay, lg: LiveGame, data: events.MoveEvent) -> None:
    if lg.status != GameStatus.PLAYING or lg.game.ply != data["ply"] - 1:
        return
    mover = lg.game.position.turn
    try:
        lg.game.play(data["move"])
    except RulesError:
        _forget(live, lg)
        return
    if lg.game.ply != data["ply"] or lg.game.outcome() is not None:
        _forget(live, lg)  # read afresh if it is used again
        return
    clocks = data.get("clocks")
    if lg.clock is not None and clocks is not None:
        lg.clock = GameClock(
            lg.clock.increment_ms, clocks["black"], clocks["white"], data["at"] / 1000
        )
    if lg.draw_offer is mover.other:
        lg.draw_offer = None  # answering an offer with a move declines it
    due = data.get("first_move_deadline")
    lg.first_move_deadline = due / 1000 if due is not None else None
    _arm(live, lg)


async def load(live: LivePlay, game_id: int) -> LiveGame:
    async with live.game_lock(game_id):
        return await _get(live, game_id)


def start(live: LivePlay, lg: LiveGame) -> None:
    """Serve a game just created at a table: cache it and start its clock."""
    _cache(live, lg)


async def recover(live: LivePlay, instance: str, *, alone: bool = False) -> int:
    """Take back every game in progress at start-up; clocks do not run while no server is up.

    `instance` is this process's heartbeat id: its first beat is written here, in the same
    transaction, so processes starting together take turns. `alone` says no other process is up
    (known on SQLite from a file lock). Then, from the other processes' beats (see
    `heartbeat`):

    - one beat recently: the cluster kept running (a rolling restart, a process joining): the
      games are loaded as stored, their running turns keep running;
    - otherwise every server was down since the newest beat: each game in progress has the start
      of its running turn (`last_move_at`, or `started_at` before the first move) and its
      deadline moved later by the downtime, never past now. The time the side to move spent
      before the crash stays charged (give or take one heartbeat interval), the downtime is not;
    - no beat at all (a new database): the running turns start again now.
    """
    now = live.clock.now()
    async with live.db.engine.begin() as conn:
        await heartbeat.lock(conn)
        await heartbeat.write(conn, instance, now)
        others = await heartbeat.others(
            conn, instance, now, live.settings.heartbeat_seconds, alone=alone
        )
        rows = await stored_games.in_progress_turns(conn)
        game_ids = [row.id for row in rows]
        if rows and not others.running:
            turns = []
            for row in rows:
                began = as_unix(row.last_move_at or row.started_at)
                if others.last_alive is None:
                    moved = as_unix(now)
                else:
                    downtime = max(0.0, as_unix(now) - as_unix(others.last_alive))
                    moved = min(as_unix(now), began + downtime)
                deadline = row.deadline_at
                if deadline is not None:
                    deadline = as_datetime(as_unix(deadline) + moved - began)
                turns.append(
                    {"game": row.id, "turn_started": as_datetime(moved), "deadline": deadline}
                )
            await stored_games.move_turns(conn, turns)
    for game_id in game_ids:
        try:
            await load(live, game_id)
        except (PlayError, RulesError):
            logger.exception("cannot recover game %d", game_id)
    return len(game_ids)


async def playing_for(live: LivePlay, user_id: int) -> list[dict[str, int]]:
    """The user's games in progress, so a reconnecting client knows what to watch."""
    async with live.db.session() as session:
        rows = await stored_games.playing_for(session, user_id)
    return [{"table": table_id, "game": game_id} for table_id, game_id in rows]


# --- payloads ------------------------------------------------------------------------------


def game_payload(live: LivePlay, lg: LiveGame, now: float) -> dict[str, Any]:
    """The full state of a game, for snapshots."""
    playing = lg.status == GameStatus.PLAYING
    running = playing and clocks_run(lg.game.ply)
    turn: Color = lg.game.position.turn
    claim_after = None
    if playing and lg.away:
        claim_after = int((min(lg.away.values()) + live.settings.disconnect_grace_seconds) * 1000)
    return {
        "id": lg.id,
        "table": lg.table_id,
        "variant": lg.variant,
        "start_fen": lg.start_fen,
        "black": lg.black.seat_payload(),
        "white": lg.white.seat_payload(),
        "status": lg.status,
        "result": lg.result,
        "termination": lg.termination,
        "fen": lg.game.fen(),
        "ply": lg.game.ply,
        "moves": [str(m) for m in lg.game.moves],
        "turn": turn.value,
        "clocks": lg.clock.payload(turn if running else None, now) if lg.clock else None,
        "clock_running": running and lg.clock is not None,
        "first_move_deadline": events.unix_ms(lg.first_move_deadline if playing else None),
        "legal_moves": lg.game.legal_move_texts() if playing else [],
        "draw_offer": lg.draw_offer.value if lg.draw_offer is not None else None,
        "away": {colour.value: int(since * 1000) for colour, since in lg.away.items()},
        "claim_after": claim_after,
        "rated": lg.rated,
        "rating_change": None,
    }


async def snapshot(live: LivePlay, game_id: int) -> dict[str, Any]:
    """The game as stored now (the cached copy serves if it is still current); a finished
    game's `rating_change` is read back, so a client that reloads sees what `game_ended` said."""
    rating_change = None
    async with live.game_lock(game_id):
        async with live.db.session() as session:
            row = await stored_games.get(session, game_id)
            if row is not None and row.status != GameStatus.PLAYING and row.rated:
                rating_change = await ratings.change_of(
                    session, game_id, row.black_id, row.white_id
                )
        if row is None:
            raise no_game(game_id)
        lg = live.games.get(game_id)
        if lg is None or lg.game.ply != row.ply_count or row.status != GameStatus.PLAYING:
            if lg is not None:
                _forget(live, lg)
            lg = await _get(live, game_id)
        else:
            lg.clock = stored_clock(row)
            lg.first_move_deadline = first_move_deadline(row)
        lg.draw_offer, lg.away = standing_offer(row), away_of(row)
        return game_payload(live, lg, live.clock.time()) | {"rating_change": rating_change}


# --- moves ---------------------------------------------------------------------------------


def _player(lg: LiveGame, user_id: int) -> Color:
    colour = lg.colour_of(user_id)
    if colour is None:
        if lg.private:  # its id is confirmed to nobody
            raise no_game(lg.id)
        raise PlayError("not_a_player", f"you do not play in game {lg.id}")
    return colour


def _move_event(
    lg: LiveGame,
    move_text: str,
    clock: GameClock | None,
    now: float,
    over: bool,
    first_move_due: float | None,
) -> events.MoveEvent:
    turn: Color = lg.game.position.turn
    running = not over and clocks_run(lg.game.ply)
    return events.move(
        lg.table_id,
        lg.id,
        lg.game.ply,
        move_text,
        lg.game.fen(),
        turn.value,
        clock.payload(turn if running else None, now) if clock else None,
        lg.game.legal_move_texts(),
        now,
        first_move_due,
    )


async def play_move(live: LivePlay, user_id: int, game_id: int, text: str, ply: int) -> None:
    """Validate, store, then announce one move; raise PlayError (and change nothing) if refused."""
    async with live.game_lock(game_id):
        lg = await _get(live, game_id)
        if ply > lg.game.ply and lg.status == GameStatus.PLAYING:
            # The player has seen moves this copy has not (played through another process).
            lg = await _catch_up(live, lg)
        try:
            colour = _player(lg, user_id)
            if lg.status != GameStatus.PLAYING:
                raise PlayError("game_over", f"game {lg.id} has ended ({lg.result})")
            if ply != lg.game.ply:
                raise PlayError("stale_ply", refusals.STALE_PLY)
            if colour is not lg.game.position.turn:
                raise PlayError("not_your_turn", refusals.NOT_YOUR_TURN)
        except PlayError as exc:
            MOVES_REJECTED.labels(exc.code).inc()
            raise
        now = live.clock.time()
        late = _expired(lg, now)
        if late is not None:
            await _end(live, game_id, late, ply=lg.game.ply)
            MOVES_REJECTED.labels("game_over").inc()
            if late.termination is Termination.ABORTED:
                raise PlayError("game_over", "the first move came too late: the game is aborted")
            raise PlayError("game_over", "your time ran out")
        try:
            move = lg.game.play(text)
        except RulesError as exc:
            MOVES_REJECTED.labels(exc.code).inc()
            raise PlayError(exc.code, refusals.refusal(exc, text, lg.game)) from exc
        clock = _clock_after(lg.clock, colour, ply, now)
        outcome = lg.game.outcome()
        move_text = str(move)
        # The next side's first move is due (after the game's first move only).
        first_move_due = None
        if outcome is None and not clocks_run(lg.game.ply):
            first_move_due = now + live.settings.first_move_seconds
        made: list[events.TableEvent] = [
            _move_event(lg, move_text, clock, now, outcome is not None, first_move_due)
        ]
        ending: dict[str, Any] = {}
        deadline = None
        table_after: TableInfo | None = None
        if outcome is not None:
            ending = {
                "status": GameStatus.FINISHED,
                "result": outcome.result(),
                "termination": outcome.termination.value,
            }
            clocks = clock.payload(None, now) if clock else None
            made.append(
                events.game_ended(
                    lg.table_id, game_id, ending["result"], ending["termination"], clocks
                )
            )
            if lg.table is not None:  # both players stay seated, for a rematch
                table_after = replace(
                    lg.table, game_status=GameStatus.FINISHED, rematch=frozenset()
                )
                made.append(live.table_update(table_after))
        elif first_move_due is not None:
            deadline = as_datetime(first_move_due)
        elif clock is not None:
            deadline = as_datetime(clock.deadline(lg.game.position.turn))
        commit = MoveCommit(
            game_id=game_id,
            table_id=lg.table_id,
            ply=lg.game.ply,
            move=move_text,
            at=as_datetime(now),
            clock_ms=clock.stored(colour) if clock is not None else None,
            black_ms=clock.black_ms if clock is not None else None,
            white_ms=clock.white_ms if clock is not None else None,
            deadline=deadline,
            events=tuple(dumps(e) for e in made),
            **ending,
        )
        try:
            if outcome is not None and lg.table is not None and lg.table.rated:
                stored = await _store_final_move(live, commit, made)
            else:
                stored = await live.writer.store(commit)
        except Exception as exc:
            logger.warning("cannot store move %d of game %d", commit.ply, lg.id, exc_info=True)
            _forget(live, lg)  # the cache already holds the move: rebuild it on next use
            raise PlayError("server_error", "the move could not be stored; try again") from exc
        if stored is None:
            raise await _refused_stale(live, lg)
        live.moves.accepted(lg.variant)
        lg.clock, lg.first_move_deadline = clock, first_move_due
        if lg.draw_offer is colour.other:
            lg.draw_offer = None  # answering an offer with a move declines it
        await live.announce(stored)
        if outcome is not None:
            lg.status, lg.result, lg.termination = (
                GameStatus.FINISHED,
                ending["result"],
                ending["termination"],
            )
            _forget(live, lg)
            GAMES_FINISHED.labels(lg.variant, ending["termination"]).inc()
            if table_after is not None:
                await live.publish_lobby(table_after)
            else:
                await _table_changed(live, lg.table_id)
        else:
            _arm(live, lg)


def _expired(lg: LiveGame, now: float) -> Outcome | None:
    """How a game in progress ends at `now` for lack of a move in time, if it does: aborted
    when a first move is overdue, lost on time when the running clock is out."""
    turn: Color = lg.game.position.turn
    if not clocks_run(lg.game.ply):
        due = lg.first_move_deadline
        return Outcome(Termination.ABORTED) if due is not None and now >= due else None
    if lg.clock is not None and lg.clock.left(turn, turn, now) <= 0:
        return Outcome(Termination.TIMEOUT, turn.other)
    return None


def _clock_after(clock: GameClock | None, mover: Color, ply: int, now: float) -> GameClock | None:
    """The clocks once `mover` has made the move after `ply` plies at `now`: a first move
    (no clock running yet) leaves both times as they are, the next side's turn starting now."""
    if clock is None:
        return None
    if not clocks_run(ply):
        return GameClock(clock.increment_ms, clock.black_ms, clock.white_ms, now)
    return clock.after_move(mover, now)


async def _store_final_move(
    live: LivePlay, commit: MoveCommit, made: list[events.TableEvent]
) -> list[StoredEvent] | None:
    """Store a move that ends a rated game, in a transaction of its own rather than through the
    move writer, whose batch statement holds no rating update: the ratings move in the
    transaction that stores the game's end (`ratings.apply`), and its `game_ended` carries the
    change. The write is the writer's conditional move statement (`app.db.games.write_one`);
    None if the game was not in progress at the ply before. A game has one final move, so the
    writer's batching is not missed."""
    async with live.db.session() as session:
        row = await stored_games.write_one(session, commit)
        if row is None:
            return None
        rating_change = await ratings.apply(session, row, commit.at, live.settings)
        # The table shows both players' ratings as the game left them.
        table = await read_table(session, commit.table_id) if rating_change else None
        for event in made:
            if event["type"] == "game_ended":
                event["rating_change"] = rating_change
            elif event["type"] == "table_update" and table is not None:
                event["state"] = live.table_payload(table)
        stored = await live.record(session, commit.table_id, made, commit.at)
        await session.commit()
    return stored


async def _table_changed(live: LivePlay, table_id: int) -> None:
    """Store and send a table's `table_update` (its seats or status changed with its game)."""
    async with live.db.session() as session:
        table = await read_table(session, table_id)
        if table is None:
            return
        stored = await live.record(session, table_id, [live.table_update(table)], live.clock.now())
        await session.commit()
    await live.announce(stored)
    await live.publish_lobby(table)


# --- endings -------------------------------------------------------------------------------


async def locked_row(db: Executor, game_id: int) -> GameRow | None:
    return await stored_games.locked(db, game_id)


async def store_ending(
    live: LivePlay,
    db: AsyncSession,
    game_id: int,
    result: Result,
    termination: Termination,
    *,
    reason: str | None = None,
    ply: int | None = None,
    row: GameRow | None = None,
) -> list[StoredEvent] | None:
    """End a game in progress in the caller's transaction, with its events (`game_ended` and
    the table's `table_update`); None if it is not in progress (or, given `ply`, has moved on).
    Without a result (`*`) the game is aborted. `reason` is an administrator's explanation,
    shown to the players."""
    if row is None:
        row = await locked_row(db, game_id)
    if row is None or not stored_games.in_progress(row, ply):
        return None
    now = live.clock.time()
    clock = stored_clock(row)
    # The clocks stop now: the side to move is charged the time it spent (no clock runs before
    # both first moves).
    clocks = (
        clock.payload(turn_of(row) if clocks_run(row.ply_count) else None, now)
        if clock is not None
        else None
    )
    frozen = (clocks["black"], clocks["white"]) if clocks is not None else None
    await stored_games.end(
        db, row, GameStatus.ended_with(result), result, termination, as_datetime(now), frozen
    )
    rating_change = await ratings.apply(db, row, as_datetime(now), live.settings)
    GAMES_FINISHED.labels(row.variant, termination).inc()
    assert row.table_id is not None
    table = await read_table(db, row.table_id)
    assert table is not None
    return await live.record(
        db,
        row.table_id,
        [
            events.game_ended(
                row.table_id, game_id, result, termination, clocks, reason, rating_change
            ),
            live.table_update(table),
        ],
        as_datetime(now),
    )


async def after(live: LivePlay, game_id: int, stored: list[StoredEvent]) -> None:
    """Send what a committed change stored; the game's cached copy goes (it changed)."""
    forget(live, game_id)
    await live.announce(stored)
    if stored:
        async with live.db.session() as session:
            table = await read_table(session, stored[0].table_id)
        if table is not None:
            await live.publish_lobby(table)


async def _end(
    live: LivePlay,
    game_id: int,
    outcome: Outcome,
    *,
    ply: int | None = None,
) -> bool:
    """Store and announce an ending the server decided; False if the game was not in progress
    (or had moved on from `ply`)."""
    async with live.db.session() as session:
        stored = await store_ending(
            live, session, game_id, outcome.result(), outcome.termination, ply=ply
        )
        if stored is None:
            return False
        await session.commit()
    await after(live, game_id, stored)
    return True


# --- clocks --------------------------------------------------------------------------------


def _arm(live: LivePlay, lg: LiveGame) -> None:
    """(Re)start the timer that flags the side to move when its time runs out, or aborts the
    game when a first move is overdue."""
    if lg.timer is not None:
        lg.timer.cancel()
        lg.timer = None
    if lg.status != GameStatus.PLAYING:
        return
    if not clocks_run(lg.game.ply):
        due = lg.first_move_deadline
    else:
        due = lg.clock.deadline(lg.game.position.turn) if lg.clock is not None else None
    if due is None:
        return
    delay = max(0.0, due - live.clock.time())
    game_id = lg.id
    lg.timer = live.clock.call_later(delay, lambda: live.spawn(flag(live, game_id)))


async def flag(live: LivePlay, game_id: int) -> bool:
    """Flag the side to move if its time has run out, or abort the game if a first move is
    overdue, as stored; True if this ended the game. A failed write is left to the next sweep
    (`flag_due`), which retries until it is stored."""
    async with live.game_lock(game_id):
        try:
            async with live.db.session() as session:
                row = await locked_row(session, game_id)
                if row is None or row.status != GameStatus.PLAYING:
                    return False
                ending = _stored_expiry(row, live.clock.time())
                if ending is None:
                    lg = live.games.get(game_id)
                    if lg is not None and lg.game.ply != row.ply_count:
                        _forget(live, lg)  # another process moved: it watches the clock now
                    elif lg is not None:
                        _arm(live, lg)
                    return False
                stored = await store_ending(
                    live, session, game_id, ending.result(), ending.termination, row=row
                )
                assert stored is not None
                await session.commit()
        except Exception:
            logger.warning("cannot flag game %d yet; retrying", game_id, exc_info=True)
            return False
    await after(live, game_id, stored)
    return True


def _stored_expiry(row: GameRow, now: float) -> Outcome | None:
    """`_expired`, from a stored game's row."""
    if not clocks_run(row.ply_count):
        due = first_move_deadline(row)
        return Outcome(Termination.ABORTED) if due is not None and now >= due else None
    clock = stored_clock(row)
    turn = turn_of(row)
    if clock is not None and clock.left(turn, turn, now) <= 0:
        return Outcome(Termination.TIMEOUT, turn.other)
    return None


async def flag_due(live: LivePlay) -> int:
    """Flag every game whose side to move has run out, and abort every game whose first move
    is overdue (the sweep behind the timers: a game whose process crashed, or whose flag could
    not be written)."""
    async with live.db.session() as session:
        due = await stored_games.due(session, live.clock.now())
    flagged = 0
    for game_id in due:
        flagged += await flag(live, game_id)
    return flagged


async def current_ply(live: LivePlay, game_id: int, user_id: int) -> int:
    """How many plies the game has, as stored: the ply a move made now answers (the bot API,
    whose moves name no ply). A private game that `user_id` does not play is no game."""
    async with live.db.session() as session:
        row = await stored_games.get(session, game_id)
    if row is None or (row.is_private and user_id not in (row.black_id, row.white_id)):
        raise no_game(game_id)
    return row.ply_count
