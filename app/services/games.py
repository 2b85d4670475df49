"""Playing a game: moves, endings, clocks and flags, absences, and recovery after a restart.

Every change follows the same order: check it against the cached game, store it with a write
conditional on the state the cache believed in, and only then tell the table through the broker.
A write that matches no row means another process got there first: the cache is dropped and
rebuilt from the database, and the request is refused as stale.
"""

from __future__ import annotations

import asyncio
import functools
import json
import logging
import re
import time
from datetime import UTC, datetime
from typing import Any

from prometheus_client import Counter
from sqlalchemy import bindparam, or_, select, update

from app.db.models import Game as GameRow
from app.db.models import Move as MoveRow
from app.db.models import User
from app.metrics import GAMES_FINISHED, GAMES_LIVE, MOVES_ACCEPTED, MOVES_REJECTED
from app.rules import Color, Game, RulesError, get_variant
from app.services import heartbeat
from app.services.clocks import GameClock
from app.services.commits import MoveCommit
from app.services.live import LiveGame, LivePlay, PlayerRef, PlayError, table_channel

logger = logging.getLogger(__name__)

RESULTS = ("1-0", "0-1", "1/2-1/2", "*")


@functools.cache
def _accepted(variant: str) -> Counter:
    """The accepted-moves counter of a variant (looking labels up costs more than counting)."""
    return MOVES_ACCEPTED.labels(variant)


def result_for(winner: Color | None) -> str:
    """PDN result: `1-0` when Black (the first mover) won."""
    if winner is None:
        return "1/2-1/2"
    return "1-0" if winner is Color.BLACK else "0-1"


def as_unix(moment: datetime) -> float:
    """Unix seconds of a stored time (SQLite returns naive datetimes, which are UTC)."""
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.timestamp()


def as_datetime(unix: float) -> datetime:
    return datetime.fromtimestamp(unix, UTC)


def stored_clock(row: GameRow) -> GameClock | None:
    """The clocks as stored with a game (None when untimed), the side to move's running since
    its last move (or the start), as moved later by `recover` after downtime."""
    if row.clock_base_s is None:
        return None
    base_ms = row.clock_base_s * 1000
    return GameClock(
        increment_ms=row.clock_increment_s * 1000,
        black_ms=base_ms if row.black_clock_ms is None else row.black_clock_ms,
        white_ms=base_ms if row.white_clock_ms is None else row.white_clock_ms,
        turn_started=as_unix(row.last_move_at or row.started_at),
    )


# --- loading -------------------------------------------------------------------------------


async def _read(live: LivePlay, game_id: int) -> LiveGame | None:
    """Rebuild a game from the database by replaying its stored moves."""
    async with live.db.session() as session:
        row = await session.get(GameRow, game_id)
        if row is None or row.table_id is None or row.black_id is None or row.white_id is None:
            return None
        moves = (
            await session.execute(
                select(MoveRow.move).where(MoveRow.game_id == game_id).order_by(MoveRow.ply)
            )
        ).scalars()
        named = await session.execute(
            select(User.id, User.name).where(User.id.in_((row.black_id, row.white_id)))
        )
        names = {user_id: name for user_id, name in named.all()}
    game = Game(get_variant(row.variant), start_fen=row.start_fen)
    for text in moves:
        game.play(text)
    clock = stored_clock(row)
    return LiveGame(
        id=row.id,
        table_id=row.table_id,
        room_id=row.room_id,
        variant=row.variant,
        start_fen=row.start_fen,
        black=PlayerRef(row.black_id, names.get(row.black_id, "?")),
        white=PlayerRef(row.white_id, names.get(row.white_id, "?")),
        game=game,
        clock=clock,
        status=row.status,
        result=row.result,
        termination=row.termination,
    )


async def _get(live: LivePlay, game_id: int) -> LiveGame:
    """The game from the cache, or read and (if in progress) cached. Hold the game's lock."""
    cached = live.games.get(game_id)
    if cached is not None:
        return cached
    loaded = await _read(live, game_id)
    if loaded is None:
        raise PlayError("not_found", f"no game {game_id}")
    if loaded.status == "playing":
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
    if live.games.pop(lg.id, None) is not None:
        GAMES_LIVE.dec()


async def _refused_stale(live: LivePlay, lg: LiveGame) -> PlayError:
    """The database moved on without this cache: reload it and say why the request failed."""
    _forget(live, lg)
    fresh = await _get(live, lg.id)
    if fresh.status != "playing":
        return PlayError("game_over", f"game {lg.id} has ended ({fresh.result})")
    return PlayError("stale_ply", f"game {lg.id} is now at ply {fresh.game.ply}")


