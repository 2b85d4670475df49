"""Arena rules as lichess's lila has them: the sheet, the wait, when a wave runs, whom it pairs,
and the performance tie-break."""

from __future__ import annotations

import random

import pytest

from app.tournaments.arena import (
    ArenaGame,
    ArenaPlayer,
    berserk_clock,
    can_berserk,
    pair_wave,
    performance,
    rank_key,
    sheet,
    should_pair,
    wait_seconds,
)

LONG = 40  # plies: neither a short draw nor a short berserk win


def win(plies: int = LONG, berserk: bool = False) -> ArenaGame:
    return ArenaGame("win", plies, berserk)


def draw(plies: int = LONG, berserk: bool = False) -> ArenaGame:
    return ArenaGame("draw", plies, berserk)


def loss(plies: int = LONG, berserk: bool = False) -> ArenaGame:
    return ArenaGame("loss", plies, berserk)


@pytest.mark.parametrize(
    ("games", "points", "on_fire"),
    [
        ([], (), False),
        ([win(), draw(), loss()], (2, 1, 0), False),
        # fire from the third win in a row, until a game that is not a win
        ([win(), win(), win(), win(), loss(), win()], (2, 2, 4, 4, 0, 2), False),
        ([win(), win()], (2, 2), True),
        ([win(), loss(), win(), win(), win()], (2, 0, 2, 2, 4), True),
        # a draw on fire counts double, and ends the run
        ([win(), win(), draw(), win(), win()], (2, 2, 2, 2, 2), True),
        # a short draw scores nothing, on fire or not, and ends the run
        ([draw(19), draw(20)], (0, 1), False),
        ([win(), win(), draw(10), win()], (2, 2, 0, 2), False),
        # berserk: one more for a win of 14 plies or more, on top of fire
        ([win(14, berserk=True), win(13, berserk=True)], (3, 2), True),
        ([win(), win(), win(LONG, berserk=True)], (2, 2, 5), True),
        ([draw(berserk=True), loss(berserk=True)], (1, 0), False),
    ],
)
def test_sheet_matches_hand_computed_points(
    games: list[ArenaGame], points: tuple[int, ...], on_fire: bool
) -> None:
    result = sheet(games)
    assert result.points == points
    assert result.total == sum(points)
    assert result.on_fire is on_fire


def test_without_streaks_nothing_doubles() -> None:
    result = sheet([win(), win(), win(), draw(), win(LONG, berserk=True)], streaks=False)
    assert result.points == (2, 2, 2, 1, 3)
    assert result.on_fire is False


@pytest.mark.parametrize(
    ("base", "increment", "wait"),
    [
        (15, 0, 10.0),  # lila waits 8 s below a 30 s estimate; the floor is 10 s
        (30, 0, 10.0),
        (60, 0, 15.0),  # lila's table: 1+0 -> 12 -> 15
        (180, 0, 24.0),  # 3+0 -> 24
        (300, 0, 36.0),  # 5+0 -> 36
        (600, 0, 50.0),  # 10+0 -> 66 -> 50
        (180, 2, 32.0),  # 3+2: 180 + 40 x 2 = 260 s estimated
        (3600, 30, 50.0),
    ],
)
def test_wait_follows_lilas_formula(base: int, increment: int, wait: float) -> None:
    assert wait_seconds(base, increment) == wait


def test_berserk_halves_the_base_and_drops_the_increment() -> None:
    assert berserk_clock(180, 2) == (90.0, 0)
    assert can_berserk(0, 5) is False
    with pytest.raises(ValueError):
        berserk_clock(0, 5)


def test_a_wave_waits_until_two_players_have_waited_long_enough() -> None:
    # 3+0: 24 s
    assert not should_pair({1: 100.0}, 200.0, 180, 0)
    assert not should_pair({1: 100.0, 2: 180.0}, 124.5, 180, 0)
    assert not should_pair({1: 100.0, 2: 110.0}, 130.0, 180, 0)
    assert should_pair({1: 100.0, 2: 105.0, 3: 129.0}, 130.0, 180, 0)


def test_a_wave_runs_at_once_for_a_crowd_the_first_wave_or_most_active_players() -> None:
    now = 1000.0
    crowd = {player: now for player in range(101)}
    assert should_pair(crowd, now, 600, 0)
    assert not should_pair(dict(list(crowd.items())[:100]), now, 600, 0)
    assert should_pair({1: now, 2: now}, now, 600, 0, first_wave=True)
    assert should_pair({1: now, 2: now}, now, 600, 0, active_players=3)
    assert not should_pair({1: now, 2: now}, now, 600, 0, active_players=4)


