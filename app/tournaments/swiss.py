"""Swiss pairing: one round at a time, equal scores meet, nobody meets twice, colours balance.

The system is a weighted-matching approximation of FIDE's Dutch system (the approach of several
open-source pairing programs, lichess's bbpPairings among them for its own Dutch engine, which is
a C++ program we do not ship). Every round is one maximum-weight matching (networkx's blossom
algorithm) over the players who may meet, with each pair's weight built from criteria in strict
order, each one mattering only among pairings equal in all the criteria before it:

1. as many pairs as possible (networkx's ``maxcardinality``); pairs that met before are not in
   the graph at all, so if not everyone can be paired ``PairingImpossible`` is raised and the
   service ends the tournament after the rounds already played;
2. with an odd number of players, one gets the bye (a dummy player stands in the graph): someone
   who has not had one, while there is such a player;
3. nobody is given the same colour a third time running, nor a colour difference over 2 (two
   players who both need the same colour are not paired where it can be helped);
4. the bye goes to the lowest score possible;
5. score differences between opponents are small: the sum of their squares is least, so one
   float of two points counts as four floats of one (FIDE: fewest floaters, then the smallest
   differences);
6. colour preferences are met: a pair whose two players want the same colour costs the weaker
   preference (strong: a colour difference of 1; mild: alternation);
7. within a score group, the top half meets the bottom half (1 v 5, 2 v 6… in a group of 8);
   a floater is the lowest of its group and meets the highest of the group below; the bye goes
   to the lowest-ranked player of its score.

Ranking within a score: rating, then id. Colours within a pair follow FIDE's rules: both
preferences if they differ, else the stronger one, else the reverse of the last round in which
the two had different colours, else the higher-ranked player's; a first round gives the top seed
``top_seed_colour`` on board 1 and alternates by board.

Where this departs from FIDE's Dutch system (C.04.3):

- criteria are weighed globally, not bracket by bracket from the top: a lower bracket can change
  a higher one's pairing when that lowers the total cost (Dutch pairs the top bracket first and
  only backtracks when a lower one cannot be paired);
- there are no float histories: Dutch avoids floating the same player in consecutive rounds
  (and two rounds apart); we do not know who floated before;
- the S1/S2 order is a cost, not Dutch's exact sequence of transpositions and exchanges, so
  among pairings of equal quality the one chosen may differ from the Dutch one;
- the topscorer exceptions of the last round (colour rules relaxed for players above 50 %) do not
  exist: the colour rules are a strong preference for everyone in every round;
- a late joiner's missed rounds count as absences (``None`` in ``colours``), not as byes.

For speed, each player is first given only a few candidates: the cheapest of each colour wish
in its own score group and the next ones, fewer further away; when those cannot pair everybody
(or only by breaking a rule) the candidates widen, and at last every pair that has not met is
allowed. On simulated 250-player tournaments the result has always been the optimum over every
pair, in about half a second of CPU instead of two or three.

The points of a round are whatever the service records (half points: 2 for a win, 4 for a won
two-game ballot match): pairing only compares them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import networkx as nx

from app.tournaments.tiebreaks import (
    Results,
    RoundResult,
    StandingRow,
    buchholz,
    sonneborn_berger,
    standings,
)

__all__ = [
    "PairingImpossible",
    "Results",
    "RoundResult",
    "StandingRow",
    "SwissPlayer",
    "SwissRound",
    "buchholz",
    "colour_wish",
    "late_join_points",
    "pair_round",
    "sonneborn_berger",
    "standings",
]

Colour = Literal["black", "white"]

NO_PREFERENCE, MILD, STRONG, ABSOLUTE = 0, 1, 2, 3
CANDIDATES = (6, 24)
"""Candidate opponents per player, score group and colour wish, tried in turn before every
pair; ``FAR`` times fewer beyond the next score groups."""
FAR = 3
SMALL = 5000
"""Up to this many allowed pairs (about 100 players), every pair is a candidate at once."""
_BYE = -1
"""The dummy player's vertex: whoever it is matched with gets the bye."""


class PairingImpossible(Exception):
    """No round can be paired without a rematch: the tournament ends early."""


@dataclass(frozen=True)
class SwissPlayer:
    """A player as the pairing sees them at the start of a round."""

    id: int
    rating: int
    points: int
    """In half points."""
    opponents: frozenset[int]
    colours: tuple[Colour | None, ...]
    """Per round so far: the colour played, or None for a bye or an absence."""
    had_bye: bool


@dataclass(frozen=True)
class SwissRound:
    pairs: tuple[tuple[int, int], ...]
    """(black id, white id), in board order."""
    bye: int | None


@dataclass(frozen=True)
class _Wish:
    colour: Colour | None
    strength: int
    difference: int
    """Blacks minus whites."""