# Events that change what a process keeps of a game besides the stored record.
_NOTED = frozenset(("draw_offered", "draw_declined", "player_away", "player_back"))


async def observe(live: LivePlay, event: dict[str, Any]) -> None:
    """Follow a table event that may come from another process serving the same game, so that
    this process's copy agrees: a move it has not seen drops the copy (reloaded when needed);
    offers and absences, which are not stored, are noted. Events of this process are already
    applied, so they change nothing."""
    kind = event["type"]
    if kind == "rematch_offered":
        table = live.tables.get(event["table"])
        if table is not None and live.table_status(table) == "finished":
            live.rematch.setdefault(table.id, set()).add(event["by"]["id"])
        return
    if kind in ("move", "game_ended"):
        lg = live.games.get(event["game"])
        if lg is not None and (kind == "game_ended" or lg.game.ply < event["ply"]):
            _forget(live, lg)
            if kind == "game_ended":
                live.seated_after[lg.table_id] = [lg.black, lg.white]
        return
    if kind not in _NOTED:
        return
    async with live.game_lock(event["game"]):
        lg = await _get(live, event["game"])
        if lg.status != "playing":
            return
        if kind == "draw_offered" and lg.draw_offer is None:
            lg.draw_offer = Color(event["by"])
            lg.offered_at[lg.draw_offer] = lg.game.ply
        elif kind == "draw_declined":
            lg.draw_offer = None
        elif kind == "player_away":
            lg.away.setdefault(Color(event["colour"]), event["since"] / 1000)
        elif kind == "player_back":
            lg.away.pop(Color(event["colour"]), None)


# The head of a `move` event as `play_move` writes it: enough to see that the move is known here.
_MOVE_HEAD = re.compile(r'\{"type":"move","table":\d+,"game":(\d+),"ply":(\d+),')


async def observe_text(live: LivePlay, text: str) -> None:
    """`observe` an event as it travels (JSON text). Most events are moves that this process
    made itself and already holds: those are recognised from the head of the text, without
    reading the rest; chat changes nothing."""
    if text.startswith('{"type":"chat"'):
        return
    head = _MOVE_HEAD.match(text)
    if head is not None:
        lg = live.games.get(int(head[1]))
        if lg is None or lg.game.ply >= int(head[2]):
            return
    await observe(live, json.loads(text))


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
      of its running turn (`last_move_at`, or `started_at` before the first move) moved later by
      the downtime, never past now. The time the side to move spent before the crash stays
      charged (give or take one heartbeat interval), the downtime is not;
    - no beat at all (a new database): the running turns start again now.
    """
    now = as_datetime(time.time())
    playing = (GameRow.status == "playing", GameRow.table_id.is_not(None))
    async with live.db.engine.begin() as conn:
        await heartbeat.lock(conn)
        await heartbeat.write(conn, instance, now)
        others = await heartbeat.others(
            conn, instance, now, live.settings.heartbeat_seconds, alone=alone
        )
        rows = (
            await conn.execute(
                select(GameRow.id, GameRow.started_at, GameRow.last_move_at).where(*playing)
            )
        ).all()
        game_ids = [row.id for row in rows]
        if rows and not others.running:
            if others.last_alive is None:
                turns = [{"game": row.id, "turn_started": now} for row in rows]
            else:
                downtime = max(0.0, as_unix(now) - as_unix(others.last_alive))
                turns = [
                    {
                        "game": row.id,
                        "turn_started": as_datetime(
                            min(
                                as_unix(now),
                                as_unix(row.last_move_at or row.started_at) + downtime,
                            )
                        ),
                    }
                    for row in rows
                ]
            await conn.execute(
                update(GameRow)
                .where(GameRow.id == bindparam("game"))
                .values(last_move_at=bindparam("turn_started")),
                turns,
            )
    for game_id in game_ids:
        try:
            await load(live, game_id)
        except (PlayError, RulesError):
            logger.exception("cannot recover game %d", game_id)
    return len(game_ids)


async def playing_for(live: LivePlay, user_id: int) -> list[dict[str, int]]:
    """The user's games in progress, so a reconnecting client knows what to watch."""
    async with live.db.session() as session:
        rows = await session.execute(
            select(GameRow.table_id, GameRow.id).where(
                GameRow.status == "playing",
                or_(GameRow.black_id == user_id, GameRow.white_id == user_id),
                GameRow.table_id.is_not(None),
            )
        )
        return [
            {"table": table_id, "game": game_id}
            for table_id, game_id in rows.all()
            if table_id is not None
        ]


