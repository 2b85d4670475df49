"""Standings: points, Sonneborn–Berger, Buchholz, with unplayed rounds by FIDE's 2009 rule."""

from __future__ import annotations

from app.tournaments.tiebreaks import StandingRow, buchholz, sonneborn_berger, standings

# Four players, three rounds, every game played (half points):
# round 1: 1 beats 4, 2 draws 3; round 2: 1 draws 3, 2 beats 4; round 3: 1 beats 2, 3 beats 4.
PLAYED = {
    1: [(4, 2), (3, 1), (2, 2)],
    2: [(3, 1), (4, 2), (1, 0)],
    3: [(2, 1), (1, 1), (4, 2)],
    4: [(1, 0), (2, 0), (3, 0)],
}

# Three players, three rounds, one bye each round:
# round 1: A(1) beats B(2), C(3) has the bye; round 2: A draws C, B has the bye;
# round 3: B beats C, A has the bye.
WITH_BYES = {
    1: [(2, 2), (3, 1), (None, 2)],
    2: [(1, 0), (None, 2), (3, 2)],
    3: [(None, 2), (1, 1), (2, 0)],
}


def test_buchholz_and_sonneborn_berger_of_played_games() -> None:
    # totals: 1 has 5, 2 has 3, 3 has 4, 4 has 0
    assert [buchholz(PLAYED, p) for p in (1, 2, 3, 4)] == [7, 9, 8, 12]
    # 1: a win over 4 (0), a draw with 3 (4 / 2), a win over 2 (3)
    assert [sonneborn_berger(PLAYED, p) for p in (1, 2, 3, 4)] == [5, 2, 4, 0]


def test_unplayed_rounds_meet_a_virtual_opponent_and_count_drawn_for_others() -> None:
    # As the others see them (unplayed rounds drawn): A 4, B 3, C 2.
    # A's bye in round 3: a virtual opponent with A's 3 half points before it, who lost
    # nothing more in that round (A won it) and has no later round: 3.
    assert buchholz(WITH_BYES, 1) == 3 + 2 + 3
    assert sonneborn_berger(WITH_BYES, 1) == 3 + 1 + 3
    # C's bye in round 1: 0 before, 0 taken in it (C won it), a draw in each of the 2 later
    # rounds: 2.
    assert buchholz(WITH_BYES, 3) == 2 + 4 + 3
    assert sonneborn_berger(WITH_BYES, 3) == 2 + 2 + 0


def test_standings_order_by_points_then_tie_breaks() -> None:
    assert standings(PLAYED) == [
        StandingRow(1, 1, 5, 5, 7),
        StandingRow(2, 3, 4, 4, 8),
        StandingRow(3, 2, 3, 2, 9),
        StandingRow(4, 4, 0, 0, 12),
    ]


def test_sonneborn_berger_comes_before_buchholz() -> None:
    # Three rounds of a six-player round robin; 3 and 6 both have one point.
    results = {
        1: [(6, 0), (2, 0), (3, 1)],
        2: [(5, 1), (1, 2), (6, 2)],
        3: [(4, 1), (5, 0), (1, 1)],
        4: [(3, 1), (6, 2), (5, 2)],
        5: [(2, 1), (3, 2), (4, 0)],
        6: [(1, 2), (4, 0), (2, 0)],
    }
    assert (sonneborn_berger(results, 3), buchholz(results, 3)) == (3, 9)
    assert (sonneborn_berger(results, 6), buchholz(results, 6)) == (1, 11)
    order = [row.player for row in standings(results)]
    assert order.index(3) < order.index(6)


def test_players_equal_in_everything_share_a_rank() -> None:
    results = {
        1: [(3, 2), (4, 0)],
        2: [(4, 2), (3, 0)],
        3: [(1, 0), (2, 2)],
        4: [(2, 0), (1, 2)],
    }
    assert [(row.rank, row.player) for row in standings(results)] == [
        (1, 1),
        (1, 2),
        (1, 3),
        (1, 4),
    ]


def test_a_two_game_match_round_is_worth_four() -> None:
    results = {1: [(2, 3), (None, 4)], 2: [(1, 1), (None, 4)]}
    # 1's opponent as others see them: 1 + a drawn match (2) = 3
    assert buchholz(results, 1, win=4) == 3 + (3 + 0 + 0)
    assert sonneborn_berger(results, 1, win=4) == 3 * 3 / 4 + 3 * 4 / 4
