"""Fit the analysis's model of winning chances (app/analysis/chances.py) on master games.

Usage: .venv/bin/python bench/analysis_fit.py [--nodes 20000] [--from-ply 6] [--workers 2]
       [--data tests/data] [--collections OCA_2.0.pdn ...]

Every position of every game of the master collections (from ply ``--from-ply`` on; composed
problems such as Gould's are left out: their results are the composer's, not a game's) is
searched at ``--nodes`` nodes; its evaluation (centipieces from Black's side; forced wins left
out) is paired with the game's result for Black (1, ½, 0). Two fits by maximum likelihood:

- ``K`` of lichess's chances ``2 / (1 + exp(-K * cp)) - 1``, read as Black's expected score
  ``(1 + chances) / 2`` against the result (the score's cross-entropy);
- an ordered logistic for win, draw and loss: Black wins with ``σ(s * (cp - m))``, loses with
  ``σ(s * (-cp - m))``, draws otherwise (``WDL_SLOPE`` s and ``DRAW_MARGIN`` m).

With ``--engine-games N``, N games of the computer's levels 2-5 against each other (each side
a level at random, from a 3-move ballot opening) are played first and their positions added:
the stand-in for the archive of a server in use (players' games, decisive more often than
masters'), which this machine does not have.

Prints the counts, both fits with their log-likelihoods, and a calibration table (evaluation
bands: positions, the mean score observed, the mean predicted, and the observed W/D/L).
"""

from __future__ import annotations

import argparse
import math
import multiprocessing
import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path

from app.analysis.game import evaluate, limits
from app.rules import Color, Game, Position, Result
from app.rules.pdn import read_games

DATA = Path(__file__).resolve().parents[1] / "tests" / "data"
COLLECTIONS = (
    "OCA_2.0.pdn",
    "Principles_of_Strategy.pdn",
    "inferno.pdn",
    "borderclassics.pdn",
)
SCORE = {Result.BLACK_WINS: 1.0, Result.DRAW: 0.5, Result.WHITE_WINS: 0.0}


def game_samples(
    job: tuple[str, list[str], str | None, float, int, int],
) -> list[tuple[int, float]]:
    """(cp from Black's side, Black's score) for each position of one game."""
    variant, moves, fen, score, nodes, from_ply = job
    budget = limits(nodes)
    game = Game(variant, fen, automatic_draws=False)
    history: list[Position] = []
    found = []
    for index in range(len(moves) + 1):
        if index >= from_ply and game.position.has_legal_moves():
            value = evaluate(game, history, budget).value
            if value.win_in is None:
                found.append((value.cp, score))
        if index == len(moves):
            break
        history.append(game.position)
        game.play(moves[index])
    return found


MAX_PLIES = 200  # an engine game still going here is adjudicated a draw


def engine_game(seed: int) -> tuple[list[str], str, float]:
    """A game between two random levels of 2-5 from a random ballot opening: (moves, start FEN,
    Black's score)."""
    import random

    from app.engine import level_limits, search_position
    from app.tournaments.ballot import DECK

    rng = random.Random(seed)
    opening = rng.choice(DECK)
    levels = {Color.BLACK: rng.randint(2, 5), Color.WHITE: rng.randint(2, 5)}
    game = Game("english", opening.fen)
    history: list[Position] = []
    while game.outcome() is None and game.ply < MAX_PLIES:
        limits = level_limits(levels[game.position.turn], seed=rng.randrange(1 << 30))
        move = search_position(game.position, replace(limits, book=False), history).move
        history.append(game.position)
        game.play(move)
    outcome = game.outcome()
    winner = outcome.winner if outcome is not None else None
    score = 0.5 if winner is None else 1.0 if winner is Color.BLACK else 0.0
    return [str(m) for m in game.moves], opening.fen, score


def jobs(
    data: Path, collections: Sequence[str], nodes: int, from_ply: int
) -> list[tuple[str, list[str], str | None, float, int, int]]:
    out = []
    for name in collections:
        with (data / name).open(encoding="utf-8", errors="replace") as handle:
            for record in read_games(handle):
                if record.error or record.result not in SCORE:
                    continue
                try:
                    variant = record.game().variant.name
                except ValueError:  # another game, or a record that does not replay
                    continue
                out.append(
                    (variant, record.moves, record.fen, SCORE[record.result], nodes, from_ply)
                )
    return out


def sigmoid(x: float) -> float:
    return 1 / (1 + math.exp(-max(-60.0, min(60.0, x))))


