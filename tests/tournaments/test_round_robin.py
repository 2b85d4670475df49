"""Berger tables: FIDE's for 4, 6 and 8 players; every pair once (twice in a double round
robin, colours reversed); one game a round per player; colours balanced."""

from __future__ import annotations

from collections import Counter

import pytest

from app.tournaments.round_robin import berger


def table(text: str) -> list[list[tuple[int, int]]]:
    """FIDE's printed table, 1-based, one round a line, to our 0-based pairs."""
    return [
        [(int(a) - 1, int(b) - 1) for a, b in (pair.split("-") for pair in line.split())]
        for line in text.strip().splitlines()
    ]


def test_six_players_is_fides_table() -> None:
    assert berger(6) == table(
        """
        1-6 2-5 3-4
        6-4 5-3 1-2
        2-6 3-1 4-5
        6-5 1-4 2-3
        3-6 4-2 5-1
        """
    )


def test_four_and_eight_players_are_fides_tables() -> None:
    assert berger(4) == table("1-4 2-3\n4-3 1-2\n2-4 3-1")
    assert berger(8) == table(
        """
        1-8 2-7 3-6 4-5
        8-5 6-4 7-3 1-2
        2-8 3-1 4-7 5-6
        8-6 7-5 1-4 2-3
        3-8 4-2 5-1 6-7
        8-7 1-6 2-5 3-4
        4-8 5-3 6-2 7-1
        """
    )


def test_an_odd_field_uses_the_next_table_with_one_player_out_each_round() -> None:
    rounds = berger(5)
    assert rounds == [[(a, b) for a, b in r if 5 not in (a, b)] for r in berger(6)]
    sitting_out = [({0, 1, 2, 3, 4} - {p for pair in r for p in pair}).pop() for r in rounds]
    assert sorted(sitting_out) == [0, 1, 2, 3, 4]


@pytest.mark.parametrize("n", range(2, 15))
def test_everyone_meets_everyone_once_one_game_a_round(n: int) -> None:
    rounds = berger(n)
    assert len(rounds) == (n - 1 if n % 2 == 0 else n)
    met = Counter(frozenset(pair) for r in rounds for pair in r)
    assert len(met) == n * (n - 1) // 2 and set(met.values()) == {1}
    for r in rounds:
        players = [p for pair in r for p in pair]
        assert len(players) == len(set(players)) and set(players) <= set(range(n))
    blacks = Counter(black for r in rounds for black, _ in r)
    whites = Counter(white for r in rounds for _, white in r)
    assert all(abs(blacks[p] - whites[p]) <= 1 for p in range(n))


@pytest.mark.parametrize("n", [2, 5, 6, 12])
def test_a_double_round_robin_repeats_the_table_colours_reversed(n: int) -> None:
    single, double = berger(n), berger(n, double=True)
    assert double[: len(single)] == single
    assert double[len(single) :] == [[(w, b) for b, w in r] for r in single]
    games = Counter(pair for r in double for pair in r)
    assert all(games[(b, w)] == 1 and games[(w, b)] == 1 for b, w in games)


def test_a_round_robin_needs_two_players() -> None:
    with pytest.raises(ValueError):
        berger(1)
