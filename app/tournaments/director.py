"""The tournament director: every `DIRECTOR_SECONDS`, on every server process, each tournament
due is stepped in a transaction that holds its row (`app.tournaments.store.lock`, skipping one
another process holds): it starts when due, is paired when its players are free, and finishes.
All of its state is in the database, so a process that dies mid-step changes nothing (its
transaction rolls back) and the next step, on any process, carries on.

- **Arena**: every active player not in a game and connected waits; a wave pairs the waiting when
  `app.tournaments.arena.should_pair` says so, by rank and rating (`pair_wave`), never with
  the last opponent. After `minutes`, nobody is paired again; it finishes when the last game
  ends. One with fewer than two players `EMPTY` after its start is cancelled.
- **Swiss**: a round is paired when every game of the one before has ended
  (`app.tournaments.swiss.pair_round`), with a bye for the odd player out; after `rounds`
  rounds, or when no pairing is left without a rematch, it finishes.
- **Round robin**: the Berger table of the players at the start, a round at a time; a game
  against a player who withdrew is won by forfeit.
- **Ballot** (English Swiss and round robin): a pairing plays two games on one opening drawn
  from the deck, the second with colours reversed once the first has ended.

**Only what is due.** A tournament is stepped at its `next_step_at`: its start; then every
second while it has something to do (games in progress, players to pair); later while nothing
can happen (an arena where fewer than two players can be paired waits `IDLE`, or until an empty
one is cancelled; a join or a withdrawal brings it forward). So the director's cost grows with
the tournaments being played, not with those that exist.

**Pairings off the event loop.** A wave or a Swiss round is computed in a thread, outside any
transaction (`games.Pairing`): the step's transaction sets `next_step_at` a `LEASE` ahead (no
process steps it meanwhile) and commits, and the games start in a new one, if the tournament
is still as it was read.

**Failures.** A step that fails (the variant's rooms all closed, say) is tried again after
`RETRY_FIRST`, then twice as long each time up to `RETRY_MAX`, one log line each; the
`MAX_FAILURES`th failure in a row cancels the tournament with the reason, its creator and
players told (`tournament_cancelled`).
"""

from __future__ import annotations

import asyncio
import logging
import random
from collections import Counter
from collections.abc import Awaitable, Callable, Sequence
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from app.db.models import Tournament
from app.errors import ServiceError
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
from app.tournaments.games import Pairing, Started, finish, start_game
from app.tournaments.rounds import round_robin_step, swiss_step
from app.tournaments.service import announce

logger = logging.getLogger(__name__)

DIRECTOR_SECONDS = 1.0
# Players are told this long before a tournament of theirs starts (`tournament_soon`).
REMIND = timedelta(minutes=5)
# Games an arena's step starts at most: a wave of hundreds starts over a few seconds rather
# than in one burst that would hold up the moves of every game in play meanwhile.
WAVE_GAMES_PER_STEP = 50
IDLE = timedelta(seconds=10)
"""An arena where nobody can be paired is stepped again this much later (a join: at once)."""
EMPTY = timedelta(minutes=10)
"""An arena with fewer than two players this long after its start is cancelled."""
LEASE = timedelta(minutes=1)
"""While a pairing is computed outside the transaction, no process steps the tournament (unless
the one computing it is gone this long)."""
RETRY_FIRST, RETRY_MAX = timedelta(seconds=5), timedelta(minutes=5)
MAX_FAILURES = 8
"""Failed steps in a row that cancel a tournament: with the delays above, about ten minutes
after the first."""

Step = Callable[
    [LivePlay, AsyncSession, Tournament, datetime, Started], Awaitable[bool | Pairing[Any]]
]


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
    """One step of one tournament; whether anything changed. One that fails is tried again
    later, or the tournament cancelled (`_failed`)."""
    try:
        return await _step(live, tournament_id, seen)
    except asyncio.CancelledError:
        raise
    except Exception as exc:
        await _failed(live, tournament_id, exc)
        return False