def score_loss(k: float, samples: Sequence[tuple[int, float]]) -> float:
    """Mean cross-entropy of the result against σ(k·cp)."""
    total = 0.0
    for cp, score in samples:
        p = min(1 - 1e-9, max(1e-9, sigmoid(k * cp)))
        total -= score * math.log(p) + (1 - score) * math.log(1 - p)
    return total / len(samples)


def wdl_loss(slope: float, margin: float, samples: Sequence[tuple[int, float]]) -> float:
    total = 0.0
    for cp, score in samples:
        win = sigmoid(slope * (cp - margin))
        loss = sigmoid(slope * (-cp - margin))
        p = win if score == 1.0 else loss if score == 0.0 else 1 - win - loss
        total -= math.log(max(1e-9, p))
    return total / len(samples)


def golden(f: Callable[[float], float], lo: float, hi: float, steps: int = 60) -> float:
    ratio = (math.sqrt(5) - 1) / 2
    a, b = lo, hi
    for _ in range(steps):
        c, d = b - ratio * (b - a), a + ratio * (b - a)
        if f(c) < f(d):
            b = d
        else:
            a = c
    return (a + b) / 2


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--nodes", type=int, default=20_000)
    parser.add_argument("--from-ply", type=int, default=6)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--collections", nargs="*", default=list(COLLECTIONS))
    parser.add_argument("--engine-games", type=int, default=0, help="archive stand-in games")
    args = parser.parse_args()

    todo = jobs(args.data, args.collections, args.nodes, args.from_ply)
    started = time.perf_counter()
    with multiprocessing.Pool(args.workers) as pool:
        if args.engine_games:
            played = pool.map(engine_game, range(args.engine_games))
            decided = sum(1 for _, _, score in played if score != 0.5)
            print(
                f"{len(played)} engine games played ({decided} decisive), "
                f"{time.perf_counter() - started:.0f} s",
                flush=True,
            )
            todo += [("english", moves, fen, score, args.nodes, 0) for moves, fen, score in played]
        samples = [s for found in pool.imap_unordered(game_samples, todo, 4) for s in found]
    spent = time.perf_counter() - started
    results = {1.0: 0, 0.5: 0, 0.0: 0}
    for _, score in samples:
        results[score] += 1
    print(f"{len(todo)} games, {len(samples)} positions (forced wins left out), {spent:.0f} s")
    print(
        f"results of the positions: Black won {results[1.0]}, drawn {results[0.5]}, "
        f"White won {results[0.0]}"
    )

    k = golden(lambda x: score_loss(x, samples), 0.0001, 0.05)
    print(
        f"K = {k:.5f} per centipiece (loss {score_loss(k, samples):.4f}; "
        f"lichess's chess value 0.00368: {score_loss(0.00368, samples):.4f}; "
        f"K = 0: {score_loss(0.0, samples):.4f})"
    )
    best = (math.inf, 0.0, 0.0)
    for margin in range(0, 401, 10):
        slope = golden(lambda s, m=margin: wdl_loss(s, m, samples), 0.0001, 0.05, 40)
        loss = wdl_loss(slope, margin, samples)
        if loss < best[0]:
            best = (loss, slope, float(margin))
    loss, slope, margin = best
    print(f"WDL_SLOPE = {slope:.5f}, DRAW_MARGIN = {margin:.0f} (loss {loss:.4f})")

    print("band (cp)       positions  score seen  predicted   W / D / L seen")
    bands = [
        (-10_000, -300),
        (-300, -150),
        (-150, -75),
        (-75, -25),
        (-25, 25),
        (25, 75),
        (75, 150),
        (150, 300),
        (300, 10_000),
    ]
    for lo, hi in bands:
        inside = [(cp, s) for cp, s in samples if lo <= cp < hi]
        if not inside:
            continue
        seen = sum(s for _, s in inside) / len(inside)
        predicted = sum(sigmoid(k * cp) for cp, _ in inside) / len(inside)
        w = sum(1 for _, s in inside if s == 1.0) / len(inside)
        d = sum(1 for _, s in inside if s == 0.5) / len(inside)
        lo_text = "-inf" if lo == -10_000 else str(lo)
        hi_text = "inf" if hi == 10_000 else str(hi)
        print(
            f"[{lo_text:>5}, {hi_text:>4})  {len(inside):>9}  {seen:>10.3f}  {predicted:>9.3f}"
            f"   {w:.2f} / {d:.2f} / {1 - w - d:.2f}"
        )


if __name__ == "__main__":
    main()
