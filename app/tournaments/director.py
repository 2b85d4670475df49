"""The tournament director: every `DIRECTOR_SECONDS`, on every server process, each tournament
due is stepped in a transaction that holds its row (`app.tournaments.store.lock`, skipping one
another process holds): it starts when due, is paired when its players are free, and finishes.
All of its state is in the database, so a process that dies mid-step changes nothing (its
transaction rolls back) and the next step, on any process, carries on.

- **Arena**: every active player not in a game and connected waits; a wave pairs the waiting when
  `app.tournaments.arena.should_pair` says so, by rank and rating (`pair_wave`), never with
  the last opponent. After `minutes`, nobody is paired again; it finishes when the last game
  ends.
- **Swiss**: a round is paired when every game of the one before has ended
  (`app.tournaments.swiss.pair_round`), with a bye for the odd player out; after `rounds`
  rounds, or when no pairing is left without a rematch, it finishes.
- **Round robin**: the Berger table of the players at the start, a round at a time; a game
  against a player who withdrew is won by forfeit.
- **Ballot** (English Swiss and round robin): a pairing plays two games on one opening drawn
  from the deck, the second with colours reversed once the first has ended.
"""

from __future__ import annotations

import asyncio
import logging
import random
from collections import Counter
from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from app.db.models import Tournament
from app.live import heartbeat
from app.live.events import unix_ms
from app.live.liveplay import LivePlay
from app.notify import inbox as notifications
from app.play.players import PlayerRef
from app.tables import presence_store as stored_presence
from app.tables import seating
from app.timeutil import as_unix, as_utc
from app.tournaments import arena, round_robin, scores
from app.tournaments import store as stored
from app.tournaments.games import Started, finish, start_game
from app.tournaments.rounds import round_robin_step, swiss_step
from app.tournaments.service import announce

logger = logging.getLogger(__name__)

DIRECTOR_SECONDS = 1.0
# Players are told this long before a tournament of theirs starts (`tournament_soon`).
REMIND = timedelta(minutes=5)
# Games an arena's step starts at most: a wave of hundreds starts over a few seconds rather
# than in one burst that would hold up the moves of every game in play meanwhile.
WAVE_GAMES_PER_STEP = 50


async def run(live: LivePlay) -> None:
    """Step the tournaments due every `DIRECTOR_SECONDS`, whatever fails (tried again)."""
    seen: dict[int, int] = {}
    while True:
        await live.clock.sleep(DIRECTOR_SECONDS)
        try:
            await step_all(live, seen)
        except asyncio.CancelledError:
            raise
        except Exception:
            logger.warning("the tournament director's step failed; retrying", exc_info=True)


async def remind(live: LivePlay) -> int:
    """Tell the players of each tournament starting within `REMIND_SECONDS` (once; in the
    transaction that marks it reminded); how many tournaments."""
    async with live.db.session() as session:
        soon = await stored.to_remind(session, live.clock.now() + REMIND)
    for tournament_id in soon:
        async with live.db.session() as session:
            row = await stored.lock(session, tournament_id)
            if row is None or row.reminded or row.status != stored.CREATED:
                continue
            row.reminded = True
            data = {
                "tournament": row.id,
                "name": row.name,
                "starts_at": unix_ms(as_unix(row.starts_at)),
            }
            for player in await stored.players(session, row.id):
                if player.active:
                    await notifications.add(live, session, player.user_id, "tournament_soon", data)
            await session.commit()
    return len(soon)


async def step_all(live: LivePlay, seen: dict[int, int] | None = None) -> int:
    """Step every tournament due; how many changed. `seen`: each tournament's ended games as
    this process last counted them (see `step`)."""
    await remind(live)
    async with live.db.session() as session:
        due = await stored.due(session, live.clock.now())
    changed = 0
    seen = {} if seen is None else seen
    for tournament_id in list(seen):
        if tournament_id not in due:
            del seen[tournament_id]
    for tournament_id in due:
        try:
            changed += await step(live, tournament_id, seen)
        except Exception:
            logger.warning("tournament %d's step failed", tournament_id, exc_info=True)
    return changed


async def step(live: LivePlay, tournament_id: int, seen: dict[int, int] | None = None) -> bool:
    """One step of one tournament; whether anything changed. Its pages are told
    (`tournament` on its channel) when it changed, or when more of its games have ended than
    this process counted in `seen` at its last step (a game ends on any process, by any path:
    a move, a resignation, a flag, an administrator)."""
    started: Started = []
    async with live.db.session() as session:
        row = await stored.lock(session, tournament_id, wait=False)
        if row is None or row.status not in (stored.CREATED, stored.STARTED):
            return False
        now = live.clock.now()
        changed = False
        if row.status == stored.CREATED:
            if as_utc(row.starts_at) > now:
                return False
            changed = await _start(session, row, now)
        if row.status == stored.STARTED:
            step_kind = {"arena": _arena, "swiss": swiss_step, "round_robin": round_robin_step}[
                row.kind
            ]
            changed = await step_kind(live, session, row, now, started) or changed
        news = False
        if seen is not None:
            ended = await stored.ended_games(session, tournament_id)
            news = seen.get(tournament_id, ended) != ended
            seen[tournament_id] = ended
        if changed or started:
            await session.commit()
    if not changed and not started:
        if news:  # the row's lock is released by now
            await announce(live, tournament_id)
        return False
    for table, lg, events in started:
        await seating.started(live, table, lg, events, tournament_id)
    await announce(live, tournament_id)
    return True


