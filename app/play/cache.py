"""This process's copies of the games in progress: read from storage and replayed, cached with
their lock and timer, brought up to storage when another process moved."""

from __future__ import annotations

from datetime import datetime

from app.errors import Code
from app.live.liveplay import LivePlay, PlayError, no_game
from app.metrics import GAMES_LIVE, GAMES_LOADED
from app.play import refusals, timeouts
from app.play import store as stored_games
from app.play.players import LiveGame, PlayerRef, TableInfo, read_table
from app.play.state import (
    away_of,
    clocks_run,
    first_move_deadline,
    standing_offer,
    stored_clock,
)
from app.rules import Game, Result, RulesError, Termination, get_variant
from app.status import GameStatus
from app.timeutil import as_unix


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
        status=GameStatus(row.status),
        result=Result(row.result),
        rated=row.rated,
        termination=None if row.termination is None else Termination(row.termination),
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


async def get(live: LivePlay, game_id: int) -> LiveGame:
    """The game from the cache, or read and (if in progress) cached. Hold the game's lock."""
    cached = live.games.get(game_id)
    if cached is not None:
        return cached
    loaded = await _read(live, game_id)
    if loaded is None:
        raise no_game(game_id)
    if loaded.status == GameStatus.PLAYING:
        GAMES_LOADED.inc()
        cache(live, loaded)
    return loaded


def cache(live: LivePlay, lg: LiveGame) -> None:
    live.games[lg.id] = lg
    lg.lock = live.game_lock(lg.id)
    GAMES_LIVE.inc()
    timeouts.arm(live, lg)


async def refused_stale(live: LivePlay, lg: LiveGame) -> PlayError:
    """The database moved on without this cache: reload it and say why the request failed."""
    live.drop(lg)
    fresh = await get(live, lg.id)
    if fresh.status != GameStatus.PLAYING:
        return PlayError(Code.GAME_OVER, f"game {lg.id} has ended ({fresh.result})")
    return PlayError(Code.STALE_PLY, refusals.STALE_PLY)


async def catch_up(live: LivePlay, lg: LiveGame) -> LiveGame:
    """Bring a cached game up to storage: apply the moves stored since (by another process)
    and take the stored clocks, in one query, rather than replaying the whole game; read it
    afresh if they do not follow on. Hold the game's lock."""
    known = lg.game.ply
    async with live.db.engine.connect() as conn:
        rows = await stored_games.since_ply(conn, lg.id, known)
    moves = [row.move for row in rows if row.move is not None]
    if not rows or rows[0].status != GameStatus.PLAYING or rows[0].ply_count != known + len(moves):
        live.drop(lg)
        return await get(live, lg.id)
    try:
        for text in moves:
            lg.game.play(text)
    except RulesError:
        live.drop(lg)
        return await get(live, lg.id)
    lg.clock = stored_clock(rows[0])
    lg.first_move_deadline = _first_move_due(lg.game.ply, rows[0].deadline_at)
    timeouts.arm(live, lg)
    return lg


def _first_move_due(ply: int, deadline: datetime | None) -> float | None:
    """The first-move deadline of a game at `ply` whose stored deadline is `deadline`."""
    return None if clocks_run(ply) or deadline is None else as_unix(deadline)


async def load(live: LivePlay, game_id: int) -> LiveGame:
    async with live.game_lock(game_id):
        return await get(live, game_id)


def start(live: LivePlay, lg: LiveGame) -> None:
    """Serve a game just created at a table: cache it and start its clock."""
    cache(live, lg)
