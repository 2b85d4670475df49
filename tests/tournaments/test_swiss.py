"""Swiss pairing: score groups, no rematch, one bye for the lowest eligible player, colours."""

from __future__ import annotations

import random
from dataclasses import dataclass, field

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from app.tournaments.swiss import (
    Colour,
    PairingImpossible,
    SwissPlayer,
    SwissRound,
    colour_wish,
    late_join_points,
    pair_round,
)


@dataclass
class Entrant:
    """A player's running record in a simulated tournament."""

    id: int
    rating: int
    points: int = 0
    opponents: set[int] = field(default_factory=set)
    colours: list[Colour | None] = field(default_factory=list)
    byes: int = 0

    def frozen(self) -> SwissPlayer:
        return SwissPlayer(
            self.id,
            self.rating,
            self.points,
            frozenset(self.opponents),
            tuple(self.colours),
            self.byes > 0,
        )


def play(entrants: dict[int, Entrant], round_: SwissRound, rng: random.Random) -> None:
    """Random results: a win for Black, a draw or a win for White."""
    for black, white in round_.pairs:
        result = rng.choice((2, 1, 0))
        entrants[black].points += result
        entrants[white].points += 2 - result
        entrants[black].opponents.add(white)
        entrants[white].opponents.add(black)
        entrants[black].colours.append("black")
        entrants[white].colours.append("white")
    if round_.bye is not None:
        entrants[round_.bye].points += 2
        entrants[round_.bye].byes += 1
        entrants[round_.bye].colours.append(None)


def check_round(entrants: dict[int, Entrant], round_: SwissRound) -> None:
    """The rules every round keeps, checked before its results are played."""
    seen = [p for pair in round_.pairs for p in pair] + (
        [round_.bye] if round_.bye is not None else []
    )
    assert sorted(seen) == sorted(entrants), "everyone plays or has the bye, once"
    assert (round_.bye is not None) == (len(entrants) % 2 == 1)
    for black, white in round_.pairs:
        assert white not in entrants[black].opponents, "nobody meets twice"
    if round_.bye is not None:
        eligible = [e for e in entrants.values() if e.byes == 0]
        assert entrants[round_.bye].byes == 0, "no second bye while others have none"
        lowest = min(e.points for e in eligible)
        assert entrants[round_.bye].points == lowest, "the bye goes to the lowest score"


def check_colours(entrants: dict[int, Entrant]) -> None:
    for entrant in entrants.values():
        played = [c for c in entrant.colours if c is not None]
        assert abs(played.count("black") - played.count("white")) <= 2, entrant
        for k in range(len(played) - 2):
            assert len(set(played[k : k + 3])) == 2, f"three times running: {entrant}"


@pytest.mark.parametrize("seed", range(12))
def test_nine_players_five_rounds_keep_every_rule(seed: int) -> None:
    rng = random.Random(seed)
    entrants = {i: Entrant(i, rng.randint(1200, 2200)) for i in range(1, 10)}
    for _ in range(5):
        round_ = pair_round([e.frozen() for e in entrants.values()])
        check_round(entrants, round_)
        play(entrants, round_, rng)
        check_colours(entrants)
    assert sorted(e.byes for e in entrants.values()) == [0, 0, 0, 0, 1, 1, 1, 1, 1]


@pytest.mark.parametrize("seed", range(8))
def test_round_two_pairs_winners_with_winners(seed: int) -> None:
    rng = random.Random(seed)
    entrants = {i: Entrant(i, 2000 - 10 * i) for i in range(1, 9)}
    first = pair_round([e.frozen() for e in entrants.values()])
    for black, white in first.pairs:  # decisive results only
        winner, loser = (black, white) if rng.random() < 0.5 else (white, black)
        entrants[winner].points += 2
        entrants[winner].colours.append("black" if winner == black else "white")
        entrants[loser].colours.append("black" if loser == black else "white")
        entrants[winner].opponents.add(loser)
        entrants[loser].opponents.add(winner)
    second = pair_round([e.frozen() for e in entrants.values()])
    for black, white in second.pairs:
        assert entrants[black].points == entrants[white].points


def test_first_round_pairs_top_half_with_bottom_half_colours_alternating() -> None:
    players = [SwissPlayer(i, 2000 - i, 0, frozenset(), (), False) for i in range(1, 9)]
    assert pair_round(players).pairs == ((1, 5), (6, 2), (3, 7), (8, 4))
    assert pair_round(players, top_seed_colour="white").pairs == ((5, 1), (2, 6), (7, 3), (4, 8))


def test_the_bye_goes_to_the_lowest_ranked_of_the_lowest_score() -> None:
    players = [SwissPlayer(i, 2000 - i, 0, frozenset(), (), False) for i in range(1, 6)]
    assert pair_round(players).bye == 5
    scored = [
        SwissPlayer(i, 2000 - i, 2 if i == 5 else 0, frozenset(), (), False)
        for i in (1, 2, 3, 4, 5)
    ]
    assert pair_round(scored).bye == 4