async def _step(live: LivePlay, tournament_id: int, seen: dict[int, int] | None) -> bool:
    """Its pages are told (`tournament` on its channel) when it changed, or when more of its
    games have ended than this process counted in `seen` at its last step (a game ends on any
    process, by any path: a move, a resignation, a flag, an administrator)."""
    started: Started = []
    pairing: Pairing[Any] | None = None
    async with live.db.session() as session:
        row = await stored.lock(session, tournament_id, wait=False)
        now = live.clock.now()
        if row is None or row.status not in (stored.CREATED, stored.STARTED):
            return False
        if as_utc(row.next_step_at) > now:
            return False  # stepped by another process since it was read as due
        changed = False
        if row.status == stored.CREATED:
            if as_utc(row.starts_at) > now:
                row.next_step_at = row.starts_at
                await session.commit()
                return False
            changed = await _start(live, session, row, now)
        if row.status == stored.STARTED:
            steps: dict[str, Step] = {
                "arena": _arena,
                "swiss": swiss_step,
                "round_robin": round_robin_step,
            }
            outcome = await steps[row.kind](live, session, row, now, started)
            if isinstance(outcome, Pairing):
                pairing = outcome
                row.next_step_at = now + LEASE
            else:
                changed = outcome or changed
        if pairing is None and row.failures:
            row.failures = 0
        news = False
        if seen is not None:
            ended = await stored.ended_games(session, tournament_id)
            news = seen.get(tournament_id, ended) != ended
            seen[tournament_id] = ended
        await session.commit()
    if started:
        await _announce_started(live, tournament_id, started)
    elif changed or news:  # the row's lock is released by now
        await announce(live, tournament_id)
    if pairing is not None:
        return await _pair(live, tournament_id, pairing) or changed
    return changed or bool(started)


async def _pair(live: LivePlay, tournament_id: int, pairing: Pairing[Any]) -> bool:
    """Compute a step's pairing in a thread, then start its games (`Pairing`)."""
    result = await asyncio.to_thread(pairing.compute)
    started: Started = []
    async with live.db.session() as session:
        row = await stored.lock(session, tournament_id)
        if row is None or row.status != stored.STARTED:
            return False
        now = live.clock.now()
        changed = await pairing.start(live, session, row, result, now, started)
        row.next_step_at, row.failures = now, 0
        await session.commit()
    if started:
        await _announce_started(live, tournament_id, started)
    elif changed:
        await announce(live, tournament_id)
    return changed or bool(started)


async def _announce_started(live: LivePlay, tournament_id: int, started: Started) -> None:
    for table, lg, events in started:
        await seating.started(live, table, lg, events, tournament_id)
    await announce(live, tournament_id)


async def _failed(live: LivePlay, tournament_id: int, exc: Exception) -> None:
    """A step failed: try it again after a growing delay, one log line each; the
    `MAX_FAILURES`th in a row cancels the tournament with the reason."""
    known = isinstance(exc, ServiceError)
    reason = exc.message if isinstance(exc, ServiceError) else "an error on the server"
    async with live.db.session() as session:
        row = await stored.lock(session, tournament_id)
        if row is None or row.status not in (stored.CREATED, stored.STARTED):
            return
        now = live.clock.now()
        row.failures += 1
        if row.failures >= MAX_FAILURES:
            logger.warning(
                "tournament %d's step failed %d times in a row (%s): it is cancelled",
                tournament_id,
                row.failures,
                reason,
            )
            await _cancel(live, session, row, now, f"it could not go on: {reason}")
        else:
            delay = min(RETRY_FIRST * 2 ** (row.failures - 1), RETRY_MAX)
            row.next_step_at = now + delay
            logger.warning(
                "tournament %d's step failed (%s): tried again in %d s (%d of %d)",
                tournament_id,
                reason,
                delay.total_seconds(),
                row.failures,
                MAX_FAILURES,
                exc_info=not known and row.failures == 1,
            )
        await session.commit()
    if row.status == stored.CANCELLED:
        await announce(live, tournament_id)


async def _cancel(
    live: LivePlay, session: AsyncSession, row: Tournament, now: datetime, reason: str
) -> None:
    """Cancel it in the caller's transaction, saying why on its page, and tell its creator and
    players (`tournament_cancelled`). A recurring one not yet started schedules the next."""
    if row.status == stored.CREATED and row.every_minutes is not None:
        await _schedule_next(session, row, now)
    row.status, row.finished_at, row.cancel_reason = stored.CANCELLED, now, reason[:200]
    told = {p.user_id for p in await stored.players(session, row.id) if p.active}
    if row.created_by is not None:
        told.add(row.created_by)
    data = {"tournament": row.id, "name": row.name, "reason": row.cancel_reason}
    for user_id in sorted(told):
        await notifications.add(live, session, user_id, "tournament_cancelled", data)
    logger.info("tournament %d cancelled: %s", row.id, reason)


