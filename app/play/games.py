"""Playing a game's moves, and what a game shows (its snapshot, a player's games in progress).

Moves take the fast path: checked against the cached game, stored by the group-commit writer
with a write conditional on the ply the cache believed in, together with their table events.
A write that matches no row means another process got there first: the cache is dropped and
rebuilt from the database, and the request is refused as stale. Everything else a game keeps
(endings in `endings`, draw offers and claims in `decisions`, absences) is decided on the
game's row, locked and read afresh in the transaction that changes it, so it holds whichever
process the players are on. The copies are kept by `game_cache`, followed across processes by
`following`, and their clocks watched by `timeouts`.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, replace
from typing import Any

from app.correspondence import conditional
from app.correspondence import service as correspondence
from app.errors import Code
from app.live import events
from app.live.liveplay import LivePlay, PlayError, no_game
from app.live.log_store import StoredEvent
from app.metrics import GAMES_FINISHED, MOVES_REJECTED
from app.play import cache as game_cache
from app.play import endings, refusals, timeouts
from app.play import moves_store as stored_moves
from app.play import store as stored_games
from app.play.clocks import DAY_S, GameClock
from app.play.commits import MoveCommit, Stored
from app.play.players import LiveGame, TableInfo, read_table
from app.play.state import (
    away_of,
    clocks_run,
    first_move_deadline,
    standing_offer,
    standing_takeback,
    stored_clock,
)
from app.ratings import service as ratings
from app.rules import Color, Outcome, RulesError, Termination
from app.status import GameStatus
from app.timeutil import as_datetime

logger = logging.getLogger(__name__)


# --- loading -------------------------------------------------------------------------------


async def playing_for(
    live: LivePlay, user_id: int, *, live_clocks_only: bool = False
) -> list[dict[str, int]]:
    """The user's games in progress, so a reconnecting client knows what to watch
    (`live_clocks_only`: but their correspondence games)."""
    async with live.db.session() as session:
        rows = await stored_games.playing_for(session, user_id, live_clocks_only)
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
        # Who went berserk in an arena game: half their time and no increment.
        "berserk": {
            "black": bool(lg.clock and lg.clock.black_berserk),
            "white": bool(lg.clock and lg.clock.white_berserk),
        },
        "rating_change": None,
        "takeback_offer": None,
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
                live.drop(lg)
            lg = await game_cache.get(live, game_id)
        else:
            lg.clock = stored_clock(row)
            lg.first_move_deadline = first_move_deadline(row)
        lg.draw_offer, lg.away = standing_offer(row), away_of(row)
        asked = standing_takeback(row) if row.status == GameStatus.PLAYING else None
        return game_payload(live, lg, live.clock.time()) | {
            "rating_change": rating_change,
            "takeback_offer": None if asked is None else asked.value,
        }


# --- moves ---------------------------------------------------------------------------------


def _player(lg: LiveGame, user_id: int) -> Color:
    colour = lg.colour_of(user_id)
    if colour is None:
        if lg.private:  # its id is confirmed to nobody
            raise no_game(lg.id)
        raise PlayError(Code.NOT_A_PLAYER, f"you do not play in game {lg.id}")
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
        lg = await game_cache.get(live, game_id)
        if ply > lg.game.ply and lg.status == GameStatus.PLAYING:
            # The player has seen moves this copy has not (played through another process).
            lg = await game_cache.catch_up(live, lg)
        try:
            colour = _player(lg, user_id)
            if lg.status != GameStatus.PLAYING:
                raise PlayError(Code.GAME_OVER, f"game {lg.id} has ended ({lg.result})")
            if ply != lg.game.ply:
                raise PlayError(Code.STALE_PLY, refusals.STALE_PLY)
            if colour is not lg.game.position.turn:
                raise PlayError(Code.NOT_YOUR_TURN, refusals.NOT_YOUR_TURN)
        except PlayError as exc:
            MOVES_REJECTED.labels(exc.code).inc()
            raise
        now = live.clock.time()
        late = timeouts.expiry(
            lg.game.ply, lg.game.position.turn, lg.clock, lg.first_move_deadline, now
        )
        if late is not None:
            await endings.end(live, game_id, late, ply=lg.game.ply)
            MOVES_REJECTED.labels("game_over").inc()
            if late.termination is Termination.ABORTED:
                raise PlayError(Code.GAME_OVER, "the first move came too late: the game is aborted")
            raise PlayError(Code.GAME_OVER, "your time ran out")
        try:
            move = lg.game.play(text)
        except RulesError as exc:
            MOVES_REJECTED.labels(exc.code).inc()
            raise PlayError(Code.of(exc.code), refusals.refusal(exc, text, lg.game)) from exc
        clock = _clock_after(lg.clock, colour, ply, now)
        outcome = lg.game.outcome()
        move_text = str(move)
        # The next side's first move is due (after the game's first move only).
        corr = lg.clock is not None and lg.clock.per_move_ms > 0  # days per move
        first_move_due = None
        if outcome is None and not clocks_run(lg.game.ply):
            first_move_due = now + (DAY_S if corr else live.settings.first_move_seconds)
        moved = _move_event(lg, move_text, clock, now, outcome is not None, first_move_due)
        ending: dict[str, Any] = {}
        deadline = None
        table_after: TableInfo | None = None
        if outcome is not None:
            ending = {
                "status": GameStatus.FINISHED,
                "result": outcome.result(),
                "termination": outcome.termination.value,
            }
            if lg.table is not None:  # both players stay seated, for a rematch
                table_after = replace(
                    lg.table, game_status=GameStatus.FINISHED, rematch=frozenset()
                )
            final = _Final(lg, outcome, clock.payload(None, now) if clock else None)
            made = [moved, *final.events(live, None, table_after)]
        elif first_move_due is not None:
            made = [moved]
            deadline = as_datetime(first_move_due)
        else:
            made = [moved]
            if clock is not None:
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
            events=tuple(made),
            **ending,
        )
        try:
            if outcome is not None and lg.table is not None and (lg.table.rated or corr):
                stored = await _store_final_move(live, commit, moved, final)
            elif corr:  # its notice is written with it
                stored = await _store_correspondence_move(live, commit, made)
            else:
                stored = await live.writer.store(commit)
        except Exception as exc:
            logger.warning("cannot store move %d of game %d", commit.ply, lg.id, exc_info=True)
            live.drop(lg)  # the cache already holds the move: rebuild it on next use
            raise PlayError(Code.UNAVAILABLE, "the move could not be stored; try again") from exc
        if stored is None:
            raise await game_cache.refused_stale(live, lg)
        live.moves.accepted(lg.variant)
        lg.clock, lg.first_move_deadline = clock, first_move_due
        if lg.draw_offer is colour.other:
            lg.draw_offer = None  # answering an offer with a move declines it
        await live.announce(stored)
        if outcome is not None:
            lg.status = GameStatus.FINISHED
            lg.result, lg.termination = outcome.result(), outcome.termination
            live.drop(lg)
            GAMES_FINISHED.labels(lg.variant, outcome.termination).inc()
            if table_after is not None:
                await live.publish_lobby(table_after)
            else:
                await endings.table_changed(live, lg.table_id)
        else:
            timeouts.arm(live, lg)
            if corr:  # the player now to move may have a reply waiting for this move
                owner = lg.black.id if lg.game.position.turn is Color.BLACK else lg.white.id
                live.spawn(conditional.after_move(live, game_id, owner, lg.game.ply, move_text))


def _clock_after(clock: GameClock | None, mover: Color, ply: int, now: float) -> GameClock | None:
    """The clocks once `mover` has made the move after `ply` plies at `now`: a first move
    (no clock running yet) leaves both times as they are, the next side's turn starting now."""
    if clock is None:
        return None
    if not clocks_run(ply):
        return clock.restarted(clock.black_ms, clock.white_ms, now)
    return clock.after_move(mover, now)


