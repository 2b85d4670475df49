"""Challenges: one player offers another a game (variant, clock, colour, rated); the other
accepts, which starts the game at a table of its own, or declines; the challenger may cancel.

A challenge is stored, so it survives restarts and is seen from every process; it expires
`CHALLENGE_SECONDS` after it was made (read so, nothing sweeps it). Every answer is a write
conditional on the challenge still waiting, and an acceptance makes it in the transaction that
stores the game: accepted twice at once on two processes, one game starts. Each change is told
to the other player on every connection of theirs (`LivePlay.notify`): `challenge`,
`challenge_declined`, `challenge_canceled`; an accepted one starts a game like any other, so
both players hear `your_game`.
"""

from __future__ import annotations

import random
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from app.accounts import limits
from app.accounts import store as stored_accounts
from app.accounts.limits import Bucket
from app.db.models import Challenge
from app.errors import Code
from app.live import messages
from app.live.events import unix_ms
from app.live.liveplay import LivePlay, PlayError
from app.matchmaking import challenges_store as stored
from app.notify import inbox as notifications
from app.play.clocks import clock_payload
from app.play.players import PlayerRef
from app.ratings import service as ratings
from app.status import UserKind
from app.tables import opening as table_opening
from app.tables import seating
from app.tables import service as tables
from app.timeutil import as_datetime, as_unix

CHALLENGE_SECONDS = 300  # a challenge not answered by then expires
MAX_WAITING = 10  # challenges of one player waiting for an answer at once
# Why a challenge is declined: lichess's reasons.
DECLINE_REASONS = (
    *("generic", "later", "tooFast", "tooSlow", "timeControl", "rated", "casual"),
    *("standard", "variant", "noBot", "onlyBot"),
)


def payload(row: Challenge, challenger: str, dest: str, now: float) -> dict[str, Any]:
    """A challenge as both faces show it at `now` (Unix seconds)."""
    clock = clock_payload(row.clock_base_s, row.clock_increment_s)
    status = row.status
    if status == stored.CREATED and as_unix(row.expires_at) <= now:
        status = "expired"
    return {
        "id": row.id,
        "challenger": {"id": row.challenger_id, "name": challenger},
        "dest": {"id": row.dest_id, "name": dest},
        "variant": row.variant,
        "clock": clock,
        "colour": row.colour,
        "rated": row.rated,
        "status": status,
        "decline_reason": row.decline_reason,
        "game": row.game_id,
        "expires_at": unix_ms(as_unix(row.expires_at)),
        "start_fen": row.start_fen,
    }


async def make(
    live: LivePlay,
    user: PlayerRef,
    dest_name: str,
    *,
    variant: str = "english",
    clock: dict[str, int] | None = None,
    colour: str = "random",
    rated: bool = False,
    start_fen: str | None = None,
) -> dict[str, Any]:
    """Challenge the player named `dest_name`; they are told at once. A game from a set
    position (`start_fen`) is casual, as an open table's."""
    rules_variant, start_fen = table_opening.checked_start(variant, start_fen)
    variant = rules_variant.name
    if rated and start_fen is not None:
        raise PlayError(Code.RATED_FROM_POSITION, "rated games start from the standard position")
    if colour not in tables.COLOURS:
        raise PlayError(Code.BAD_MESSAGE, "colour must be black, white or random")
    base, increment = table_opening.parse_clock(clock)
    now = live.clock.time()
    async with live.db.session() as session:
        dest = await stored_accounts.find_user(session, dest_name)
        if dest is None or dest.kind == UserKind.IMPORTED or dest.banned:
            raise PlayError(Code.NOT_FOUND, f"no player {dest_name!r}")
        if dest.id == user.id:
            raise PlayError(Code.BAD_MESSAGE, "you cannot challenge yourself")
        if dest.kind == UserKind.AI:  # it would never answer: its games start at once instead
            raise PlayError(
                Code.BAD_MESSAGE, "the computer takes no challenges: play it with play_ai"
            )
        if rated:
            await ratings.check_may_play_rated(session, user.id)
            await ratings.check_may_play_rated(session, dest.id)
        if await stored.count_waiting_by(session, user.id, as_datetime(now)) >= MAX_WAITING:
            raise PlayError(
                Code.RATE_LIMITED, f"at most {MAX_WAITING} of your challenges may wait at once"
            )
        await _count(live, session, user.id, dest.id, as_datetime(now))
        row = await stored.create(
            session,
            challenger_id=user.id,
            dest_id=dest.id,
            variant=variant,
            clock_base_s=base,
            clock_increment_s=increment,
            colour=colour,
            rated=rated,
            start_fen=start_fen,
            created_at=as_datetime(now),
            expires_at=as_datetime(now) + timedelta(seconds=CHALLENGE_SECONDS),
        )
        made = payload(row, user.name, dest.name, live.clock.time())
        data = {"challenge": row.id, "from": user.name, "variant": variant, "clock": made["clock"]}
        await notifications.add(live, session, dest.id, "challenge", data)
        await session.commit()
    await live.notify(dest.id, messages.challenge_notice("challenge", made))
    return made


