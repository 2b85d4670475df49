"""Opening a table: for people (its host seated, waiting for a second player) or against the
computer (its game started at once), within the room's and the host's limits."""

from __future__ import annotations

import random
from typing import Any

from pydantic import ValidationError
from sqlalchemy.ext.asyncio import AsyncSession

from app.accounts.preferences import allows_takebacks
from app.computer import limits as ai_limits
from app.computer.service import LEVELS
from app.computer.store import NAME_PREFIX
from app.db.models import Room
from app.errors import Code
from app.live.liveplay import LivePlay, PlayError
from app.play import tables_store as stored_tables
from app.play.clocks import (
    CORRESPONDENCE_DAYS,
    MAX_CLOCK_BASE_S,
    MAX_CLOCK_INCREMENT_S,
    Clock,
)
from app.play.players import PlayerRef, read_table
from app.ratings import service as ratings
from app.rules import Game, RulesError, Variant, get_variant
from app.status import TableState
from app.tables import seating
from app.tables import service as tables
from app.tables.rooms import find_room, first_open_room


def parse_clock(clock: dict[str, Any] | None) -> tuple[int | None, int]:
    """A clock as a message or a request gave it (`Clock`'s fields), as stored: base and
    increment in seconds (a correspondence clock: whole days and none)."""
    if clock is None:
        return None, 0
    try:
        return Clock.model_validate({k: v for k, v in clock.items() if v is not None}).seconds()
    except ValidationError:
        raise PlayError(
            Code.BAD_MESSAGE,
            f"clock base must be 1-{MAX_CLOCK_BASE_S} s and increment 0-{MAX_CLOCK_INCREMENT_S} s,"
            f" or days per move one of {', '.join(map(str, CORRESPONDENCE_DAYS))}",
        ) from None


def checked_start(variant: str, start_fen: str | None) -> tuple[Variant, str | None]:
    """The rules of `variant` and the canonical form of a start position a game can be played
    from (None: the standard start); refused with `bad_message` / `invalid_fen`."""
    try:
        rules_variant = get_variant(variant)
    except ValueError:
        raise PlayError(Code.BAD_MESSAGE, f"unknown variant {variant!r}") from None
    if start_fen is None:
        return rules_variant, None
    try:
        start = Game(rules_variant, start_fen=start_fen)
    except RulesError as exc:
        raise PlayError(Code.INVALID_FEN, str(exc)) from exc
    if start.outcome() is not None:
        raise PlayError(Code.INVALID_FEN, f"the game is already over in {start_fen}")
    return rules_variant, start.fen()


def _check_room(room: Room | None, room_ref: str | int | None) -> Room:
    """The room a table opens in: it exists and is open."""
    if room is None:
        raise PlayError(Code.NOT_FOUND, f"no room {room_ref}" if room_ref else "no open room")
    if not room.is_open:
        raise PlayError(Code.ROOM_CLOSED, f"room {room.name} is closed")
    return room


