"""Tournaments' use cases: create, edit and cancel one, join and withdraw, and read one with its
standings. The director (`app.tournaments.director`) starts, pairs and finishes them.

Who may create: an administrator, any tournament; a registered player, a few at a time
(`MAX_OWN_OPEN`, `MAX_OWN_PER_DAY`). A rated tournament is for registered players (as rated
games are). An arena player who withdraws is paused and may join again; a Swiss or
round-robin player who withdraws is not paired again (their games played still count).
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from app.db import audit
from app.db.models import Tournament, TournamentPlayer
from app.errors import Code
from app.live.events import unix_ms
from app.live.liveplay import LivePlay, PlayError
from app.play.clocks import clock_payload
from app.ratings import store as stored_ratings
from app.ratings.categories import category_of
from app.ratings.service import check_may_play_rated
from app.status import GameStatus, UserKind
from app.timeutil import as_unix
from app.tournaments import scores
from app.tournaments import store as stored
from app.tournaments.settings import MAX_OWN_OPEN, MAX_OWN_PER_DAY, Settings, checked


async def announce(live: LivePlay, tournament_id: int) -> None:
    """Tell the pages following the tournament that it changed (they read it again)."""
    await live.publish(channel(tournament_id), {"type": "tournament", "id": tournament_id})


def channel(tournament_id: int) -> str:
    """Where a tournament's changes are announced (its page listens)."""
    return f"tournament:{tournament_id}"


@dataclass(frozen=True)
class Member:
    """Who asks, as read once from their account."""

    id: int
    name: str
    admin: bool
    kind: str
    banned: bool


async def create(live: LivePlay, user: Member, settings: Settings) -> dict[str, Any]:
    """Create a tournament; an administrator's may recur, a player's are limited."""
    s = checked(settings)
    now = live.clock.now()
    admin = user.admin
    if not admin:
        if user.kind != UserKind.REGISTERED:
            raise PlayError(Code.FORBIDDEN, "only registered players create tournaments")
        if s.every_minutes is not None:
            raise PlayError(Code.FORBIDDEN, "only administrators schedule recurring tournaments")
    async with live.db.session() as session:
        if not admin:
            running, today = await stored.count_created_by(
                session, user.id, now - timedelta(days=1)
            )
            if running >= MAX_OWN_OPEN or today >= MAX_OWN_PER_DAY:
                raise PlayError(
                    Code.RATE_LIMITED,
                    f"at most {MAX_OWN_OPEN} of your tournaments at a time, "
                    f"{MAX_OWN_PER_DAY} a day",
                )
        row = await stored.create(
            session, **_columns(s, now), created_by=user.id, created_at=now, status=stored.CREATED
        )
        if admin:  # an administrator's tournament (a recurring one, say): audited
            details = {"name": row.name, "kind": row.kind, "every_minutes": row.every_minutes}
            audit.add_entry(
                session, user.id, "tournament.create", "tournament", row.id, None, details
            )
        await session.commit()
        tournament_id = row.id
    return await _view(live, tournament_id)


def _columns(s: Settings, now: datetime) -> dict[str, Any]:
    starts_at = now + timedelta(seconds=s.starts_in)
    return {
        "kind": s.kind,
        "name": s.name,
        "variant": s.variant,
        "clock_base_s": s.base_s,
        "clock_increment_s": s.increment_s,
        "rated": s.rated,
        "ballot": s.ballot,
        "starts_at": starts_at,
        "next_step_at": starts_at,  # the director's first look at it: its start
        "minutes": s.minutes,
        "rounds": s.rounds,
        "double": s.double,
        "max_players": s.max_players,
        "every_minutes": s.every_minutes,
        "draw_after_move": s.draw_after_move,
    }


async def _mine_to_change(
    live: LivePlay, session: AsyncSession, user: Member, tournament_id: int
) -> Tournament:
    row = await stored.lock(session, tournament_id)
    if row is None:
        raise PlayError(Code.NOT_FOUND, f"no tournament {tournament_id}")
    if not user.admin and row.created_by != user.id:
        raise PlayError(Code.FORBIDDEN, "only its creator or an administrator may change it")
    return row


async def edit(
    live: LivePlay, user: Member, tournament_id: int, settings: Settings
) -> dict[str, Any]:
    """Change a tournament before it starts."""
    s = checked(settings)
    async with live.db.session() as session:
        row = await _mine_to_change(live, session, user, tournament_id)
        if row.status != stored.CREATED:
            raise PlayError(Code.CONFLICT, "a tournament is changed only before it starts")
        if s.every_minutes is not None and not user.admin:
            raise PlayError(Code.FORBIDDEN, "only administrators schedule recurring tournaments")
        before = {key: getattr(row, key) for key in ("name", "starts_at")}
        for key, value in _columns(s, live.clock.now()).items():
            setattr(row, key, value)
        if user.admin:  # an administrator's change: audited
            details = {"name": before["name"], "starts_at": before["starts_at"].isoformat()}
            audit.add_entry(
                session, user.id, "tournament.edit", "tournament", row.id, None, details
            )
        await session.commit()
    await announce(live, tournament_id)
    return await _view(live, tournament_id)