async def _start(live: LivePlay, session: AsyncSession, row: Tournament, now: datetime) -> bool:
    players = [p for p in await stored.players(session, row.id) if p.active]
    if row.kind != "arena" and len(players) < 2:
        await _cancel(live, session, row, now, "fewer than two players at the start")
        return True
    row.status, row.started_at = stored.STARTED, now
    if row.kind == "arena":
        await stored.set_waiting(session, row.id, [p.user_id for p in players], now)
    elif row.kind == "round_robin":
        row.rounds = len(round_robin.berger(len(players), row.double))
    if row.every_minutes is not None:
        await _schedule_next(session, row, now)
    return True


async def _schedule_next(session: AsyncSession, row: Tournament, now: datetime) -> None:
    """The next of a recurring tournament, `every_minutes` after this one's start."""
    assert row.every_minutes is not None
    starts_at = as_utc(row.starts_at) + timedelta(minutes=row.every_minutes)
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
        starts_at=starts_at,
        next_step_at=starts_at,
        status=stored.CREATED,
        created_at=now,
    )


# --- arena ------------------------------------------------------------------------------------


async def _arena(
    live: LivePlay, session: AsyncSession, row: Tournament, now: datetime, started: Started
) -> bool | Pairing[list[tuple[int, int]]]:
    assert row.started_at is not None and row.minutes is not None
    ends = as_utc(row.started_at) + timedelta(minutes=row.minutes)
    playing = await stored.playing(session, row.id)
    if now >= ends:
        return finish(row, now) if not playing else False
    players = await stored.players(session, row.id)
    empty_until = as_utc(row.started_at) + EMPTY
    if len(players) < 2 and now >= empty_until:
        minutes = round(EMPTY.total_seconds() / 60)
        await _cancel(
            live, session, row, now, f"fewer than two players {minutes} minutes after the start"
        )
        return True
    busy = {g.black_id for g in playing} | {g.white_id for g in playing}
    free = [p for p in players if p.active and p.user_id not in busy]
    # A player with no connection to any live process (the site left) is not paired, as if
    # paused, until they are back.
    alive = await heartbeat.alive(session, now, live.settings.heartbeat_seconds)
    here = await stored_presence.online(session, [p.user_id for p in free], alive | {live.instance})
    free = [p for p in free if p.user_id in here]
    newly = [p.user_id for p in free if p.waiting_since is None]
    await stored.set_waiting(session, row.id, newly, now)
    if not playing and len(free) < 2:
        # Nothing to do before a join (which steps it at once), someone's return or the end.
        row.next_step_at = min(ends, empty_until if len(players) < 2 else now + IDLE)
        return bool(newly)
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

    def wave() -> list[tuple[int, int]]:
        return _wave(players, games, free, waiting, active)

    async def start(
        live: LivePlay,
        session: AsyncSession,
        row: Tournament,
        pairs: list[tuple[int, int]],
        now: datetime,
        started: Started,
    ) -> bool:
        """The wave's pairs whose two players still wait (not withdrawn nor paired since)."""
        if now >= ends:
            return False
        ready = {
            p.user_id: p
            for p in await stored.players(session, row.id)
            if p.active and p.waiting_since is not None
        }
        for game in await stored.playing(session, row.id):
            ready.pop(game.black_id, None)
            ready.pop(game.white_id, None)
        made = 0
        for black_id, white_id in pairs:
            if made == WAVE_GAMES_PER_STEP:
                break
            if black_id not in ready or white_id not in ready:
                continue
            black, white = ready.pop(black_id), ready.pop(white_id)
            await start_game(
                live,
                session,
                row,
                PlayerRef(black.user_id, black.name),
                PlayerRef(white.user_id, white.name),
                started,
            )
            await stored.paired(session, row.id, black_id, white_id)
            made += 1
        return made > 0

    return Pairing(wave, start)


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
