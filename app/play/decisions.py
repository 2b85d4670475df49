"""What the players of a game decide on its row, locked and read afresh in the transaction that
changes it (so it holds whichever process each player is on): resigning, offering, accepting or
declining a draw, aborting, and claiming against an absent opponent."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from sqlalchemy.ext.asyncio import AsyncSession

from app.db.models import Game as GameRow
from app.errors import Code
from app.live import events
from app.live.liveplay import LivePlay, PlayError, no_game
from app.live.log_store import StoredEvent
from app.play import endings
from app.play import store as stored_games
from app.play.state import away_of, first_turn, offer_ply, standing_offer, stored_clock
from app.rules import Color, Outcome, Termination
from app.status import GameStatus
from app.tables import presence
from app.tournaments import arena

Decision = Callable[[AsyncSession, GameRow, Color], Awaitable[list[StoredEvent]]]


async def decide(live: LivePlay, user_id: int, game_id: int, action: Decision) -> None:
    """Run `action(session, row, colour)` on the game's locked row for one of its players, then
    commit and announce what it stored."""
    async with live.game_lock(game_id), live.db.session() as session:
        row = await endings.locked_row(session, game_id)
        if row is None or row.table_id is None:
            raise no_game(game_id)
        if user_id == row.black_id:
            colour = Color.BLACK
        elif user_id == row.white_id:
            colour = Color.WHITE
        elif row.is_private:  # its id is confirmed to nobody
            raise no_game(game_id)
        else:
            raise PlayError(Code.NOT_A_PLAYER, f"you do not play in game {game_id}")
        if row.status != GameStatus.PLAYING:
            raise PlayError(Code.GAME_OVER, f"game {game_id} has ended ({row.result})")
        stored: list[StoredEvent] = await action(session, row, colour)
        await session.commit()
    await endings.after(live, game_id, stored)


async def _end_row(
    live: LivePlay,
    session: AsyncSession,
    row: GameRow,
    outcome: Outcome,
    reason: str | None = None,
) -> list[StoredEvent]:
    """End the game of a locked row known to be in progress (`reason`: why, in words)."""
    stored = await endings.store_ending(
        live, session, row.id, outcome.result(), outcome.termination, row=row, reason=reason
    )
    assert stored is not None
    return stored


async def resign(live: LivePlay, user_id: int, game_id: int) -> None:
    async def act(session: AsyncSession, row: GameRow, colour: Color) -> list[StoredEvent]:
        return await _end_row(live, session, row, Outcome(Termination.RESIGNATION, colour.other))

    await decide(live, user_id, game_id, act)


async def offer_draw(live: LivePlay, user_id: int, game_id: int) -> None:
    """Offer a draw, or agree to one if the opponent's offer stands."""

    async def act(session: AsyncSession, row: GameRow, colour: Color) -> list[StoredEvent]:
        offer = standing_offer(row)
        if offer is colour.other:
            return await _end_row(live, session, row, Outcome(Termination.AGREEMENT))
        if offer is colour or offer_ply(row, colour) == row.ply_count:
            raise PlayError(Code.DRAW_OFFER_LIMIT, "one draw offer per move: make a move first")
        if row.tournament_id is not None:
            event = await stored_games.tournament_of(session, row.id)
            if event is not None and row.ply_count < 2 * event.draw_after_move:
                raise PlayError(
                    Code.TOO_EARLY,
                    f"no draw offers in this tournament before move {event.draw_after_move}",
                )
        stored_games.offer_draw(row, by_black=colour is Color.BLACK)
        assert row.table_id is not None
        return await live.record(
            session,
            row.table_id,
            [events.draw_offered(row.table_id, row.id, colour.value)],
            live.clock.now(),
        )

    await decide(live, user_id, game_id, act)


async def answer_draw(live: LivePlay, user_id: int, game_id: int, *, accept: bool) -> None:
    async def act(session: AsyncSession, row: GameRow, colour: Color) -> list[StoredEvent]:
        if standing_offer(row) is not colour.other:
            raise PlayError(Code.NO_DRAW_OFFER, "your opponent has not offered a draw")
        if accept:
            return await _end_row(live, session, row, Outcome(Termination.AGREEMENT))
        stored_games.withdraw_offer(row)
        assert row.table_id is not None
        return await live.record(
            session,
            row.table_id,
            [events.draw_declined(row.table_id, row.id, colour.value)],
            live.clock.now(),
        )

    await decide(live, user_id, game_id, act)


