"""The Glicko-2 update of two players after one game (Glickman, "Example of the Glicko-2
system", 2022, steps 2-8), as lichess computes it (scalachess `glicko.impl.RatingCalculator`):

- each game is a rating period of its own with one result;
- step 6 adds no rating period for the game itself (lichess's `skipDeviationIncrease`): the RD's
  growth while a player was idle is applied before, from the time since their last game
  (`limits.live_rd`);
- step 5's volatility is found with the Illinois algorithm to within 1e-6, as in the paper.

Written here rather than taken from a package: the maths is forty lines, and the published
Python packages follow older versions of the paper (a different iteration for step 5) or keep
state in mutable objects; ours is checked against the paper's worked example and lichess's
test vectors (tests/ratings).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

SCALE = 173.7178  # Glicko-2's scale factor, 400 / ln(10)
BASE = 1500.0
CONVERGENCE = 1e-6
MAX_ITERATIONS = 1000


@dataclass(frozen=True, slots=True)
class Glicko:
    """A rating on the Glicko scale: rating, rating deviation (RD), volatility."""

    rating: float
    rd: float
    volatility: float


def _g(phi: float) -> float:
    return 1.0 / math.sqrt(1.0 + 3.0 * phi * phi / (math.pi * math.pi))


def _expected(mu: float, mu_j: float, phi_j: float) -> float:
    return 1.0 / (1.0 + math.exp(-_g(phi_j) * (mu - mu_j)))


def _volatility(phi: float, sigma: float, delta: float, v: float, tau: float) -> float:
    """Step 5: the new volatility, by the Illinois algorithm."""
    a = math.log(sigma * sigma)

    def f(x: float) -> float:
        ex = math.exp(x)
        return ex * (delta * delta - phi * phi - v - ex) / (2.0 * (phi * phi + v + ex) ** 2) - (
            x - a
        ) / (tau * tau)

    big_a = a
    if delta * delta > phi * phi + v:
        big_b = math.log(delta * delta - phi * phi - v)
    else:
        k = 1
        while f(a - k * tau) < 0:
            k += 1
        big_b = a - k * tau
    f_a, f_b = f(big_a), f(big_b)
    for _ in range(MAX_ITERATIONS):
        if abs(big_b - big_a) <= CONVERGENCE:
            break
        big_c = big_a + (big_a - big_b) * f_a / (f_b - f_a)
        f_c = f(big_c)
        if f_c * f_b <= 0:
            big_a, f_a = big_b, f_b
        else:
            f_a /= 2.0
        big_b, f_b = big_c, f_c
    else:
        raise ArithmeticError("the Glicko-2 volatility did not converge")
    return math.exp(big_a / 2.0)


def update(
    player: Glicko, results: list[tuple[Glicko, float]], tau: float, periods: float = 0.0
) -> Glicko:
    """`player` after one rating period with `results`: (opponent, score 1, 0.5 or 0) pairs.
    `periods`: rating periods added to the RD in step 6 (lichess: none, see the module)."""
    mu = (player.rating - BASE) / SCALE
    phi = player.rd / SCALE
    sigma = player.volatility
    if not results:
        return Glicko(player.rating, SCALE * math.sqrt(phi * phi + periods * sigma * sigma), sigma)
    v_inverse = 0.0
    outcome = 0.0
    for opponent, score in results:
        mu_j = (opponent.rating - BASE) / SCALE
        phi_j = opponent.rd / SCALE
        e = _expected(mu, mu_j, phi_j)
        v_inverse += _g(phi_j) ** 2 * e * (1.0 - e)
        outcome += _g(phi_j) * (score - e)
    v = 1.0 / v_inverse
    delta = v * outcome
    new_sigma = _volatility(phi, sigma, delta, v, tau)
    phi_star = math.sqrt(phi * phi + periods * new_sigma * new_sigma)
    new_phi = 1.0 / math.sqrt(1.0 / (phi_star * phi_star) + 1.0 / v)
    new_mu = mu + new_phi * new_phi * outcome
    return Glicko(BASE + SCALE * new_mu, SCALE * new_phi, new_sigma)


def game_update(first: Glicko, second: Glicko, score: float, tau: float) -> tuple[Glicko, Glicko]:
    """Both players after one game; `score` is the first's (1 win, 0.5 draw, 0 loss). Each is
    computed from the other's rating before the game."""
    return (
        update(first, [(second, score)], tau),
        update(second, [(first, 1.0 - score)], tau),
    )