async def _may_host(live: LivePlay, session: AsyncSession, user: PlayerRef) -> None:
    """Refuse a host who already hosts `TABLES_PER_USER` tables, across all rooms, so that one
    user cannot fill rooms; the user's row is locked so that tables opened at once in
    different rooms (whose locks differ) count each other. Only tables waiting for a player or
    holding a game in progress count (one whose game has ended does not); the refusal names
    them, each with whether its game is in progress, so that a client offers to close them."""
    await stored_tables.lock_host(session, user.id)
    most = live.settings.tables_per_user
    hosted = await stored_tables.hosted(session, user.id)
    if len(hosted) >= most:
        names = ", ".join(str(table_id) for table_id, _ in hosted)
        raise PlayError(
            Code.TOO_MANY_TABLES,
            f"you already host {len(hosted)} tables ({names}): close one first",
            extra={
                "tables": [
                    {"id": table_id, "status": TableState.PLAYING if playing else TableState.OPEN}
                    for table_id, playing in hosted
                ]
            },
        )


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
    takebacks: bool | None = None,
) -> dict[str, Any]:
    """Open a table with `user` seated as host; `room_clock` takes the room's default clock.
    A `rated` table's games move both players' ratings: it needs registered accounts and the
    standard start (as lichess, a game from a set position says little about strength)."""
    if colour not in tables.COLOURS:
        raise PlayError(Code.BAD_MESSAGE, "colour must be black, white or random")
    if rated and start_fen is not None:
        raise PlayError(Code.RATED_FROM_POSITION, "rated games start from the standard position")
    if rated and private:
        # Rated games are public: nothing rated is hidden, nothing hidden shows in ratings.
        raise PlayError(Code.RATED_NOT_PRIVATE, "rated games are public: a private table is casual")
    async with live.change() as change:
        session = change.session
        # Locked: a room being closed (which closes its open tables) gets no new table, and
        # two tables opened at once in a full room do not both take its last place.
        room = _check_room(await find_room(session, room_ref, lock=True), room_ref)
        name = variant or room.variant
        rules_variant, start_fen = checked_start(name, start_fen)
        if room_clock:
            base, increment = room.clock_base_s, room.clock_increment_s
        else:
            base, increment = parse_clock(clock)
        await _may_host(live, session, user)
        if rated:
            await ratings.check_may_play_rated(session, user.id)
        if await stored_tables.count_open(session, room.id) >= room.table_limit:
            raise PlayError(Code.ROOM_CLOSED, f"room {room.name} has no free table")
        table, created_at = await seating.store_table(
            session,
            room.id,
            user,
            variant=rules_variant.name,
            clock=(base, increment),
            colour=colour,
            private=private,
            start_fen=start_fen,
            rated=rated,
            # On at a casual table unless turned off (by default, as the host's preference
            # says); never at a rated one.
            takebacks=not rated
            and (await allows_takebacks(session, user.id) if takebacks is None else takebacks),
        )
        # The host as the table reads them, with the rating shown beside their name.
        shown = await read_table(session, table.id)
        table.owner = shown.owner if shown is not None else user
        await change.record(table.id, [live.table_update(table)], created_at)
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
    if colour not in tables.COLOURS:
        raise PlayError(Code.BAD_MESSAGE, "colour must be black, white or random")
    rules_variant, start_fen = checked_start(variant, start_fen)
    base, increment = parse_clock(clock)
    async with live.db.session() as session:
        if room_ref is None:
            found = await first_open_room(session, rules_variant.name)
        else:
            found = await find_room(session, room_ref, lock=True)
        room = _check_room(found, room_ref)
        await _may_host(live, session, user)
        await ai_limits.limit_ai_games(live, session, user, address)
        table, _ = await seating.store_table(
            session,
            room.id,
            user,
            variant=rules_variant.name,
            clock=(base, increment),
            colour=colour,
            start_fen=start_fen,
            takebacks=await allows_takebacks(session, user.id),
        )
        user_colour = colour if colour != "random" else random.choice(tables.COLOURS[:2])
        black, white = (user, ai) if user_colour == "black" else (ai, user)
        lg, stored = await seating.create_game(
            live, session, table, black, white, ai_address=address
        )
        await session.commit()
    await seating.started(live, table, lg, stored)
    return live.table_payload(table, with_invite=True)


def ai_player(live: LivePlay, level: int) -> PlayerRef:
    """The AI's user at `level`; `bad_message` for a level it does not have."""
    for user_id, found in live.ai_levels.items():
        if found == level:
            return PlayerRef(user_id, f"{NAME_PREFIX}{level}")
    raise PlayError(Code.BAD_MESSAGE, f"level must be 1 to {max(LEVELS)}")


async def start_ai_game(
    live: LivePlay,
    user: PlayerRef,
    *,
    level: int,
    variant: str,
    colour: str,
    clock: dict[str, int] | None,
    room: str | int | None = None,
    start_fen: str | None = None,
    address: str | None = None,
) -> dict[str, Any]:
    """Open a table against the AI at `level` and start the game (casual, never rated);
    returns the table as its players see it. Refused (`too_many_ai_games`) beyond
    AI_GAMES_PER_USER games of the user's, or AI_GAMES_PER_ADDRESS from `address` (the
    client's), in progress."""
    if live.is_ai(user.id):
        raise PlayError(Code.NOT_A_PLAYER, "the computer does not play itself")
    ai = ai_player(live, level)
    return await open_ai_table(
        live,
        user,
        ai,
        room,
        variant=variant,
        clock=clock,
        colour=colour,
        start_fen=start_fen,
        address=address,
    )