async def _start(session: AsyncSession, row: Tournament, now: datetime) -> bool:
    players = [p for p in await stored.players(session, row.id) if p.active]
    if row.kind != "arena" and len(players) < 2:
        row.status, row.finished_at = stored.CANCELLED, now
        logger.info("tournament %d cancelled: %d player(s) at the start", row.id, len(players))
        return True
    row.status, row.started_at = stored.STARTED, now
    if row.kind == "arena":
        await stored.set_waiting(session, row.id, [p.user_id for p in players], now)
    elif row.kind == "round_robin":
        row.rounds = len(round_robin.berger(len(players), row.double))
    if row.every_minutes is not None:  # the next of a recurring one
        await stored.create(
            session,
            **{
                key: getattr(row, key)
                for key in (
                    "kind",
                    "name",
                    "variant",
                    "clock_base_s",
                    "clock_increment_s",
                    "rated",
                    "ballot",
                    "minutes",
                    "rounds",
                    "double",
                    "max_players",
                    "every_minutes",
                    "draw_after_move",
                    "created_by",
                )
            },
            starts_at=as_utc(row.starts_at) + timedelta(minutes=row.every_minutes),
            status=stored.CREATED,
            created_at=now,
        )
    return True


# --- arena ------------------------------------------------------------------------------------


async def _arena(
    live: LivePlay, session: AsyncSession, row: Tournament, now: datetime, started: Started
) -> bool:
    assert row.started_at is not None and row.minutes is not None
    playing = await stored.playing(session, row.id)
    if now >= as_utc(row.started_at) + timedelta(minutes=row.minutes):
        return finish(row, now) if not playing else False
    busy = {g.black_id for g in playing} | {g.white_id for g in playing}
    players = await stored.players(session, row.id)
    free = [p for p in players if p.active and p.user_id not in busy]
    # A player with no connection to any live process (the site left) is not paired, as if
    # paused, until they are back.
    alive = await heartbeat.alive(session, now, live.settings.heartbeat_seconds)
    here = await stored_presence.online(session, [p.user_id for p in free], alive | {live.instance})
    free = [p for p in free if p.user_id in here]
    newly = [p.user_id for p in free if p.waiting_since is None]
    await stored.set_waiting(session, row.id, newly, now)
    waiting = {
        p.user_id: as_unix(p.waiting_since) if p.waiting_since is not None else as_unix(now)
        for p in free
    }
    active = sum(1 for p in players if p.active)
    if not arena.should_pair(
        waiting,
        as_unix(now),
        row.clock_base_s,
        row.clock_increment_s,
        first_wave=not await stored.any_game(session, row.id),
        active_players=active if active < 30 else None,
    ):
        return bool(newly)
    games = await stored.games(session, row.id)
    # The standings and the matching are pure and take a large wave a fifth of a second:
    # in a thread, the event loop goes on serving the moves meanwhile.
    pairs = await asyncio.to_thread(_wave, players, games, free, waiting, active)
    by_id = {p.user_id: p for p in free}
    for black_id, white_id in pairs[:WAVE_GAMES_PER_STEP]:
        black, white = by_id[black_id], by_id[white_id]
        await start_game(
            live,
            session,
            row,
            PlayerRef(black.user_id, black.name),
            PlayerRef(white.user_id, white.name),
            started,
        )
        await stored.paired(session, row.id, black_id, white_id)
    return True


def _wave(
    players: Sequence[Any],
    games: Sequence[Any],
    free: Sequence[Any],
    waiting: dict[int, float],
    active: int,
) -> list[tuple[int, int]]:
    """A wave's pairs, (Black, White): by rank and rating (`arena.pair_wave`), Black to
    whoever has had it less often (lila balances colours the same way)."""
    table = scores.standings("arena", players, games, [])
    rank = {r["name"]: r["rank"] for r in table.rows}
    candidates = [
        arena.ArenaPlayer(
            id=p.user_id,
            rating=p.rating,
            rank=rank.get(p.name, len(players)),
            last_opponent=p.last_opponent_id,
            waiting_since=waiting[p.user_id],
        )
        for p in free
    ]
    blacks = Counter(g.black_id for g in games)
    whites = Counter(g.white_id for g in games)
    pairs = []
    for one, two in arena.pair_wave(candidates, only_two_active=active == 2):
        lean = (blacks[one] - whites[one]) - (blacks[two] - whites[two])
        if lean > 0 or (lean == 0 and random.random() < 0.5):
            one, two = two, one
        pairs.append((one, two))
    return pairs
