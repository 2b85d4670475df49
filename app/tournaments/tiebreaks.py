"""Swiss and round-robin standings: points, then Sonneborn–Berger, then Buchholz.

The results table holds, for each player, one entry per round played so far: (opponent id, or
None for a round without a game, and the points scored in half points). A round without a game
is a bye, an absence (a late joiner's missed round) or a withdrawal; its points are whatever
the service awarded.

Unplayed rounds follow FIDE's 2009 rule for tie-breaks (the "virtual opponent"):

- in the player's own tie-breaks, an unplayed round counts as a game against a virtual opponent
  who had the player's score before that round, took the opposite result in it, and drew every
  later round;
- in the tie-breaks of the player's opponents, the player's unplayed rounds count as draws, so
  nobody gains or loses from an opponent's bye or absence.

``win`` is what a round is worth to its winner in half points: 2 for one game, 4 for a
two-game ballot match (a draw is half of it). Tie-breaks are in half points, like the points;
Sonneborn–Berger may end in a half or a quarter of a half point.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

RoundResult = tuple[int | None, int]
"""(opponent id or None, half points scored) for one round."""
Results = Mapping[int, Sequence[RoundResult]]


@dataclass(frozen=True)
class StandingRow:
    rank: int
    """Shared by players equal on points and both tie-breaks."""
    player: int
    points: int
    sonneborn_berger: float
    buchholz: float


def _rounds(results: Results) -> int:
    return max((len(rounds) for rounds in results.values()), default=0)


def _adjusted(results: Results, player: int, win: int) -> float:
    """A player's score as their opponents' tie-breaks see it: unplayed rounds drawn."""
    return sum(points if opponent is not None else win / 2 for opponent, points in results[player])


def _opponent_scores(results: Results, player: int, win: int) -> list[tuple[float, int]]:
    """(the opponent's score as the tie-breaks see it, the player's points) per round."""
    total_rounds = _rounds(results)
    scored_before = 0
    found: list[tuple[float, int]] = []
    for number, (opponent, points) in enumerate(results[player]):
        if opponent is not None:
            found.append((_adjusted(results, opponent, win), points))
        else:
            virtual = scored_before + (win - points) + win / 2 * (total_rounds - number - 1)
            found.append((virtual, points))
        scored_before += points
    return found


def buchholz(results: Results, player: int, *, win: int = 2) -> float:
    """The sum of the opponents' scores (unplayed rounds as in the module's docstring)."""
    return float(sum(score for score, _ in _opponent_scores(results, player, win)))


def sonneborn_berger(results: Results, player: int, *, win: int = 2) -> float:
    """The opponents' scores weighted by the result against each: a beaten opponent's whole
    score, half of a drawn one's, none of a loss (in proportion for a two-game match)."""
    return sum(score * points / win for score, points in _opponent_scores(results, player, win))


def standings(results: Results, *, win: int = 2) -> list[StandingRow]:
    """Every player of ``results``, best first: points, Sonneborn–Berger, Buchholz, all
    highest first; players equal on all three share a rank (and are listed by id)."""
    rows = [
        StandingRow(
            0,
            player,
            sum(points for _, points in rounds),
            sonneborn_berger(results, player, win=win),
            buchholz(results, player, win=win),
        )
        for player, rounds in results.items()
    ]
    rows.sort(key=lambda r: (-r.points, -r.sonneborn_berger, -r.buchholz, r.player))
    ranked: list[StandingRow] = []
    for index, row in enumerate(rows):
        previous = ranked[-1] if ranked else None
        tied = previous is not None and _key(previous) == _key(row)
        rank = previous.rank if tied and previous is not None else index + 1
        ranked.append(StandingRow(rank, row.player, row.points, row.sonneborn_berger, row.buchholz))
    return ranked


def _key(row: StandingRow) -> tuple[int, float, float]:
    return (row.points, row.sonneborn_berger, row.buchholz)