async def abort(live: LivePlay, user_id: int, game_id: int) -> None:
    """Either player may abort until they have made their own first move."""

    async def act(session: AsyncSession, row: GameRow, colour: Color) -> list[StoredEvent]:
        first = first_turn(row.variant, row.start_fen)
        if row.ply_count >= (1 if colour is first else 2):
            raise PlayError(Code.TOO_EARLY, "a game can be aborted only before your first move")
        by = colour.value.capitalize()
        return await _end_row(live, session, row, Outcome(Termination.ABORTED), f"{by} aborted it")

    await decide(live, user_id, game_id, act)


class _OpponentPresent(Exception):
    def __init__(self, user_id: int) -> None:
        self.user_id = user_id


async def claim_win(live: LivePlay, user_id: int, game_id: int) -> None:
    """Win against an opponent away past the grace period (abort if no move was made).

    The absence noted in the game is checked against presence itself: an opponent connected
    to a live server process is not away, whatever the game says (a process taken for gone
    while it was not, by a cut connection, once marked its players so), and their absence is
    ended instead."""

    async def act(session: AsyncSession, row: GameRow, colour: Color) -> list[StoredEvent]:
        since = away_of(row).get(colour.other)
        if since is None:
            raise PlayError(Code.TOO_EARLY, "your opponent is connected")
        claim_at = since + live.settings.disconnect_grace_seconds
        now = live.clock.time()
        if now < claim_at:
            raise PlayError(Code.TOO_EARLY, f"you may claim in {claim_at - now:.0f} seconds")
        opponent = row.white_id if colour is Color.BLACK else row.black_id
        if opponent is not None and await presence.present(live, session, opponent):
            raise _OpponentPresent(opponent)
        if row.ply_count == 0:
            away = colour.other.value.capitalize()
            reason = f"{away} left before the first move"
            return await _end_row(live, session, row, Outcome(Termination.ABORTED), reason)
        return await _end_row(live, session, row, Outcome(Termination.ABANDONED, colour))

    try:
        await decide(live, user_id, game_id, act)
    except _OpponentPresent as present:
        await presence.back(live, present.user_id)
        raise PlayError(Code.TOO_EARLY, "your opponent is connected") from None


async def berserk(live: LivePlay, user_id: int, game_id: int) -> None:
    """Go berserk in an arena game before one's first move: half one's time, no increment,
    and a point more for a win of 14 plies or more (`app.tournaments.arena`)."""

    async def act(session: AsyncSession, row: GameRow, colour: Color) -> list[StoredEvent]:
        found = None
        if row.tournament_id is not None:
            found = await stored_games.tournament_of(session, row.id)
        if found is None or found.kind != "arena":
            raise PlayError(Code.CONFLICT, "berserk is for arena games")
        base = row.clock_base_s
        if base is None or not arena.can_berserk(base, row.clock_increment_s):
            raise PlayError(Code.CONFLICT, "berserk needs a clock with a base time")
        first = first_turn(row.variant, row.start_fen)
        if row.ply_count > (0 if colour is first else 1):
            raise PlayError(Code.CONFLICT, "berserk only before your first move")
        if row.black_berserk if colour is Color.BLACK else row.white_berserk:
            raise PlayError(Code.CONFLICT, "you have gone berserk already")
        left_ms = int(arena.berserk_clock(base, row.clock_increment_s)[0] * 1000)
        if colour is Color.BLACK:
            row.black_berserk, row.black_clock_ms = True, left_ms
        else:
            row.white_berserk, row.white_clock_ms = True, left_ms
        clock = stored_clock(row)
        assert clock is not None and row.table_id is not None
        clocks: events.Clocks = {"black": clock.black_ms, "white": clock.white_ms}
        berserked = events.berserk(row.table_id, row.id, colour.value, clocks)
        return await live.record(session, row.table_id, [berserked], live.clock.now())

    await decide(live, user_id, game_id, act)
