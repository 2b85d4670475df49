"""Arena tournaments as lichess runs them: scoring, when a pairing wave runs, and whom it pairs.

An arena lasts a fixed time; players join, pause and come back at will, and whoever is waiting
is paired again in the next wave. The rules follow lila's ``modules/tournament`` (read, not
copied; each function names the file it follows):

- scoring (``arena/ArenaSheet.scala``): win 2, draw 1, loss 0; a player whose two previous games
  were both wins is *on fire* and scores double (a win 4, a draw 2) until a game that is not a
  win; a draw in fewer than 20 plies scores nothing; a berserk win of at least 14 plies earns 1
  more. lila's later rule that a run of short draws scores nothing (its ``Flag.Null``, keyed to
  chess-specific game lengths) is not part of our rules.
- the wave (``WaitingUsers.scala``, ``TournamentApi.makePairings``): a wave runs when at least two
  players have waited a time set by the clock, when more than 100 wait, at the first wave of the
  tournament, or in a small tournament when most active players wait.
- the pairing (``arena/PairingSystem.scala``, ``arena/AntmaPairing.scala``): a minimum-cost
  matching over the rank and rating differences, never the same two players twice in a row.
- the tie-break (``Performance.scala``, ``Player.magicScore``): the score, then the performance.

Colours are the service's to choose (lila looks at each player's colour history).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

import networkx as nx

ArenaOutcome = Literal["win", "draw", "loss"]

WIN = 2
DRAW = 1
SHORT_DRAW_PLIES = 20
"""A draw in fewer plies scores 0 (lila's ``Pairing.quickDraw``: ``turns < 20``)."""
BERSERK_PLIES = 14
"""A berserk win earns its bonus point from this many plies (lila's ``notSoQuickFinish``)."""
CROWD = 100
"""More waiting players than this pair at once, whatever their wait (lila's ``size > 100``)."""
PERFORMANCE_SPREAD = 500
"""A win counts as a game against an opponent 500 points stronger, a loss 500 weaker."""
PERFORMANCE_GAMES = 3
"""lila gives a performance only from three games on; below that the rating stands in."""


@dataclass(frozen=True)
class ArenaGame:
    """One finished game from the player's side, in the order played."""

    outcome: ArenaOutcome
    plies: int
    berserk: bool = False
    """The player berserked (halved their own clock and gave up the increment)."""


@dataclass(frozen=True)
class Sheet:
    """A player's arena score: ``points`` per game in order, their ``total``, and whether the
    next game counts double (the last two were wins)."""

    points: tuple[int, ...]
    total: int
    on_fire: bool


def sheet(games: Sequence[ArenaGame], *, streaks: bool = True) -> Sheet:
    """The points of each game (lila's ``ArenaSheet.addResult``, version 2 without its draw
    streaks). ``streaks=False`` is lila's tournament option that turns fire off.

    Fire starts from the third win in a row: the win that makes two in a row scores 2, every
    game after it scores double, and the first game that is not a win ends the run (a draw
    then scores 2). A short draw scores 0 even on fire, and ends the run. The berserk point
    comes on top of the doubled win (5), and only on a win: a berserk draw or loss earns
    nothing more."""
    points: list[int] = []
    wins_in_a_row = 0
    for game in games:
        on_fire = streaks and wins_in_a_row >= 2
        if game.outcome == "win":
            value = WIN * (2 if on_fire else 1)
            if game.berserk and game.plies >= BERSERK_PLIES:
                value += 1
            wins_in_a_row += 1
        elif game.outcome == "draw":
            value = 0 if game.plies < SHORT_DRAW_PLIES else DRAW * (2 if on_fire else 1)
            wins_in_a_row = 0
        else:
            value = 0
            wins_in_a_row = 0
        points.append(value)
    return Sheet(tuple(points), sum(points), streaks and wins_in_a_row >= 2)


def can_berserk(clock_base_s: int, clock_increment_s: int) -> bool:
    """Berserk halves one's own base time and drops the increment: there must be a base."""
    return clock_base_s > 0


def berserk_clock(clock_base_s: int, clock_increment_s: int) -> tuple[float, int]:
    """The clock of a player who berserked: (base seconds, increment seconds).

    As the issue states the rule: half the base, no increment. scalachess keeps the whole base
    when the increment dominates (base under 40 increments); we do not."""
    if not can_berserk(clock_base_s, clock_increment_s):
        raise ValueError("berserk needs a clock with a base time")
    return clock_base_s / 2, 0


def wait_seconds(clock_base_s: int, clock_increment_s: int) -> float:
    """How long a player waits for a wave (lila's ``WaitingUsers.waitSeconds``).

    lila estimates a game's length as the base plus 40 increments and waits a tenth of it
    plus 6 s, between 15 and 50 s, with shorter waits for the fastest clocks: 10 s below a
    minute's estimate, and 8 s below 30 s, which we raise to 10 s (the issue's floor). So 1+0
    waits 15 s, 3+0 24 s, 5+0 36 s, 3+2 (260 s) 32 s, and 10+0 or longer 50 s."""
    estimate = clock_base_s + 40 * clock_increment_s
    if estimate < 60:
        return 10.0
    return float(min(50, max(15, estimate // 10 + 6)))


def should_pair(
    waiting: Mapping[int, float],
    now: float,
    clock_base_s: int,
    clock_increment_s: int,
    *,
    crowd: int = CROWD,
    first_wave: bool = False,
    active_players: int | None = None,
) -> bool:
    """Whether a wave runs now; ``waiting`` maps each waiting player to when they began to wait
    (the service's clock, in seconds, as ``now``).

    As lila's ``TournamentApi.makePairings`` with ``WaitingUsers.haveWaitedEnough``: never
    with fewer than two waiting; at once for the tournament's first wave (``first_wave``) or
    with more than ``crowd`` waiting; else when at least two have waited ``wait_seconds``.
    ``active_players`` (lila passes it for tournaments under 30 players) is how many players
    are in and not paused: when the waiting ones are two thirds of them or more, nobody is
    left to wait for and the wave runs."""
    count = len(waiting)
    if count < 2:
        return False
    if first_wave or count > crowd:
        return True
    if active_players is not None and active_players <= count * 1.5:
        return True
    since = now - wait_seconds(clock_base_s, clock_increment_s)
    return sum(1 for began in waiting.values() if began < since) > 1


@dataclass(frozen=True)
class ArenaPlayer:
    """A waiting player as the pairing sees them."""

    id: int
    rating: int
    rank: int
    """Place in the tournament's standings, 1 for the leader."""
    last_opponent: int | None
    """Whom they played last in this tournament: never paired again straight away."""
    waiting_since: float = 0.0
    """When they began to wait: with an odd number waiting, the newest sits the wave out."""


GROUP = 40
"""Players matched together, consecutive by rank (lila: groups of up to 100)."""
BAND = 8
"""Candidate opponents of a player in the group: the next ``BAND`` by rank."""


def pair_wave(
    players: Sequence[ArenaPlayer], *, only_two_active: bool = False
) -> list[tuple[int, int]]:
    """The pairs of one wave, as (id, id); the service chooses the colours.

    The cost of a pair is lila's ``AntmaPairing`` score: the rank difference times a factor
    from 2,000 for the leaders down to 300 for the last (so that the leaders meet each other),
    plus the rating difference; the pairs minimise the total cost among the pairings that pair
    the most players (networkx's ``max_weight_matching`` with ``maxcardinality``). Two players
    who have just played each other are never paired, except in lila's duel case: a
    tournament with only two active players (``only_two_active``).

    With an odd number waiting, the newest arrival waits for the next wave, unless nobody
    could be paired without them (lila's ``evenOrAll``).

    lila matches the first 200 by rank in two exact groups and pairs the next 600 side by
    side, leaving anyone beyond to the next wave. A matching over every pair of a thousand
    players is too slow in Python (networkx's blossom algorithm is cubic: about ten seconds of
    CPU), so everyone is matched here, by groups of ``GROUP`` consecutive ranks, each player
    with the ``BAND`` next ranks as candidates: a pair further apart would cost at least
    ``BAND`` × 300 more in rank alone, more than any rating difference saves. Whoever a group
    leaves unpaired joins the next group. A thousand players pair in about 0.3 s of CPU."""
    if len(players) < 2:
        return []
    ordered = sorted(players, key=lambda p: (p.rank, p.id))
    if only_two_active and len(ordered) == 2:
        return [(ordered[0].id, ordered[1].id)]
    if len(ordered) % 2 == 1:
        newest = max(ordered, key=lambda p: (p.waiting_since, p.rank, p.id))
        pairs = _pair_groups([p for p in ordered if p is not newest])
        if pairs:
            return pairs
    return _pair_groups(ordered)


def _pair_groups(ordered: list[ArenaPlayer]) -> list[tuple[int, int]]:
    max_rank = max(1, max(p.rank for p in ordered))
    pairs: list[tuple[int, int]] = []
    left: list[ArenaPlayer] = []
    for start in range(0, len(ordered), GROUP):
        group = left + ordered[start : start + GROUP]
        matched = _match(group, max_rank)
        pairs += matched
        paired = {player for pair in matched for player in pair}
        left = [p for p in group if p.id not in paired]
    if len(left) > 1:
        pairs += _match(left, max_rank, band=len(left))
    return pairs


def _match(group: list[ArenaPlayer], max_rank: int, band: int = BAND) -> list[tuple[int, int]]:
    costs: dict[tuple[int, int], int] = {}
    for i, a in enumerate(group):
        for j in range(i + 1, min(len(group), i + 1 + band)):
            b = group[j]
            if a.last_opponent == b.id or b.last_opponent == a.id:
                continue
            factor = 300 + 1700 * (max_rank - min(a.rank, b.rank)) // max_rank
            costs[(i, j)] = abs(a.rank - b.rank) * factor + abs(a.rating - b.rating)
    if not costs:
        return []
    ceiling = max(costs.values()) + 1
    graph = nx.Graph()
    for (i, j), cost in costs.items():
        graph.add_edge(i, j, weight=ceiling - cost)
    matching = nx.max_weight_matching(graph, maxcardinality=True)
    return sorted(
        (group[i].id, group[j].id) if i < j else (group[j].id, group[i].id) for i, j in matching
    )


def performance(
    opponent_ratings: Sequence[int], score: float, *, min_games: int = PERFORMANCE_GAMES
) -> int | None:
    """The performance rating of lila's arena tie-break (``Performance.scala``): the mean of
    the opponents' ratings, each raised by 500 for a win and lowered by 500 for a loss.
    ``score`` counts a win 1 and a draw ½ (not arena points): with ``n`` games, wins minus
    losses is ``2 × score − n``. None under ``min_games`` games, where lila has none."""
    games = len(opponent_ratings)
    if games < max(1, min_games):
        return None
    if not 0 <= score <= games:
        raise ValueError(f"a score of {score} is impossible in {games} games")
    balance = round(2 * score) - games
    return (sum(opponent_ratings) + PERFORMANCE_SPREAD * balance) // games


def rank_key(total: int, performance: int | None, rating: int) -> tuple[int, int]:
    """The standings' sort key, ascending: arena points first, then the performance (the
    rating while there is none), both highest first — lila's ``magicScore``."""
    return (-total, -(performance if performance is not None else rating))
