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

For speed, a field of up to ``WHOLE`` players is one matching (each player first given only a few
candidates, then every pair). A larger one is cut into chunks of about ``CHUNK`` players, each a
miniature of the field (`_chunks`), matched alone; then the pairs that float a player or miss a
colour wish are paired again together (`_repair`). The blossom algorithm is cubic: a matching
over all 500,000 pairs of 1,000 players took over a minute when every score group's colour
history was the same (a mass of no-shows), and no matching here is larger than a chunk (or two,
merged when one cannot be paired without a rematch) or the repair's ``REPAIR`` players, so a
round of 1,000 players takes well under 2 s of CPU whatever the colours (bench/swiss.py). The
bye of a larger field is given first, to the lowest-ranked player who has not had one (Dutch's
choice). On simulated 250- and 400-player tournaments the chunks float as many players as the
matching over every pair in most rounds (a floater or two more in the others), and meet a few
colour preferences fewer.

The points of a round are whatever the service records (half points: 2 for a win, 4 for a won
two-game ballot match): pairing only compares them.
"""

from __future__ import annotations

import itertools
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
WHOLE = 100
"""Up to this many players a round is one matching; beyond, the field is cut into chunks."""
CHUNK = 30
"""Players per chunk of a larger field: a chunk's matching takes about a hundredth of a second
of CPU (a matching is cubic in its players), so 1,000 players take about half a second."""
REPAIR = 60
"""At most this many players, those of the chunks' worst pairs, are paired again together."""
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
    bye: int | None = None
    pairs: list[tuple[int, int]] = []
    if len(ranked) <= WHOLE:
        matching = _pair(ranked)
        if matching is None:
            raise PairingImpossible(
                f"{len(ranked)} players cannot all be paired without someone meeting an "
                "opponent a second time"
            )
        for a, b in matching:
            if _BYE in (a, b):
                bye = ranked[max(a, b)].id
            else:
                pairs.append((min(a, b), max(a, b)))
    else:
        taker = _bye_taker(ranked) if len(ranked) % 2 else None
        if taker is not None:
            bye = ranked[taker].id
        pairs = _pair_chunks(ranked, [i for i in range(len(ranked)) if i != taker])
    pairs.sort(key=lambda ab: (-ranked[ab[0]].points, -ranked[ab[1]].points, ab[0]))
    boards = tuple(
        _allocate(ranked[a], ranked[b], board, top_seed_colour)
        for board, (a, b) in enumerate(pairs, start=1)
    )
    return SwissRound(boards, bye)


def _pair(ranked: list[SwissPlayer]) -> list[tuple[int, int]] | None:
    """The least costly perfect matching of these players (indices into `ranked`, the dummy
    `_BYE` in one pair for an odd count); None when there is none."""
    costs, broken = _costs(ranked)
    return _match(ranked, costs, broken)


def _bye_taker(ranked: list[SwissPlayer]) -> int:
    """The bye of a larger field: the lowest-ranked player (so of the lowest score) who has
    not had one, or the lowest-ranked if everyone has."""
    without = [i for i, player in enumerate(ranked) if not player.had_bye]
    return without[-1] if without else len(ranked) - 1