def colour_wish(colours: Sequence[Colour | None]) -> tuple[Colour | None, int]:
    """A player's colour preference and its strength, as FIDE defines them from the colours of
    the games played (byes and absences skipped): absolute when the difference of blacks and
    whites is 2 or more, or the last two games had the same colour; strong with a difference of
    1; mild (the other colour than last time) with none; no preference before any game."""
    wish = _wish(colours)
    return wish.colour, wish.strength


def _wish(colours: Sequence[Colour | None]) -> _Wish:
    played = [c for c in colours if c is not None]
    if not played:
        return _Wish(None, NO_PREFERENCE, 0)
    difference = played.count("black") - played.count("white")
    if difference:
        wanted: Colour = "white" if difference > 0 else "black"
    else:
        wanted = _other(played[-1])
    if abs(difference) >= 2:
        return _Wish(wanted, ABSOLUTE, difference)
    if len(played) >= 2 and played[-1] == played[-2]:
        return _Wish(_other(played[-1]), ABSOLUTE, difference)
    return _Wish(wanted, STRONG if difference else MILD, difference)


def _other(colour: Colour) -> Colour:
    return "white" if colour == "black" else "black"


def pair_round(players: Sequence[SwissPlayer], *, top_seed_colour: Colour = "black") -> SwissRound:
    """Pair the next round of the players taking part in it (see the module's docstring)."""
    if len({p.id for p in players}) != len(players):
        raise ValueError("a player is listed twice")
    ranked = sorted(players, key=lambda p: (-p.points, -p.rating, p.id))
    if not ranked:
        return SwissRound((), None)
    if len(ranked) == 1:
        return SwissRound((), ranked[0].id)
    costs, broken = _costs(ranked)
    matching = _match(ranked, costs, broken)
    if matching is None:
        raise PairingImpossible(
            f"{len(ranked)} players cannot all be paired without someone meeting an opponent "
            "a second time"
        )
    bye: int | None = None
    pairs: list[tuple[int, int]] = []
    for a, b in matching:
        if _BYE in (a, b):
            bye = ranked[max(a, b)].id
        else:
            pairs.append((min(a, b), max(a, b)))
    pairs.sort(key=lambda ab: (-ranked[ab[0]].points, -ranked[ab[1]].points, ab[0]))
    boards = tuple(
        _allocate(ranked[a], ranked[b], board, top_seed_colour)
        for board, (a, b) in enumerate(pairs, start=1)
    )
    return SwissRound(boards, bye)