async def cancel(
    live: LivePlay, user: Member, tournament_id: int, reason: str | None = None
) -> dict[str, Any]:
    """Cancel a tournament before it ends, saying why if one likes (shown on its page); games in
    progress play on, unscored by it. An administrator's cancelling is in the audit log."""
    async with live.db.session() as session:
        row = await _mine_to_change(live, session, user, tournament_id)
        if row.status in (stored.FINISHED, stored.CANCELLED):
            raise PlayError(Code.CONFLICT, f"tournament {tournament_id} is already over")
        row.status, row.finished_at = stored.CANCELLED, live.clock.now()
        row.every_minutes = None
        row.cancel_reason = reason
        if user.admin:
            details = {"name": row.name}
            audit.add_entry(
                session, user.id, "tournament.cancel", "tournament", row.id, reason, details
            )
        await session.commit()
    await announce(live, tournament_id)
    return await _view(live, tournament_id)


async def _rating(session: AsyncSession, user_id: int, row: Tournament) -> int:
    category = category_of(row.clock_base_s, row.clock_increment_s)
    for rating in await stored_ratings.of_user(session, user_id):
        if rating.variant == row.variant and rating.category == category:
            return round(rating.rating)
    return 1500


async def join(live: LivePlay, user: Member, tournament_id: int) -> dict[str, Any]:
    """Join (or, in an arena one has withdrawn from, come back)."""
    async with live.db.session() as session:
        row = await stored.lock(session, tournament_id)
        if row is None:
            raise PlayError(Code.NOT_FOUND, f"no tournament {tournament_id}")
        if row.status in (stored.FINISHED, stored.CANCELLED):
            raise PlayError(Code.CONFLICT, f"tournament {tournament_id} is over")
        if user.banned:
            raise PlayError(Code.BANNED, "a banned account plays in no tournament")
        if row.rated:
            if user.kind != UserKind.REGISTERED:
                raise PlayError(
                    Code.RATED_NEEDS_ACCOUNT, "a rated tournament is for registered players"
                )
            await check_may_play_rated(session, user.id)
        if user.kind in (UserKind.AI, UserKind.IMPORTED):
            raise PlayError(Code.FORBIDDEN, "this account plays in no tournament")
        joined = await stored.player(session, tournament_id, user.id)
        if joined is not None:
            if joined.active:
                raise PlayError(Code.CONFLICT, "you have already joined")
            if row.kind != "arena":
                raise PlayError(
                    Code.CONFLICT, "a player who withdrew from a Swiss or round robin stays out"
                )
            joined.active = True
            joined.waiting_since = live.clock.now() if row.status == stored.STARTED else None
        else:
            if row.kind == "round_robin" and row.status != stored.CREATED:
                raise PlayError(Code.CONFLICT, "a round robin is joined before it starts")
            count = (await stored.count_players(session, [tournament_id]))[tournament_id]
            if row.max_players is not None and count >= row.max_players:
                raise PlayError(Code.CONFLICT, f"tournament {tournament_id} is full")
            now = live.clock.now()
            session.add(
                TournamentPlayer(
                    tournament_id=tournament_id,
                    user_id=user.id,
                    joined_at=now,
                    rating=await _rating(session, user.id, row),
                    active=True,
                    waiting_since=now if row.status == stored.STARTED else None,
                )
            )
            await session.flush()
            if row.kind == "swiss" and row.round > 0:
                for missed in scores.late_points(row.round, row.rounds or 0):
                    await stored.add_points(session, tournament_id, user.id, missed, 1, "late")
        _wake(row, live.clock.now())
        await session.commit()
    await announce(live, tournament_id)
    return await _view(live, tournament_id)


async def withdraw(live: LivePlay, user: Member, tournament_id: int) -> dict[str, Any]:
    """Withdraw: an arena pauses you (join again to come back); elsewhere you are out."""
    async with live.db.session() as session:
        row = await stored.lock(session, tournament_id)
        if row is None:
            raise PlayError(Code.NOT_FOUND, f"no tournament {tournament_id}")
        joined = await stored.player(session, tournament_id, user.id)
        if joined is None or not joined.active:
            raise PlayError(Code.CONFLICT, "you are not playing in it")
        if row.status in (stored.FINISHED, stored.CANCELLED):
            raise PlayError(Code.CONFLICT, f"tournament {tournament_id} is over")
        if row.status == stored.CREATED:
            await session.delete(joined)  # before the start: as if never joined
        else:
            joined.active, joined.waiting_since = False, None
        _wake(row, live.clock.now())
        await session.commit()
    await announce(live, tournament_id)
    return await _view(live, tournament_id)