@dataclass(frozen=True, slots=True)
class _Final:
    """A move that ends its game: what its `game_ended` says."""

    lg: LiveGame
    outcome: Outcome
    clocks: events.Clocks | None

    def events(
        self, live: LivePlay, rating_change: events.RatingChanges | None, table: TableInfo | None
    ) -> list[events.TableEvent]:
        """The ending's events, each made whole: `game_ended` with the rating change, and the
        table as it is left (`table`, if known)."""
        lg = self.lg
        result, termination = self.outcome.result(), self.outcome.termination
        ended = events.game_ended(
            lg.table_id, lg.id, result, termination, self.clocks, rating_change=rating_change
        )
        return [ended] if table is None else [ended, live.table_update(table)]


async def _store_final_move(
    live: LivePlay, commit: MoveCommit, moved: events.MoveEvent, final: _Final
) -> list[StoredEvent] | None:
    """Store a move that ends a rated game, in a transaction of its own rather than through the
    move writer, whose batch statement holds no rating update: the ratings move in the
    transaction that stores the game's end (`ratings.apply`), and its `game_ended` carries the
    change. The write is the writer's conditional move statement (`app.play.store.write_one`);
    None if the game was not in progress at the ply before. A game has one final move, so the
    writer's batching is not missed."""
    async with live.db.session() as session:
        row = await stored_moves.write_one(session, commit)
        if row is None:
            return None
        rating_change = await ratings.apply(session, row, commit.at, live.settings)
        # The table shows both players' ratings as the game left them.
        table = await read_table(session, commit.table_id)
        made = [moved, *final.events(live, rating_change, table)]
        stored = await live.record(session, commit.table_id, made, commit.at)
        outcome = final.outcome
        await correspondence.ended(
            live, session, row, outcome.result(), outcome.termination.value, commit.table_id
        )
        await session.commit()
    return stored


async def _store_correspondence_move(
    live: LivePlay, commit: MoveCommit, made: list[events.TableEvent]
) -> Stored:
    """Store a correspondence game's move in a transaction of its own, with the notice that
    tells the opponent it is their move (the writer's batches hold no notice). Such moves are
    days apart: the writer's batching is not missed."""
    async with live.db.session() as session:
        row = await stored_moves.write_one(session, commit)
        if row is None:
            return None
        stored = await live.record(session, commit.table_id, made, commit.at)
        await correspondence.moved(live, session, row, commit.ply, commit.table_id)
        await session.commit()
    return stored


# --- endings -------------------------------------------------------------------------------


# --- clocks --------------------------------------------------------------------------------


async def current_ply(live: LivePlay, game_id: int, user_id: int) -> int:
    """How many plies the game has, as stored: the ply a move made now answers (the bot API,
    whose moves name no ply). A private game that `user_id` does not play is no game."""
    async with live.db.session() as session:
        row = await stored_games.get(session, game_id)
    if row is None or (row.is_private and user_id not in (row.black_id, row.white_id)):
        raise no_game(game_id)
    return row.ply_count
