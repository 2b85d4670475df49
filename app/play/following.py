"""Following the games another process plays: its moves, rung on the broker or read from the log,
are applied to this process's copies, so that the next move here needs no query."""

from __future__ import annotations

import asyncio

from app.live import events
from app.live.liveplay import LivePlay
from app.live.log_store import StoredEvent
from app.play import cache as game_cache
from app.play import timeouts
from app.play.clocks import GameClock, per_move_ms
from app.play.players import LiveGame, PlayerRef, TableInfo
from app.rules import Color, Game, RulesError, get_variant
from app.status import GameStatus


def follow(live: LivePlay, event: StoredEvent) -> None:
    """Keep a cached game current from an event stored by another process (rung on the broker
    or read from the log), so that the next move here needs no query: a move that follows on
    from this copy is played on it, with the clocks it carries; an ending drops the copy.

    A copy busy under its lock (this process is still announcing its own last move, typically)
    takes the event once the lock is free: waiters get a lock in the order they asked, so the
    events are applied in their order, before any move asked for after them here. A copy that
    does not follow on is left to `_catch_up`, which reads storage."""
    data = events.of(event)
    if data["type"] == "move":
        lg = live.games.get(data["game"])
        if lg is None:
            return
        if lg.lock is not None and lg.lock.locked():
            live.spawn(_follow_when_free(live, lg.lock, data))
            return
        _follow_move(live, lg, data)
    elif data["type"] in ("game_ended", "takeback", "berserk"):  # the copy is over, or stale
        lg = live.games.get(data["game"])
        if lg is not None and not (lg.lock is not None and lg.lock.locked()):
            live.drop(lg)
    elif data["type"] == "game_started":
        lg = _started(live, data)
        if lg is not None:
            game_cache.cache(live, lg)


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
            table.clock_increment_s * 1000,
            clocks["black"],
            clocks["white"],
            live.clock.time(),
            per_move_ms=per_move_ms(table.clock_base_s),
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
        # Checked by the server that stored it: applied without generating the legal moves.
        known = lg.game.play_known(data["move"])
    except RulesError:
        known = False
    if not known or lg.game.ply != data["ply"] or lg.game.outcome() is not None:
        live.drop(lg)  # read afresh if it is used again
        return
    clocks = data.get("clocks")
    if lg.clock is not None and clocks is not None:
        lg.clock = lg.clock.restarted(clocks["black"], clocks["white"], data["at"] / 1000)
    if lg.draw_offer is mover.other:
        lg.draw_offer = None  # answering an offer with a move declines it
    due = data.get("first_move_deadline")
    lg.first_move_deadline = due / 1000 if due is not None else None
    # The clock is watched by the server that stored the move (its timer, and every server's
    # sweep behind it): a timer here too would only be rearmed at every move.
    timeouts.disarm(lg)
