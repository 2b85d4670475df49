"""The rounds of a Swiss and of a round robin, stepped by the director
(`app.tournaments.director`) in its transaction: the next round paired once every game
of the last has ended (a Swiss's pairing computed outside the transaction: `Pairing`), a
ballot match's second game once its first has, and the end."""

from __future__ import annotations

import logging
import random
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from app.db.models import Tournament
from app.live.liveplay import LivePlay
from app.play.players import PlayerRef
from app.status import GameStatus
from app.tournaments import ballot, round_robin, scores, swiss
from app.tournaments import store as stored
from app.tournaments.games import Pairing, Started, finish, start_game

logger = logging.getLogger(__name__)


async def _second_games(
    live: LivePlay,
    session: AsyncSession,
    row: Tournament,
    games: Sequence[Any],
    started: Started,
) -> bool:
    """In a ballot match, the second game of each pairing whose first has ended: colours
    reversed, the same opening. Whether one started."""
    if row.ballot != "3-move":
        return False
    current = [g for g in games if g.tournament_round == row.round]
    seconds = {(g.white_id, g.black_id) for g in current if g.match_game == 2}
    made = False
    names = {p.user_id: p.name for p in await stored.players(session, row.id)}
    for first in current:
        if first.match_game != 1 or first.status == GameStatus.PLAYING:
            continue
        if (first.black_id, first.white_id) in seconds:
            continue
        moves = tuple(first.opening.split()) if first.opening else ()
        await start_game(
            live,
            session,
            row,
            PlayerRef(first.white_id, names[first.white_id]),
            PlayerRef(first.black_id, names[first.black_id]),
            started,
            round_no=row.round,
            opening=ballot.opening(moves),
            match_game=2,
        )
        made = True
    return made


async def _round_games(
    live: LivePlay, session: AsyncSession, row: Tournament, started: Started
) -> list[Any] | None:
    """The tournament's games once its round is over; None while the round plays on (or a
    ballot match's second game has just been added to `started`). While it plays on, a step
    reads only whether a game is in progress (and a ballot match's round's games)."""
    if row.ballot == "3-move":
        current = await stored.games(session, row.id, row.round)
        if await _second_games(live, session, row, current, started):
            return None
    if await stored.any_playing(session, row.id):
        return None
    return await stored.games(session, row.id)


async def _round_game(
    live: LivePlay,
    session: AsyncSession,
    row: Tournament,
    black: PlayerRef,
    white: PlayerRef,
    started: Started,
    used: set[str],
) -> None:
    """A pairing's (first) game of the round in progress: in a ballot match, on an opening
    drawn from those the tournament has not used yet (noted in `used`)."""
    opening = None
    if row.ballot == "3-move":
        opening = ballot.draw(random.Random(), used)
        used.add(opening.name)
    await start_game(
        live,
        session,
        row,
        black,
        white,
        started,
        round_no=row.round,
        opening=opening,
        match_game=1 if opening is not None else None,
    )


def _used_openings(games: Sequence[Any]) -> set[str]:
    return {g.opening for g in games if g.opening}


async def swiss_step(
    live: LivePlay, session: AsyncSession, row: Tournament, now: datetime, started: Started
) -> bool | Pairing[swiss.SwissRound | None]:
    """The round's end, the Swiss's end, or the next round's pairing to compute (None: no
    pairing is left without a rematch)."""
    games = await _round_games(live, session, row, started)
    if games is None:
        return False
    if row.round >= (row.rounds or 0):
        return finish(row, now)
    players = await stored.players(session, row.id)
    active = [p for p in players if p.active]
    if len(active) < 2:
        return finish(row, now)
    points = await stored.points(session, row.id)
    results = scores.round_results(players, games, points, row.round)
    colours: dict[int, list[swiss.Colour | None]] = {p.user_id: [None] * row.round for p in players}
    for g in games:
        if g.tournament_round and g.match_game in (None, 1):
            colours[g.black_id][g.tournament_round - 1] = "black"
            colours[g.white_id][g.tournament_round - 1] = "white"
    byes = {user for user, _, _, reason in points if reason == "bye"}
    entrants = [
        swiss.SwissPlayer(
            id=p.user_id,
            rating=p.rating,
            points=sum(half for _, half in results[p.user_id]),
            opponents=frozenset(o for o, _ in results[p.user_id] if o is not None),
            colours=tuple(colours[p.user_id]),
            had_bye=p.user_id in byes,
        )
        for p in active
    ]
    read = (row.round, frozenset(p.user_id for p in active))
    names = {p.user_id: p.name for p in players}
    used = _used_openings(games)

    def pair() -> swiss.SwissRound | None:
        try:
            return swiss.pair_round(entrants)
        except swiss.PairingImpossible:
            return None

    async def start(
        live: LivePlay,
        session: AsyncSession,
        row: Tournament,
        pairing: swiss.SwissRound | None,
        now: datetime,
        started: Started,
    ) -> bool:
        players = await stored.players(session, row.id)
        if (row.round, frozenset(p.user_id for p in players if p.active)) != read:
            return False  # a join or a withdrawal meanwhile
        if pairing is None:
            logger.info("tournament %d: no pairing left without a rematch; it ends", row.id)
            return finish(row, now)
        row.round += 1
        for black, white in pairing.pairs:
            black_ref, white_ref = PlayerRef(black, names[black]), PlayerRef(white, names[white])
            await _round_game(live, session, row, black_ref, white_ref, started, used)
        if pairing.bye is not None:
            worth = scores.round_worth(row.ballot == "3-move")
            await stored.add_points(session, row.id, pairing.bye, row.round, worth, "bye")
        return True

    return Pairing(pair, start)


async def round_robin_step(
    live: LivePlay, session: AsyncSession, row: Tournament, now: datetime, started: Started
) -> bool:
    games = await _round_games(live, session, row, started)
    if games is None:
        return False
    if row.round >= (row.rounds or 0):
        return finish(row, now)
    players = await stored.players(session, row.id)  # in joining order: the table's numbers
    schedule = round_robin.berger(len(players), row.double)
    row.round += 1
    used = _used_openings(games)
    worth = scores.round_worth(row.ballot == "3-move")
    for black_at, white_at in schedule[row.round - 1]:
        black, white = players[black_at], players[white_at]
        if not black.active or not white.active:
            for p in (black, white):
                if p.active:  # the other withdrew: a win by forfeit
                    await stored.add_points(session, row.id, p.user_id, row.round, worth, "forfeit")
            continue
        black_ref, white_ref = (
            PlayerRef(black.user_id, black.name),
            PlayerRef(white.user_id, white.name),
        )
        await _round_game(live, session, row, black_ref, white_ref, started, used)
    return True
