"""The limits around the maths: idle RD growth, ±700 per game, floor 400, RD and volatility
bounds, the provisional flag, and the time-control categories."""

from __future__ import annotations

import pytest

from app.ratings import (
    DEFAULT,
    MAX_RATING_DELTA,
    Glicko,
    cap,
    category_of,
    live_rd,
    provisional,
    rate_game,
)

DAY = 86400.0


def test_idle_growth_takes_a_typical_rd_from_60_to_110_in_a_year() -> None:
    glicko = Glicko(1800, 60, 0.06)
    assert live_rd(glicko, 0.0, 0.0) == pytest.approx(60)
    assert live_rd(glicko, 0.0, 365 * DAY) == pytest.approx(110, abs=0.5)
    # 0.21436 rating periods a day: after 10 days, sqrt(phi^2 + 2.1436 sigma^2).
    assert live_rd(glicko, 0.0, 10 * DAY) == pytest.approx(
        173.7178 * ((60 / 173.7178) ** 2 + 10 * 0.21436 * 0.06**2) ** 0.5
    )


def test_idle_growth_stops_at_500_and_never_applies_before_a_first_game() -> None:
    assert live_rd(Glicko(1500, 480, 0.09), 0.0, 3650 * DAY) == 500
    assert live_rd(DEFAULT, None, 3650 * DAY) == 500
    assert live_rd(Glicko(1500, 200, 0.06), None, 3650 * DAY) == 200


def test_a_rated_game_starts_from_the_grown_rd() -> None:
    fresh = Glicko(1500, 60, 0.06)
    idle = Glicko(1500, live_rd(fresh, 0.0, 365 * DAY), 0.06)
    opponent = Glicko(1500, 60, 0.06)
    gain_fresh = rate_game(fresh, opponent, 1.0)[0].diff
    gain_idle = rate_game(idle, opponent, 1.0)[0].diff
    assert gain_idle > gain_fresh > 0


def test_a_game_moves_a_rating_by_at_most_700() -> None:
    upset, favourite = rate_game(Glicko(800, 500, 0.09), Glicko(2900, 45, 0.06), 1.0)
    assert upset.after.rating - upset.before.rating == MAX_RATING_DELTA
    assert upset.diff == 700
    assert favourite.after.rating < favourite.before.rating


def test_no_rating_falls_below_400() -> None:
    loser, _ = rate_game(Glicko(450, 500, 0.09), Glicko(430, 500, 0.09), 0.0)
    assert loser.after.rating == 400
    assert loser.diff == -50


def test_rd_stays_between_45_and_500_and_volatility_at_most_0_1() -> None:
    settled, _ = rate_game(Glicko(2000, 45, 0.06), Glicko(2000, 45, 0.06), 0.5)
    assert settled.after.rd == 45
    wild, _ = rate_game(Glicko(1500, 60, 0.1), Glicko(2600, 45, 0.1), 1.0)
    assert wild.after.volatility <= 0.1
    assert cap(Glicko(300, 900, 0.5)) == Glicko(400, 500, 0.1)
    assert cap(Glicko(1500, 10, 0.05)) == Glicko(1500, 45, 0.05)


def test_provisional_while_rd_is_110_or_more() -> None:
    assert provisional(500) and provisional(110)
    assert not provisional(109.99)


def test_a_first_game_between_new_players() -> None:
    black, white = rate_game(DEFAULT, DEFAULT, 1.0)
    assert (black.diff, white.diff) == (241, -242)
    assert int(black.after.rating) == 1741 and int(white.after.rating) == 1258


@pytest.mark.parametrize(
    ("base", "increment", "category"),
    [
        (None, 0, "untimed"),
        (15, 0, "bullet"),
        (60, 2, "bullet"),  # 140 s
        (180, 0, "blitz"),
        (300, 3, "blitz"),  # 420 s
        (300, 5, "rapid"),  # 500 s
        (600, 5, "rapid"),  # 800 s
        (900, 15, "classical"),  # 1500 s
        (3600, 0, "classical"),
    ],
)
def test_categories_by_estimated_duration(base: int | None, increment: int, category: str) -> None:
    assert category_of(base, increment) == category
