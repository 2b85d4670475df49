"""Takebacks: a player asks to take back their last move (and the opponent's reply, if it came),
the opponent accepts or declines; casual games only, at tables that allow them, between players
who both allow them (an account's preference). Decided on the
game's locked row like a draw offer (`decisions.decide`); an accepted one removes the plies
from the game's record (`moves`), so that replays and PDN stay true, and sets the row's ply,
clocks and deadline back. Every process's copy of the game is then stale and dropped (here at
once, elsewhere from the `takeback` event: `following`)."""

from __future__ import annotations

from sqlalchemy.ext.asyncio import AsyncSession

from app.accounts import store as accounts
from app.db.models import Game as GameRow
from app.errors import Code
from app.live import events
from app.live.liveplay import LivePlay, PlayError
from app.live.log_store import StoredEvent
from app.play import cache as game_cache
from app.play import store as stored_games
from app.play import tables_store as stored_tables
from app.play.clocks import first_move_allowance
from app.play.decisions import decide
from app.play.state import clocks_run, first_turn, standing_takeback, turn_of
from app.rules import Color, Game, get_variant
from app.timeutil import as_datetime


def _plies(row: GameRow, asking: Color) -> int:
    """How many plies `asking`'s takeback removes: their last move, and the reply to it if it
    came (it is then their turn)."""
    return 1 if turn_of(row) is asking.other else 2


async def _check_allowed(session: AsyncSession, row: GameRow, asking: Color) -> None:
    """Refuse a request where takebacks are off: rated games, tables that turned them off,
    and games of a player who turned them off in their settings (`app.accounts.preferences`),
    the asker included, read now (a change of mind applies at once)."""
    if row.rated:
        raise PlayError(Code.TAKEBACKS_OFF, "no takebacks in rated games")
    assert row.table_id is not None
    table = await stored_tables.get(session, row.table_id)
    if table is None or not table.takebacks:
        raise PlayError(Code.TAKEBACKS_OFF, "takebacks are turned off at this table")
    mine, theirs = (row.black_id, row.white_id)
    if asking is Color.WHITE:
        mine, theirs = theirs, mine
    refusing = await accounts.takeback_refusers(session, [p for p in (mine, theirs) if p])
    if mine in refusing:
        raise PlayError(Code.TAKEBACKS_OFF, "you turned takebacks off in your account's settings")
    if theirs in refusing:
        name = refusing[theirs]
        raise PlayError(
            Code.TAKEBACKS_OFF,
            f"your opponent, {name}, does not allow takebacks (their account's setting)",
        )


async def _take_back(
    live: LivePlay, session: AsyncSession, row: GameRow, asking: Color
) -> list[StoredEvent]:
    """Set the game back to before `asking`'s last move, in the caller's transaction."""
    assert row.table_id is not None
    ply = row.ply_count - _plies(row, asking)
    loaded = await stored_games.load(session, row.id)
    assert loaded is not None
    game = Game(get_variant(row.variant), start_fen=row.start_fen)
    for text in loaded.moves[:ply]:
        game.play(text)
    now = live.clock.time()
    turn: Color = game.position.turn
    clocks: events.Clocks | None = None
    deadline: float | None = None
    if row.clock_base_s is not None:
        left = {Color.BLACK: row.clock_base_s * 1000, Color.WHITE: row.clock_base_s * 1000}
        first = first_turn(row.variant, row.start_fen)
        for number, clock_ms in await stored_games.move_clocks(session, row.id, ply):
            if clock_ms is not None:
                left[first if number % 2 == 1 else first.other] = clock_ms
        clocks = {"black": left[Color.BLACK], "white": left[Color.WHITE]}
        deadline = now + left[turn] / 1000
    first_move_due = None
    if not clocks_run(ply):  # no clock runs before both first moves: the first-move deadline
        allowance = first_move_allowance(live.settings.first_move_seconds, row.clock_base_s)
        first_move_due = deadline = now + allowance
    await stored_games.take_back(
        session,
        row,
        ply,
        as_datetime(now),
        (clocks["black"], clocks["white"]) if clocks is not None else None,
        as_datetime(deadline) if deadline is not None else None,
    )
    event = events.takeback(row.table_id, row.id, asking.value, game, clocks, now, first_move_due)
    return await live.record(session, row.table_id, [event], live.clock.now())


async def offer(live: LivePlay, user_id: int, game_id: int) -> None:
    """Ask to take back your last move; the computer accepts at once. An opponent's request
    standing is accepted instead."""
    taken = False

    async def act(session: AsyncSession, row: GameRow, colour: Color) -> list[StoredEvent]:
        nonlocal taken
        await _check_allowed(session, row, colour)
        asked = standing_takeback(row)
        if asked is colour.other:
            taken = True
            return await _take_back(live, session, row, asked)
        if asked is colour:
            raise PlayError(Code.TOO_EARLY, "your takeback request stands: wait for the answer")
        if row.ply_count < _plies(row, colour):
            raise PlayError(Code.TOO_EARLY, "you have no move to take back yet")
        opponent = row.white_id if colour is Color.BLACK else row.black_id
        if live.is_ai(opponent):
            taken = True
            return await _take_back(live, session, row, colour)
        stored_games.ask_takeback(row, colour.value)
        assert row.table_id is not None
        made = [events.takeback_offered(row.table_id, row.id, colour.value)]
        return await live.record(session, row.table_id, made, live.clock.now())

    await decide(live, user_id, game_id, act)
    if taken:
        await game_cache.load(live, game_id)  # its clock's timer armed again


async def answer(live: LivePlay, user_id: int, game_id: int, *, accept: bool) -> None:
    async def act(session: AsyncSession, row: GameRow, colour: Color) -> list[StoredEvent]:
        if standing_takeback(row) is not colour.other:
            raise PlayError(Code.NO_TAKEBACK, "your opponent has not asked for a takeback")
        if accept:
            return await _take_back(live, session, row, colour.other)
        stored_games.ask_takeback(row, None)
        assert row.table_id is not None
        made = [events.takeback_declined(row.table_id, row.id, colour.value)]
        return await live.record(session, row.table_id, made, live.clock.now())

    await decide(live, user_id, game_id, act)
    if accept:
        await game_cache.load(live, game_id)