async def _count(
    live: LivePlay, session: AsyncSession, challenger_id: int, dest_id: int, now: datetime
) -> None:
    """Count the challenge against its recipient's and its pair's limits (in the transaction
    that stores it), or refuse it: `rate_limited`, with Retry-After over REST (429)."""
    settings = live.settings
    window = settings.challenge_window_seconds
    counted = [
        (limits.key("challenged", str(dest_id)), Bucket(settings.challenges_per_recipient, window)),
        (
            limits.key("challenge-pair", f"{challenger_id}>{dest_id}"),
            Bucket(settings.challenges_per_pair, window),
        ),
    ]
    retry_after = await limits.take_all(session, counted, now)
    if retry_after is not None:
        raise PlayError(
            Code.RATE_LIMITED,
            f"this player has been challenged too often; try again in {retry_after} s",
            retry_after=retry_after,
        )


async def _waiting(live: LivePlay, challenge_id: int, user_id: int) -> tuple[Challenge, str, str]:
    async with live.db.session() as session:
        found = await stored.get(session, challenge_id)
    if found is None or user_id not in (found[0].challenger_id, found[0].dest_id):
        raise PlayError(Code.NOT_FOUND, f"no challenge {challenge_id}")
    row = found[0]
    if row.status != stored.CREATED or as_unix(row.expires_at) <= live.clock.time():
        raise PlayError(
            Code.NO_LONGER_WAITING, f"challenge {challenge_id} no longer waits for an answer"
        )
    return found


async def accept(live: LivePlay, user: PlayerRef, challenge_id: int) -> dict[str, Any]:
    """Accept a challenge made to `user`: the game starts, colours as the challenger chose."""
    row, challenger_name, _ = await _waiting(live, challenge_id, user.id)
    if row.dest_id != user.id:
        raise PlayError(Code.NOT_FOUND, f"no challenge {challenge_id} for you")
    challenger = PlayerRef(row.challenger_id, challenger_name)
    colour = row.colour if row.colour != "random" else random.choice(tables.COLOURS[:2])
    black, white = (challenger, user) if colour == "black" else (user, challenger)
    async with live.db.session() as session:
        table, lg, events = await seating.seat_two(
            live,
            session,
            black,
            white,
            variant=row.variant,
            clock_base_s=row.clock_base_s,
            clock_increment_s=row.clock_increment_s,
            rated=row.rated,
            start_fen=row.start_fen,
        )
        now = live.clock.now()
        if not await stored.answer(session, challenge_id, now, "accepted", game_id=lg.id):
            raise PlayError(
                Code.NO_LONGER_WAITING,
                f"challenge {challenge_id} no longer waits for an answer",
            )
        await session.commit()
    await seating.started(live, table, lg, events)
    row.status, row.game_id = "accepted", lg.id
    return payload(row, challenger_name, user.name, live.clock.time())


async def decline(
    live: LivePlay, user: PlayerRef, challenge_id: int, reason: str = "generic"
) -> dict[str, Any]:
    """Decline a challenge made to `user`; the challenger is told (with lichess's reasons)."""
    if reason not in DECLINE_REASONS:
        raise PlayError(Code.BAD_MESSAGE, f"reason must be one of {', '.join(DECLINE_REASONS)}")
    row, challenger_name, _ = await _waiting(live, challenge_id, user.id)
    if row.dest_id != user.id:
        raise PlayError(Code.NOT_FOUND, f"no challenge {challenge_id} for you")
    return await _answer(live, row, challenger_name, user.name, "declined", reason)


async def cancel(live: LivePlay, user: PlayerRef, challenge_id: int) -> dict[str, Any]:
    """Withdraw a challenge `user` made; the challenged player is told."""
    row, _, dest_name = await _waiting(live, challenge_id, user.id)
    if row.challenger_id != user.id:
        raise PlayError(Code.NOT_FOUND, f"no challenge {challenge_id} of yours")
    return await _answer(live, row, user.name, dest_name, "canceled", None)


async def _answer(
    live: LivePlay, row: Challenge, challenger: str, dest: str, status: str, reason: str | None
) -> dict[str, Any]:
    async with live.db.session() as session:
        now = live.clock.now()
        if not await stored.answer(session, row.id, now, status, reason=reason):
            raise PlayError(
                Code.NO_LONGER_WAITING, f"challenge {row.id} no longer waits for an answer"
            )
        await session.commit()
    row.status, row.decline_reason = status, reason
    made = payload(row, challenger, dest, live.clock.time())
    told = row.challenger_id if status == "declined" else row.dest_id
    kind: messages.ChallengeNoticeType = (
        "challenge_declined" if status == "declined" else "challenge_canceled"
    )
    await live.notify(told, messages.challenge_notice(kind, made))
    return made


async def waiting_for(live: LivePlay, user_id: int) -> list[dict[str, Any]]:
    """The challenges made by or to the user that wait for an answer."""
    now = live.clock.time()
    async with live.db.session() as session:
        rows = await stored.waiting_for(session, user_id, as_datetime(now))
    return [payload(row, challenger, dest, now) for row, challenger, dest in rows]