def test_a_player_who_had_the_bye_does_not_get_it_again() -> None:
    players = [SwissPlayer(i, 2000 - i, 0, frozenset(), (), i == 5) for i in range(1, 6)]
    assert pair_round(players).bye == 4


def test_a_lone_player_has_the_bye_and_nobody_means_no_round() -> None:
    assert pair_round([SwissPlayer(7, 1500, 0, frozenset(), (), False)]) == SwissRound((), 7)
    assert pair_round([]) == SwissRound((), None)


def test_only_rematches_left_is_impossible() -> None:
    ids = {1, 2, 3, 4}
    players = [
        SwissPlayer(i, 1500, 2, frozenset(ids - {i}), ("black", "white", "black"), False)
        for i in ids
    ]
    with pytest.raises(PairingImpossible):
        pair_round(players)


def test_absolute_colour_needs_are_met() -> None:
    twice_black = SwissPlayer(1, 2000, 4, frozenset({9}), ("black", "black"), False)
    twice_white = SwissPlayer(2, 1900, 4, frozenset({8}), ("white", "white"), False)
    assert pair_round([twice_black, twice_white]).pairs == ((2, 1),)


def test_two_players_needing_the_same_colour_are_kept_apart_where_possible() -> None:
    players = [
        SwissPlayer(1, 2000, 2, frozenset(), ("black", "black"), False),
        SwissPlayer(2, 1990, 2, frozenset(), ("black", "black"), False),
        SwissPlayer(3, 1980, 2, frozenset(), ("white", "white"), False),
        SwissPlayer(4, 1970, 2, frozenset(), ("white", "white"), False),
    ]
    pairs = pair_round(players).pairs
    assert sorted(pairs) == [(3, 1), (4, 2)] or sorted(pairs) == [(3, 2), (4, 1)]


@pytest.mark.parametrize(
    ("colours", "wish"),
    [
        ((), (None, 0)),
        (("black",), ("white", 2)),
        (("black", "white"), ("black", 1)),
        (("black", None, "black"), ("white", 3)),
        (("black", "white", "black", "black"), ("white", 3)),
        (("white", "black", "white"), ("black", 2)),
    ],
)
def test_colour_wishes_follow_fide(
    colours: tuple[Colour | None, ...], wish: tuple[object, int]
) -> None:
    assert colour_wish(colours) == wish


@pytest.mark.parametrize(
    ("started", "total", "points"),
    [(0, 5, 0), (1, 5, 1), (2, 5, 2), (3, 5, 0), (3, 6, 3), (4, 6, 0), (5, 11, 5), (6, 11, 0)],
)
def test_late_joiners_get_half_a_point_per_round_missed_up_to_half_way(
    started: int, total: int, points: int
) -> None:
    assert late_join_points(started, total) == points


@settings(max_examples=60, deadline=None)
@given(
    count=st.integers(min_value=2, max_value=16),
    rounds=st.integers(min_value=1, max_value=8),
    seed=st.integers(min_value=0, max_value=10_000),
)
def test_any_tournament_pairs_without_rematch_or_ends(count: int, rounds: int, seed: int) -> None:
    rng = random.Random(seed)
    entrants = {i: Entrant(i, rng.randint(1000, 2400)) for i in range(1, count + 1)}
    for _ in range(rounds):
        try:
            round_ = pair_round([e.frozen() for e in entrants.values()])
        except PairingImpossible:
            # only when some player has met nearly everyone
            assert max(len(e.opponents) for e in entrants.values()) >= count // 2
            return
        seen = [p for pair in round_.pairs for p in pair] + (
            [round_.bye] if round_.bye is not None else []
        )
        assert sorted(seen) == sorted(entrants)
        for black, white in round_.pairs:
            assert white not in entrants[black].opponents
        play(entrants, round_, rng)


@pytest.mark.parametrize("rounds", [1, 3])
def test_the_candidate_shortlist_finds_the_same_optimum_as_every_pair(rounds: int) -> None:
    """White-box: 140 players (more pairs than ``SMALL``) after some rounds; the matching over
    the shortlisted candidates costs what the matching over every allowed pair costs."""
    import networkx as nx

    from app.tournaments import swiss

    rng = random.Random(rounds)
    entrants = {i: Entrant(i, int(rng.gauss(1500, 300))) for i in range(140)}
    for _ in range(rounds):
        play(entrants, pair_round([e.frozen() for e in entrants.values()]), rng)
    ranked = sorted(
        (e.frozen() for e in entrants.values()), key=lambda p: (-p.points, -p.rating, p.id)
    )
    costs, broken = swiss._costs(ranked)
    assert len(costs) > swiss.SMALL
    shortlisted = swiss._match(ranked, costs, broken)
    assert shortlisted is not None
    ceiling = max(costs.values()) + 1
    graph = nx.Graph()
    graph.add_weighted_edges_from((a, b, ceiling - cost) for (a, b), cost in costs.items())
    every = nx.max_weight_matching(graph, maxcardinality=True)
    total = sum(costs[swiss._edge(pair)] for pair in shortlisted)
    assert total == sum(costs[swiss._edge(pair)] for pair in every)