# --- payloads ------------------------------------------------------------------------------


def game_payload(live: LivePlay, lg: LiveGame, now: float) -> dict[str, Any]:
    """The full state of a game, for snapshots."""
    playing = lg.status == "playing"
    turn: Color = lg.game.position.turn
    claim_after = None
    if playing and lg.away:
        claim_after = int((min(lg.away.values()) + live.settings.disconnect_grace_seconds) * 1000)
    return {
        "id": lg.id,
        "table": lg.table_id,
        "variant": lg.variant,
        "start_fen": lg.start_fen,
        "black": lg.black.payload(),
        "white": lg.white.payload(),
        "status": lg.status,
        "result": lg.result,
        "termination": lg.termination,
        "fen": lg.game.fen(),
        "ply": lg.game.ply,
        "moves": [str(m) for m in lg.game.moves],
        "turn": turn.value,
        "clocks": lg.clock.payload(turn if playing else None, now) if lg.clock else None,
        "clock_running": playing and lg.clock is not None,
        "legal_moves": lg.game.legal_move_texts() if playing else [],
        "draw_offer": lg.draw_offer.value if lg.draw_offer is not None else None,
        "away": {colour.value: int(since * 1000) for colour, since in lg.away.items()},
        "claim_after": claim_after,
    }


async def snapshot(live: LivePlay, game_id: int) -> dict[str, Any]:
    return game_payload(live, await load(live, game_id), time.time())


# --- moves ---------------------------------------------------------------------------------


def _player(lg: LiveGame, user_id: int) -> Color:
    colour = lg.colour_of(user_id)
    if colour is None:
        raise PlayError("not_a_player", f"you do not play in game {lg.id}")
    return colour


def _playing(lg: LiveGame) -> None:
    if lg.status != "playing":
        raise PlayError("game_over", f"game {lg.id} has ended ({lg.result})")


async def play_move(live: LivePlay, user_id: int, game_id: int, text: str, ply: int) -> None:
    """Validate, store, then announce one move; raise PlayError (and change nothing) if refused."""
    async with live.game_lock(game_id):
        lg = await _get(live, game_id)
        try:
            colour = _player(lg, user_id)
            _playing(lg)
            if ply != lg.game.ply:
                raise PlayError("stale_ply", f"game {game_id} is at ply {lg.game.ply}, not {ply}")
            if colour is not lg.game.position.turn:
                raise PlayError("not_your_turn", f"it is {colour.other.value}'s turn")
        except PlayError as exc:
            MOVES_REJECTED.labels(exc.code).inc()
            raise
        now = time.time()
        if lg.clock is not None and lg.clock.left(colour, colour, now) <= 0:
            await _finish(live, lg, result_for(colour.other), "timeout", now)
            MOVES_REJECTED.labels("game_over").inc()
            raise PlayError("game_over", "your time ran out")
        try:
            move = lg.game.play(text)
        except RulesError as exc:
            MOVES_REJECTED.labels(exc.code).inc()
            raise PlayError(exc.code, str(exc)) from exc
        clock = lg.clock.after_move(colour, now) if lg.clock is not None else None
        outcome = lg.game.outcome()
        ending: dict[str, Any] = {}
        if outcome is not None:
            ending = {
                "status": "finished",
                "result": outcome.result(),
                "termination": outcome.termination.value,
            }
        move_text = str(move)
        commit = MoveCommit(
            game_id=game_id,
            ply=lg.game.ply,
            move=move_text,
            at=as_datetime(now),
            clock_ms=clock.stored(colour) if clock is not None else None,
            black_ms=clock.black_ms if clock is not None else None,
            white_ms=clock.white_ms if clock is not None else None,
            **ending,
        )
        try:
            stored = await live.writer.store(commit)
        except Exception as exc:
            _forget(live, lg)  # the cache already holds the move: rebuild it on next use
            raise PlayError("server_error", "the move could not be stored; try again") from exc
        if not stored:
            raise await _refused_stale(live, lg)
        _accepted(lg.variant).inc()
        lg.clock = clock
        if lg.draw_offer is colour.other:
            lg.draw_offer = None  # answering an offer with a move declines it
        turn: Color = lg.game.position.turn
        await live.publish(
            table_channel(lg.table_id),
            {
                "type": "move",
                "table": lg.table_id,
                "game": game_id,
                "ply": lg.game.ply,
                "move": move_text,
                "fen": lg.game.fen(),
                "turn": turn.value,
                "clocks": clock.payload(None if outcome else turn, now) if clock else None,
                "legal_moves": lg.game.legal_move_texts(),
            },
        )
        if outcome is not None:
            await _ended(live, lg, ending["result"], ending["termination"], "finished", now)
        else:
            _arm(live, lg)


