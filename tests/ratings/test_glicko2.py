"""The Glicko-2 maths against Glickman's worked example and lichess's own test vectors
(scalachess `GlickoCalculatorTest` and `RatingCalculatorTest`)."""

from __future__ import annotations

import pytest

from app.ratings import DEFAULT, TAU, Glicko, game_update
from app.ratings.glicko2 import update


def test_glickmans_worked_example() -> None:
    # "Example of the Glicko-2 system": 1500/200/0.06 plays 1400/30, 1550/100 and 1700/300,
    # winning the first and losing the others, in one rating period with tau 0.5.
    player = Glicko(1500, 200, 0.06)
    results = [
        (Glicko(1400, 30, 0.06), 1.0),
        (Glicko(1550, 100, 0.06), 0.0),
        (Glicko(1700, 300, 0.06), 0.0),
    ]
    after = update(player, results, tau=0.5, periods=1)
    assert after.rating == pytest.approx(1464.06, abs=0.01)
    assert after.rd == pytest.approx(151.52, abs=0.01)
    assert after.volatility == pytest.approx(0.05999, abs=0.00001)


# (white, black, white's score) -> (white after, black after): scalachess GlickoCalculatorTest,
# ratings to 0.005, deviations to 0.00005, volatilities to 1e-6 (1e-5 where it says so).
LICHESS_VECTORS = [
    (
        Glicko(1500, 350, 0.06),
        Glicko(1500, 350, 0.06),
        1.0,
        (1662.21, 290.2305, 0.0599993),
        (1337.79, 290.2305, 0.0599993),
    ),
    (
        Glicko(1500, 350, 0.06),
        Glicko(1500, 350, 0.06),
        0.0,
        (1337.79, 290.2305, 0.0599993),
        (1662.21, 290.2305, 0.0599993),
    ),
    (
        Glicko(1500, 350, 0.06),
        Glicko(1500, 350, 0.06),
        0.5,
        (1500.00, 290.2305, 0.0599977),
        (1500.00, 290.2305, 0.0599977),
    ),
    (
        Glicko(1400, 79, 0.06),
        Glicko(1550, 110, 0.065),
        1.0,
        (1422.63, 77.4956, 0.06),
        (1506.32, 105.8706, 0.065),
    ),
    (
        Glicko(1400, 79, 0.06),
        Glicko(1550, 110, 0.065),
        0.0,
        (1389.99, 77.4956, 0.06),
        (1568.90, 105.8706, 0.065),
    ),
    (
        Glicko(1400, 79, 0.06),
        Glicko(1550, 110, 0.065),
        0.5,
        (1406.31, 77.4956, 0.06),
        (1537.61, 105.8706, 0.065),
    ),
    (
        Glicko(1200, 60, 0.053),
        Glicko(1850, 200, 0.062),
        1.0,
        (1216.73, 59.9006, 0.053013),
        (1635.99, 196.9873, 0.062028),
    ),
    (
        Glicko(1200, 60, 0.053),
        Glicko(1850, 200, 0.062),
        0.0,
        (1199.29, 59.9006, 0.052999),
        (1855.42, 196.9873, 0.061999),
    ),
    (
        Glicko(1200, 60, 0.053),
        Glicko(1850, 200, 0.062),
        0.5,
        (1208.01, 59.9006, 0.053002),
        (1745.71, 196.9873, 0.062006),
    ),
]


@pytest.mark.parametrize(("white", "black", "score", "white_after", "black_after"), LICHESS_VECTORS)
def test_lichess_vectors(
    white: Glicko,
    black: Glicko,
    score: float,
    white_after: tuple[float, float, float],
    black_after: tuple[float, float, float],
) -> None:
    new_white, new_black = game_update(white, black, score, TAU)
    for got, (rating, rd, volatility) in ((new_white, white_after), (new_black, black_after)):
        assert got.rating == pytest.approx(rating, abs=0.005)
        assert got.rd == pytest.approx(rd, abs=0.00005)
        assert got.volatility == pytest.approx(volatility, abs=0.00001)


@pytest.mark.parametrize(
    ("score", "white", "black", "volatility"),
    [(1.0, 1741, 1258, 0.0899983), (0.0, 1258, 1741, 0.0899983), (0.5, 1500, 1500, 0.0899954)],
)
def test_lichess_vectors_from_the_default_rating(
    score: float, white: int, black: int, volatility: float
) -> None:
    # scalachess RatingCalculatorTest: two new players (1500, RD 500, volatility 0.09).
    new_white, new_black = game_update(DEFAULT, DEFAULT, score, TAU)
    assert new_white.rating == pytest.approx(white, abs=1)
    assert new_black.rating == pytest.approx(black, abs=1)
    assert new_white.rd == pytest.approx(396, abs=1) and new_black.rd == new_white.rd
    assert new_white.volatility == pytest.approx(volatility, abs=0.0000001)