def players(count: int, **last: int) -> list[ArenaPlayer]:
    """Players 1..count, ranked by id, all rated 1500; ``last`` gives last opponents."""
    return [ArenaPlayer(i, 1500, i, last.get(f"p{i}")) for i in range(1, count + 1)]


def test_neighbours_in_the_standings_meet() -> None:
    assert sorted(pair_wave(players(8))) == [(1, 2), (3, 4), (5, 6), (7, 8)]


def test_nobody_meets_their_last_opponent_straight_away() -> None:
    pairs = pair_wave(players(4, p1=2, p2=1))
    assert sorted(pairs) == [(1, 3), (2, 4)]  # 2 x 1575 + 2 x 1150 beats 3 x 1575 + 1150


def test_two_players_who_just_met_wait_unless_they_are_the_only_two_active() -> None:
    assert pair_wave(players(2, p1=2, p2=1)) == []
    assert pair_wave(players(2, p1=2, p2=1), only_two_active=True) == [(1, 2)]


def test_the_newest_arrival_is_the_odd_player_out() -> None:
    waiting = [ArenaPlayer(i, 1500, i, None, waiting_since=10.0 * i) for i in (1, 2, 3, 4, 5)]
    waiting[2] = ArenaPlayer(3, 1500, 3, None, waiting_since=99.0)
    pairs = pair_wave(waiting)
    assert len(pairs) == 2
    assert 3 not in {p for pair in pairs for p in pair}


def test_the_odd_player_out_plays_if_nobody_else_can() -> None:
    waiting = [
        ArenaPlayer(1, 1500, 1, 2, waiting_since=1.0),
        ArenaPlayer(2, 1500, 2, 1, waiting_since=2.0),
        ArenaPlayer(3, 1500, 3, None, waiting_since=3.0),
    ]
    [pair] = pair_wave(waiting)
    assert 3 in pair


def test_ratings_break_the_tie_between_equal_rank_gaps() -> None:
    waiting = [
        ArenaPlayer(1, 1500, 1, None),
        ArenaPlayer(2, 2100, 2, None),
        ArenaPlayer(3, 1520, 3, None),
        ArenaPlayer(4, 2000, 4, None),
    ]
    # 1-2 3-4: 1 rank + 1 rank, 600 + 480 points; 1-3 2-4: 2 + 2 ranks, 20 + 100 points
    assert sorted(pair_wave(waiting)) == [(1, 2), (3, 4)]


def test_a_thousand_players_are_all_paired_validly() -> None:
    rng = random.Random(7)
    waiting = [
        ArenaPlayer(
            i,
            int(rng.gauss(1500, 300)),
            i,
            rng.choice([None, i + 1, i - 1, i + 2]),
            rng.random(),
        )
        for i in range(1, 1001)
    ]
    by_id = {p.id: p for p in waiting}
    pairs = pair_wave(waiting)
    ids = [p for pair in pairs for p in pair]
    assert len(pairs) == 500
    assert len(set(ids)) == 1000
    for a, b in pairs:
        assert by_id[a].last_opponent != b and by_id[b].last_opponent != a
        assert abs(by_id[a].rank - by_id[b].rank) < 10


def test_performance_is_lilas_mean_of_opponents_plus_or_minus_500() -> None:
    assert performance([1500, 1600, 1700], 3) == 2100
    assert performance([1500, 1600, 1700], 1.5) == 1600
    assert performance([1500, 1600, 1700], 0) == 1100
    assert performance([1500, 1600, 1700], 2.5) == 1933  # (4800 + 2 x 500) / 3, rounded down
    assert performance([1500, 1600], 2) is None
    assert performance([1500, 1600], 2, min_games=1) == 2050
    with pytest.raises(ValueError):
        performance([1500, 1600, 1700], 4)


def test_standings_sort_by_points_then_performance_or_rating() -> None:
    rows = [
        ("a", 10, 1800, 1500),
        ("b", 12, None, 1400),
        ("c", 10, None, 1900),
        ("d", 10, 1700, 2500),
    ]
    ordered = sorted(rows, key=lambda r: rank_key(r[1], r[2], r[3]))
    assert [r[0] for r in ordered] == ["b", "c", "a", "d"]