def _costs(ranked: list[SwissPlayer]) -> tuple[dict[tuple[int, int], int], int]:
    """The cost of every allowed pair (i < j, or (_BYE, j)), the criteria folded into one
    integer so that each one outweighs everything the later ones can add up to; and the least
    cost of a pair that breaks a rule (a second bye, a colour rule)."""
    n = len(ranked)
    wishes = [_wish(p.colours) for p in ranked]
    group_of: dict[int, list[int]] = {}
    for index, player in enumerate(ranked):
        group_of.setdefault(player.points, []).append(index)
    place = {index: k for members in group_of.values() for k, index in enumerate(members)}
    criteria: dict[tuple[int, int], tuple[int, ...]] = {}
    if n % 2:
        lowest = ranked[-1].points
        anyone_without = any(not p.had_bye for p in ranked)
        for j, player in enumerate(ranked):
            criteria[(_BYE, j)] = (
                int(player.had_bye and anyone_without),
                0,
                player.points - lowest,
                0,
                0,
                n - 1 - j,
            )
    for i in range(n):
        a = ranked[i]
        wish_a = wishes[i]
        group_a = group_of[a.points]
        for j in range(i + 1, n):
            b = ranked[j]
            if b.id in a.opponents or a.id in b.opponents:
                continue
            wish_b = wishes[j]
            same = wish_a.colour is not None and wish_a.colour == wish_b.colour
            clash = int(same and wish_a.strength == wish_b.strength == ABSOLUTE)
            colour = min(wish_a.strength, wish_b.strength) if same else 0
            if a.points == b.points:
                order = abs(place[j] - place[i] - len(group_a) // 2)
            else:  # i ranks above j: a floats down to b's group
                order = len(group_a) - 1 - place[i] + place[j]
            criteria[(i, j)] = (0, clash, 0, (a.points - b.points) ** 2, colour, order)
    pairs_in_round = (n + 1) // 2
    scale = [1] * 6
    for k in range(4, -1, -1):
        worst = max((c[k + 1] for c in criteria.values()), default=0)
        scale[k] = scale[k + 1] * (pairs_in_round * worst + 1)
    costs = {
        edge: sum(x * s for x, s in zip(c, scale, strict=True)) for edge, c in criteria.items()
    }
    return costs, scale[1]


def _match(
    ranked: list[SwissPlayer], costs: dict[tuple[int, int], int], broken: int
) -> list[tuple[int, int]] | None:
    """A perfect matching of least total cost (the dummy included for an odd count), None when
    there is none at all.

    The blossom algorithm is cubic, and all 31,000 pairs of 250 players take it seconds. So
    each player first gets only the cheapest ``CANDIDATES[k]`` opponents of each colour wish
    (black, white, none) in its own score group and in each of the two next score groups, a
    ``FAR``th as many further up and further down (the nearest first), and the dummy its
    cheapest takers. The colour wishes are kept apart because the cheapest opponents are those
    wanting the other colour: with only them, two players wanting the same colour could never
    meet, and a group with more of one wish than the other would have to float players out.
    Only if the candidates cannot pair everyone, or only by breaking a rule (a second bye, a
    colour rule), does every allowed pair come in. Up to ``SMALL`` pairs, they all come in at
    once."""
    n = len(ranked)
    vertices = n + n % 2
    ceiling = max(costs.values(), default=0) + 1
    level = {points: k for k, points in enumerate(sorted({p.points for p in ranked}))}
    group = [level[p.points] for p in ranked]
    wanted = [_wish(p.colours).colour for p in ranked]
    options: dict[tuple[int, int, Colour | None], list[tuple[int, tuple[int, int]]]] = {}
    for edge, cost in costs.items():
        a, b = edge
        if a == _BYE:
            options.setdefault((_BYE, 0, None), []).append((cost, edge))
            continue
        step = max(-2, min(2, group[b] - group[a]))
        options.setdefault((a, step, wanted[b]), []).append((cost, edge))
        options.setdefault((b, -step, wanted[a]), []).append((cost, edge))
    for bucket in options.values():
        bucket.sort()
    for limit in (*CANDIDATES, None) if len(costs) > SMALL else (None,):
        if limit is None:
            edges = set(costs)
        else:
            edges = {
                edge
                for (_, step, _), bucket in options.items()
                for _, edge in bucket[: limit if abs(step) < 2 else limit // FAR]
            }
        graph = nx.Graph()
        graph.add_weighted_edges_from((a, b, ceiling - costs[(a, b)]) for a, b in edges)
        matching = nx.max_weight_matching(graph, maxcardinality=True)
        if limit is None or len(edges) == len(costs):
            return sorted(matching) if 2 * len(matching) == vertices else None
        if 2 * len(matching) == vertices and all(costs[_edge(e)] < broken for e in matching):
            return sorted(matching)
    return None


def _edge(pair: tuple[int, int]) -> tuple[int, int]:
    return (min(pair), max(pair))


def _allocate(
    a: SwissPlayer, b: SwissPlayer, board: int, top_seed_colour: Colour
) -> tuple[int, int]:
    """(black id, white id) for ``a`` (ranked higher) and ``b``, by FIDE's colour rules."""
    wish_a, wish_b = _wish(a.colours), _wish(b.colours)
    colour_a: Colour
    if wish_a.colour is not None and wish_b.colour is not None and wish_a.colour != wish_b.colour:
        colour_a = wish_a.colour
    elif wish_a.colour is not None and wish_b.colour is not None:
        if wish_a.strength != wish_b.strength:
            colour_a = wish_a.colour if wish_a.strength > wish_b.strength else _other(wish_b.colour)
        elif wish_a.strength == ABSOLUTE and abs(wish_a.difference) != abs(wish_b.difference):
            stronger = abs(wish_a.difference) > abs(wish_b.difference)
            colour_a = wish_a.colour if stronger else _other(wish_b.colour)
        else:
            colour_a = _reverse_last_difference(a, b) or wish_a.colour
    elif wish_a.colour is not None:
        colour_a = wish_a.colour
    elif wish_b.colour is not None:
        colour_a = _other(wish_b.colour)
    else:
        colour_a = top_seed_colour if board % 2 == 1 else _other(top_seed_colour)
    return (a.id, b.id) if colour_a == "black" else (b.id, a.id)


def _reverse_last_difference(a: SwissPlayer, b: SwissPlayer) -> Colour | None:
    """``a``'s colour reversing the last round in which the two played different colours."""
    for mine, theirs in zip(reversed(a.colours), reversed(b.colours), strict=False):
        if mine is not None and theirs is not None and mine != theirs:
            return _other(mine)
    return None


def late_join_points(rounds_started: int, total_rounds: int) -> int:
    """Half points for a player joining after ``rounds_started`` rounds have begun: ½ point (1
    half point) for each round missed, as long as at most half of the rounds have started
    (``2 × rounds_started ≤ total_rounds``); after that, nothing.

    Our reading of the issue's "a late joiner gets ½ for each round missed while at most half
    the rounds have started": the condition is on the moment of joining, not on each missed
    round, so joining after round 3 of 6 has started gives 1½ points, and after round 4 of 6
    nothing (the service may refuse such a join, as lichess does). A round counts as missed once
    it has started, even if it is still being played."""
    if rounds_started < 0 or total_rounds < 0:
        raise ValueError("round counts cannot be negative")
    return rounds_started if 2 * rounds_started <= total_rounds else 0