# --- endings -------------------------------------------------------------------------------


async def _finish(
    live: LivePlay,
    lg: LiveGame,
    result: str,
    termination: str,
    now: float,
    status: str = "finished",
) -> bool:
    """Store an ending decided by the server (not by a move); False if the game had already
    ended or moved on elsewhere (the cache is then rebuilt)."""
    values: dict[str, Any] = {
        "status": status,
        "result": result,
        "termination": termination,
        "finished_at": as_datetime(now),
    }
    if lg.clock is not None:
        turn: Color = lg.game.position.turn
        values["black_clock_ms"] = max(0, lg.clock.left(Color.BLACK, turn, now))
        values["white_clock_ms"] = max(0, lg.clock.left(Color.WHITE, turn, now))
    async with live.db.engine.begin() as conn:
        written = await conn.execute(
            update(GameRow)
            .where(
                GameRow.id == lg.id,
                GameRow.status == "playing",
                GameRow.ply_count == lg.game.ply,
            )
            .values(values)
        )
    if written.rowcount != 1:
        _forget(live, lg)
        return False
    if lg.clock is not None:
        lg.clock = GameClock(
            lg.clock.increment_ms, values["black_clock_ms"], values["white_clock_ms"], now
        )
    await _ended(live, lg, result, termination, status, now)
    return True


async def _ended(
    live: LivePlay,
    lg: LiveGame,
    result: str,
    termination: str,
    status: str,
    now: float,
    reason: str | None = None,
) -> None:
    """Tell the table a game has ended; both players stay seated for a rematch. `reason` is
    an administrator's explanation, shown to the players."""
    lg.status, lg.result, lg.termination = status, result, termination
    lg.draw_offer = None
    _forget(live, lg)
    GAMES_FINISHED.labels(lg.variant, termination).inc()
    winner = {"1-0": "black", "0-1": "white"}.get(result)
    live.seated_after[lg.table_id] = [lg.black, lg.white]
    live.rematch.pop(lg.table_id, None)
    await live.publish(
        table_channel(lg.table_id),
        {
            "type": "game_ended",
            "table": lg.table_id,
            "game": lg.id,
            "result": result,
            "termination": termination,
            "winner": winner,
            "clocks": lg.clock.payload(None, now) if lg.clock else None,
        }
        | ({"reason": reason} if reason is not None else {}),
    )
    table = live.tables.get(lg.table_id)
    if table is not None:
        await live.publish_table(table)


async def _end_by(
    live: LivePlay, lg: LiveGame, result: str, termination: str, status: str = "finished"
) -> None:
    if not await _finish(live, lg, result, termination, time.time(), status):
        raise await _refused_stale(live, lg)


async def resign(live: LivePlay, user_id: int, game_id: int) -> None:
    async with live.game_lock(game_id):
        lg = await _get(live, game_id)
        colour = _player(lg, user_id)
        _playing(lg)
        await _end_by(live, lg, result_for(colour.other), "resignation")


async def offer_draw(live: LivePlay, user_id: int, game_id: int) -> None:
    """Offer a draw, or agree to one if the opponent's offer stands."""
    async with live.game_lock(game_id):
        lg = await _get(live, game_id)
        colour = _player(lg, user_id)
        _playing(lg)
        if lg.draw_offer is colour.other:
            await _end_by(live, lg, "1/2-1/2", "agreement")
            return
        if lg.draw_offer is colour or lg.offered_at.get(colour) == lg.game.ply:
            raise PlayError("draw_offer_limit", "one draw offer per move: make a move first")
        lg.draw_offer = colour
        lg.offered_at[colour] = lg.game.ply
        await live.publish(
            table_channel(lg.table_id),
            {"type": "draw_offered", "table": lg.table_id, "game": lg.id, "by": colour.value},
        )


async def answer_draw(live: LivePlay, user_id: int, game_id: int, *, accept: bool) -> None:
    async with live.game_lock(game_id):
        lg = await _get(live, game_id)
        colour = _player(lg, user_id)
        _playing(lg)
        if lg.draw_offer is not colour.other:
            raise PlayError("no_draw_offer", "your opponent has not offered a draw")
        if accept:
            await _end_by(live, lg, "1/2-1/2", "agreement")
            return
        lg.draw_offer = None
        await live.publish(
            table_channel(lg.table_id),
            {"type": "draw_declined", "table": lg.table_id, "game": lg.id, "by": colour.value},
        )