def _chunks(ranked: list[SwissPlayer], members: list[int]) -> list[list[int]]:
    """An even number of `members` (indices into `ranked`, in rank order) cut into chunks of
    about ``CHUNK`` players, each of an even count, so that each chunk is a miniature of the
    field and can be paired on its own:

    - a score group with at least two players per chunk is dealt out over every chunk, two by
      two, each two a likely pair (`_opposites`): each chunk gets its share of each colour wish
      (a mass of players wanting one colour, as no-shows make, find those wanting the other in
      every chunk, in their group or the next), and within the group the top half still meets
      the bottom half;
    - a run of smaller groups between two such groups (the leaders, the tail) stays together,
      in consecutive pieces that fill the chunks up to about ``CHUNK``, each in the chunk with
      the fewest players: there its floaters meet the shares of the dealt groups around it;
    - the lowest-ranked player of a group or run of an odd count (its floater) goes with the
      next such one to the same chunk, so that the float from one to the other, through the
      groups between, is paired there as it would be in the whole field."""
    count = len(members) // CHUNK
    chunks: list[list[int]] = [[] for _ in range(count)]
    floaters: list[int] = []
    runs: list[list[int]] = [[]]
    turn = 0
    for _, grouped in itertools.groupby(members, key=lambda i: ranked[i].points):
        group = list(grouped)
        if len(group) < 2 * count:
            runs[-1] += group
            continue
        runs.append([])
        if len(group) % 2:
            floaters.append(group.pop())
        for k, (one, two) in enumerate(_opposites(ranked, group)):
            chunks[(turn + k) % count] += (one, two)
        turn = (turn + len(group) // 2) % count
    share = sum(map(len, chunks)) // count
    size = max(2, (CHUNK - share) // 2 * 2)
    for run in runs:
        if len(run) % 2:
            floaters.append(run.pop())
        for start in range(0, len(run), size):
            min(chunks, key=len).extend(run[start : start + size])
    for k, index in enumerate(sorted(floaters)):
        chunks[k // 2 % count].append(index)
    return [sorted(chunk) for chunk in chunks]


def _opposites(ranked: list[SwissPlayer], group: list[int]) -> list[tuple[int, int]]:
    """An even score group cut into twos to deal out, each two a likely pair: a player wanting
    one colour with one wanting the other half the group further down (the top half meets the
    bottom half), then the rest alike (the same wish, or none); never two who met if another
    will do."""
    wanting: dict[Colour | None, list[int]] = {"black": [], "white": [], None: []}
    for index in group:
        wanting[_wish(ranked[index].colours).colour].append(index)
    fewer, more = sorted((wanting["black"], wanting["white"]), key=len)
    twos, left = _twos(ranked, fewer, more, len(more) // 2)
    rest = sorted(left + wanting[None])
    more_twos, left = _twos(ranked, rest[: len(rest) // 2], rest[len(rest) // 2 :], 0)
    return sorted(twos + more_twos + list(zip(left[::2], left[1::2], strict=True)))


def _twos(
    ranked: list[SwissPlayer], ones: list[int], others: list[int], shift: int
) -> tuple[list[tuple[int, int]], list[int]]:
    """Each of `ones` in turn with the first of `others`, from the `shift`th on and round, that
    it has not met; and those left over (in rank order)."""
    free = others[shift:] + others[:shift]
    twos, left = [], []
    for one in ones:
        partner = next((k for k, o in enumerate(free) if not _met(ranked[one], ranked[o])), None)
        if partner is None:
            left.append(one)
        else:
            twos.append((one, free.pop(partner)))
    return twos, sorted(left + free)


def _pair_chunks(ranked: list[SwissPlayer], members: list[int]) -> list[tuple[int, int]]:
    """An even number of players paired chunk by chunk (`_chunks`): (i, j) indices into
    `ranked`, i < j. A chunk that cannot be paired without a rematch is merged with the next
    one (the last with the one before) and paired again. Each player has met at most one
    opponent per round, so a chunk of at least twice that many plus two can always be paired
    (Dirac's theorem on the pairs not played yet): merges stop there, and the whole field, which
    is larger than ``WHOLE``, can always be paired within the 30 rounds a Swiss may have."""
    pending = _chunks(ranked, members)
    done: list[tuple[list[int], list[tuple[int, int]]]] = []
    while pending:
        chunk = pending.pop(0)
        matching = _pair([ranked[i] for i in chunk])
        if matching is not None:
            done.append((chunk, [(chunk[a], chunk[b]) for a, b in matching]))
        elif pending:
            pending[0] = sorted(chunk + pending[0])
        elif done:
            pending.append(sorted(chunk + done.pop()[0]))
        else:
            raise PairingImpossible(
                f"{len(chunk)} players cannot all be paired without someone meeting an "
                "opponent a second time"
            )
    pairs = [(min(a, b), max(a, b)) for _, matching in done for a, b in matching]
    return _repair(ranked, pairs)


def _repair(ranked: list[SwissPlayer], pairs: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """The chunks' pairs, with those that float a player or miss a colour wish paired again
    together (at most ``REPAIR`` players, the highest-ranked first): two chunks that each
    floated a player of one score group pair them with each other instead. Their matching
    includes the pairs they had, so it can only do better."""
    wishes = [_wish(p.colours).colour for p in ranked]
    worse = sorted(
        (
            (a, b)
            for a, b in pairs
            if ranked[a].points != ranked[b].points or (wishes[a] and wishes[a] == wishes[b])
        ),
        key=lambda ab: (ranked[ab[1]].points - ranked[ab[0]].points, ab),
    )[: REPAIR // 2]
    if not worse:
        return pairs
    chosen = sorted(i for pair in worse for i in pair)
    matching = _pair([ranked[i] for i in chosen])
    assert matching is not None  # the pairs they had are one
    kept = set(pairs) - set(worse)
    return [*kept, *((min(chosen[a], chosen[b]), max(chosen[a], chosen[b])) for a, b in matching)]


def _met(a: SwissPlayer, b: SwissPlayer) -> bool:
    return b.id in a.opponents or a.id in b.opponents


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
            if _met(a, b):
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