def _wake(row: Tournament, now: datetime) -> None:
    """A started tournament whose players changed is stepped at once (an idle arena waits for
    nothing else)."""
    if row.status == stored.STARTED:
        row.next_step_at = now


async def get(live: LivePlay, tournament_id: int) -> dict[str, Any]:
    return await _view(live, tournament_id)


async def exists(live: LivePlay, tournament_id: int) -> bool:
    async with live.db.session() as session:
        return await stored.get(session, tournament_id) is not None


async def listing(live: LivePlay) -> dict[str, list[dict[str, Any]]]:
    """Upcoming (soonest first), running (the most players first: tournaments nobody plays in
    never hide one being played), and recently finished (latest first)."""
    async with live.db.session() as session:
        upcoming = await stored.listing(session, [stored.CREATED], 50, newest_first=False)
        running = await stored.listing(
            session, [stored.STARTED], 50, newest_first=False, most_players_first=True
        )
        finished = await stored.listing(
            session, [stored.FINISHED, stored.CANCELLED], 30, newest_first=True
        )
        rows = (*upcoming, *running, *finished)
        counts = await stored.count_players(session, [row.id for row in rows])
        creators = await stored.names(
            session, [row.created_by for row in rows if row.created_by is not None]
        )
    now = live.clock.time()
    return {
        name: [
            summary(row, now)
            | {"players": counts[row.id], "created_by_name": creators.get(row.created_by or 0)}
            for row in rows
        ]
        for name, rows in (("upcoming", upcoming), ("running", running), ("finished", finished))
    }


def summary(row: Tournament, now: float) -> dict[str, Any]:
    """A tournament's settings and state, without its standings."""
    starts = as_unix(row.starts_at)
    ends = None
    if row.kind == "arena" and row.minutes is not None:
        begun = as_unix(row.started_at) if row.started_at is not None else starts
        ends = unix_ms(begun + row.minutes * 60)
    return {
        "id": row.id,
        "kind": row.kind,
        "name": row.name,
        "variant": row.variant,
        "clock": clock_payload(row.clock_base_s, row.clock_increment_s),
        "rated": row.rated,
        "ballot": row.ballot,
        "status": row.status,
        "starts_at": unix_ms(starts),
        "starts_in": max(0, round(starts - now)) if row.status == stored.CREATED else 0,
        "ends_at": ends,
        "minutes": row.minutes,
        "rounds": row.rounds,
        "round": row.round,
        "double": row.double,
        "max_players": row.max_players,
        "every_minutes": row.every_minutes,
        "draw_after_move": row.draw_after_move,
        "created_by": row.created_by,
        "finished_at": unix_ms(as_unix(row.finished_at)) if row.finished_at else None,
        "cancel_reason": row.cancel_reason,
    }


async def _view(live: LivePlay, tournament_id: int) -> dict[str, Any]:
    """The tournament with its standings, the games in progress and, once over, its podium:
    read in a transaction of its own, locking nothing, and scored in a thread (the standings
    of a large tournament take a while)."""
    async with live.db.session() as session:
        row = await stored.get(session, tournament_id)
        if row is None:
            raise PlayError(Code.NOT_FOUND, f"no tournament {tournament_id}")
        players = await stored.players(session, row.id)
        games = await stored.games(session, row.id)
        points = await stored.points(session, row.id)
        creator = await stored.names(
            session, [row.created_by] if row.created_by is not None else []
        )
    table = await asyncio.to_thread(
        scores.standings,
        row.kind,
        players,
        games,
        points,
        rounds=row.round,
        ballot=row.ballot == "3-move",
    )
    playing = [
        {
            "id": game.id,
            "table": game.table_id,
            "black": table.names.get(game.black_id),
            "white": table.names.get(game.white_id),
            "round": game.tournament_round,
            "opening": game.opening,
        }
        for game in games
        if game.status == GameStatus.PLAYING
    ]
    view = summary(row, live.clock.time()) | {
        "created_by_name": creator.get(row.created_by or 0),
        "players": len(players),
        "standings": table.rows,
        "playing": playing,
        "podium": table.rows[:3] if row.status == stored.FINISHED else [],
    }
    if row.kind != "arena":
        view["rounds_played"] = [
            [
                {
                    "game": game.id,
                    "black": table.names.get(game.black_id),
                    "white": table.names.get(game.white_id),
                    "result": game.result,
                    "match_game": game.match_game,
                    "opening": game.opening,
                }
                for game in games
                if game.tournament_round == number
            ]
            for number in range(1, row.round + 1)
        ]
    return view