async def abort(live: LivePlay, user_id: int, game_id: int) -> None:
    """Either player may abort until they have made their own first move."""
    async with live.game_lock(game_id):
        lg = await _get(live, game_id)
        colour = _player(lg, user_id)
        _playing(lg)
        if lg.has_moved(colour):
            raise PlayError("too_early", "a game can be aborted only before your first move")
        await _end_by(live, lg, "*", "aborted", status="aborted")


async def claim_win(live: LivePlay, user_id: int, game_id: int) -> None:
    """Win against an opponent away past the grace period (abort if no move was made)."""
    async with live.game_lock(game_id):
        lg = await _get(live, game_id)
        colour = _player(lg, user_id)
        _playing(lg)
        since = lg.away.get(colour.other)
        if since is None:
            raise PlayError("too_early", "your opponent is connected")
        claim_at = since + live.settings.disconnect_grace_seconds
        if time.time() < claim_at:
            raise PlayError("too_early", f"you may claim in {claim_at - time.time():.0f} seconds")
        if lg.game.ply == 0:
            await _end_by(live, lg, "*", "aborted", status="aborted")
        else:
            await _end_by(live, lg, result_for(colour), "abandoned")


async def finish_game(live: LivePlay, game_id: int, result: str, termination: str) -> bool:
    """End a game by decision (administration): `termination` `admin` or `aborted`.

    Everyone at the table is told. Returns False if the game was not in progress.
    """
    if termination not in ("admin", "aborted") or result not in RESULTS:
        raise ValueError(f"cannot end a game with {result!r} / {termination!r}")
    status = "aborted" if termination == "aborted" or result == "*" else "finished"
    async with live.game_lock(game_id):
        lg = await _get(live, game_id)
        if lg.status != "playing":
            return False
        return await _finish(live, lg, result, termination, time.time(), status)


async def announce_ending(live: LivePlay, game_id: int, reason: str) -> None:
    """Follow an ending that administration stored itself (in the transaction of its audit
    entry): drop this process's copy of the game and tell the table, with the reason."""
    async with live.game_lock(game_id):
        cached = live.games.get(game_id)
        if cached is not None:
            _forget(live, cached)
        lg = await _get(live, game_id)
        if lg.status == "playing" or lg.termination is None:
            return
        await _ended(live, lg, lg.result, lg.termination, lg.status, time.time(), reason)


# --- clocks and absences -------------------------------------------------------------------


def _arm(live: LivePlay, lg: LiveGame) -> None:
    """(Re)start the timer that flags the side to move when its time runs out."""
    if lg.timer is not None:
        lg.timer.cancel()
        lg.timer = None
    if lg.clock is None or lg.status != "playing":
        return
    delay = max(0.0, lg.clock.deadline(lg.game.position.turn) - time.time())
    game_id = lg.id
    lg.timer = asyncio.get_running_loop().call_later(
        delay, lambda: live.spawn(_flag(live, game_id))
    )


async def _flag(live: LivePlay, game_id: int) -> None:
    async with live.game_lock(game_id):
        lg = live.games.get(game_id)
        if lg is None or lg.clock is None or lg.status != "playing":
            return
        turn: Color = lg.game.position.turn
        now = time.time()
        if lg.clock.left(turn, turn, now) > 0:
            _arm(live, lg)
            return
        if not await _finish(live, lg, result_for(turn.other), "timeout", now):
            await _get(live, game_id)  # another process moved on: follow it


async def player_away(live: LivePlay, user_id: int, game_id: int) -> None:
    """A player's last connection went: the clock keeps running and the grace period starts."""
    async with live.game_lock(game_id):
        lg = await _get(live, game_id)
        colour = lg.colour_of(user_id)
        if lg.status != "playing" or colour is None or colour in lg.away:
            return
        since = time.time()
        lg.away[colour] = since
        await live.publish(
            table_channel(lg.table_id),
            {
                "type": "player_away",
                "table": lg.table_id,
                "game": lg.id,
                "colour": colour.value,
                "since": int(since * 1000),
                "claim_after": int((since + live.settings.disconnect_grace_seconds) * 1000),
            },
        )


async def player_back(live: LivePlay, user_id: int, game_id: int) -> None:
    """A player connected again (to this process): the opponent can no longer claim."""
    async with live.game_lock(game_id):
        lg = await _get(live, game_id)
        colour = lg.colour_of(user_id)
        if lg.status != "playing" or colour is None:
            return
        # Announced even if this process did not see the player go: another one may have.
        lg.away.pop(colour, None)
        await live.publish(
            table_channel(lg.table_id),
            {"type": "player_back", "table": lg.table_id, "game": lg.id, "colour": colour.value},
        )
