"""A tournament's standings from its stored rows: its players, its games and the points won
without a game, scored by the pure core (`app.tournaments`): arena sheets, or Swiss and
round-robin points with Sonneborn–Berger and Buchholz.

Points are in half points throughout: a game won is 2, drawn 1; a ballot match (two games on
one opening, colours reversed) is the sum of its two, so a round is worth 4 there. A bye is
worth a round won; a late joiner's missed round ½ (a game drawn's half point), as the Swiss
allows (`app.tournaments.swiss.late_join_points`)."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from app.rules import Result
from app.tournaments import arena, tiebreaks
from app.tournaments.swiss import late_join_points

WIN, DRAW = 2, 1


@dataclass
class Standings:
    rows: list[dict[str, Any]]
    names: dict[int, str] = field(default_factory=dict)


def late_points(rounds_started: int, total_rounds: int) -> list[int]:
    """The rounds for which a Swiss player joining now gets a half point each."""
    half_points = late_join_points(rounds_started, total_rounds)
    return list(range(1, min(half_points, rounds_started) + 1))


def half_points(result: str, black: bool) -> int | None:
    """What a finished game scored for one side (None: no result, an aborted game)."""
    if result == Result.DRAW:
        return DRAW
    if result == Result.BLACK_WINS:
        return WIN if black else 0
    if result == Result.WHITE_WINS:
        return 0 if black else WIN
    return None


def round_worth(ballot: bool) -> int:
    return 2 * WIN if ballot else WIN


def standings(
    kind: str,
    players: Sequence[Any],
    games: Sequence[Any],
    points: Sequence[Any],
    *,
    rounds: int = 0,
    ballot: bool = False,
) -> Standings:
    names = {p.user_id: p.name for p in players}
    if kind == "arena":
        return Standings(_arena(players, games), names)
    return Standings(_rounds(players, games, points, rounds, ballot), names)


def _arena(players: Sequence[Any], games: Sequence[Any]) -> list[dict[str, Any]]:
    rating = {p.user_id: p.rating for p in players}
    played: dict[int, list[arena.ArenaGame]] = defaultdict(list)
    opponents: dict[int, list[int]] = defaultdict(list)
    score: dict[int, float] = defaultdict(float)
    finished = sorted(
        (g for g in games if g.finished_at is not None and g.status == "finished"),
        key=lambda g: (g.finished_at, g.id),
    )
    for game in finished:
        for user, black, berserk, opponent in (
            (game.black_id, True, game.black_berserk, game.white_id),
            (game.white_id, False, game.white_berserk, game.black_id),
        ):
            got = half_points(game.result, black)
            if got is None or user not in rating:
                continue
            outcome: arena.ArenaOutcome = "win" if got == WIN else "draw" if got else "loss"
            played[user].append(arena.ArenaGame(outcome, game.ply_count, berserk))
            opponents[user].append(rating.get(opponent, 1500))
            score[user] += got / 2
    rows = []
    for p in players:
        sheet = arena.sheet(played[p.user_id])
        perf = arena.performance(opponents[p.user_id], score[p.user_id])
        rows.append(
            {
                "name": p.name,
                "score": sheet.total,
                "games": len(played[p.user_id]),
                "sheet": list(sheet.points),
                "fire": sheet.on_fire,
                "performance": perf,
                "rating": p.rating,
                "active": p.active,
                "_key": arena.rank_key(sheet.total, perf, p.rating),
            }
        )
    rows.sort(key=lambda row: (row["_key"], row["name"]))
    for number, row in enumerate(rows, 1):
        del row["_key"]
        row["rank"] = number
    return rows


def round_results(
    players: Sequence[Any],
    games: Sequence[Any],
    points: Sequence[Any],
    rounds: int,
) -> dict[int, list[tiebreaks.RoundResult]]:
    """Per player, per round played so far: (opponent or None, half points). A ballot match's
    two games add up; a round without a game scores what `points` gave (a bye, a late join),
    or nothing."""
    ids = {p.user_id for p in players}
    table: dict[int, list[list[Any]]] = {
        user: [[None, 0, False] for _ in range(rounds)] for user in ids
    }
    for game in games:
        number = game.tournament_round
        if number is None or not 1 <= number <= rounds:
            continue
        for user, black, opponent in (
            (game.black_id, True, game.white_id),
            (game.white_id, False, game.black_id),
        ):
            if user not in table:
                continue
            entry = table[user][number - 1]
            entry[0], entry[2] = opponent, True
            got = half_points(game.result, black)
            if got is not None:
                entry[1] += got
    for user, number, half, _reason in points:
        if user in table and 1 <= number <= rounds and not table[user][number - 1][2]:
            table[user][number - 1][1] += half
    return {user: [(entry[0], entry[1]) for entry in entries] for user, entries in table.items()}


def _rounds(
    players: Sequence[Any],
    games: Sequence[Any],
    points: Sequence[Any],
    rounds: int,
    ballot: bool,
) -> list[dict[str, Any]]:
    results = round_results(players, games, points, rounds)
    by_id = {p.user_id: p for p in players}
    played: dict[int, int] = defaultdict(int)
    for game in games:
        if game.status == "finished":
            played[game.black_id] += 1
            played[game.white_id] += 1
    rows = []
    for row in tiebreaks.standings(results, win=round_worth(ballot)):
        p = by_id[row.player]
        rows.append(
            {
                "rank": row.rank,
                "name": p.name,
                "score": row.points / 2,
                "games": played[row.player],
                "sonneborn_berger": row.sonneborn_berger / 2,
                "buchholz": row.buchholz / 2,
                "rating": p.rating,
                "active": p.active,
            }
        )
    return rows
