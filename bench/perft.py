"""Speed of the rules engine: perft leaves/s per variant, pydraughts for scale, move validation.

Usage: .venv/bin/python bench/perft.py [--depth 8] [--pydraughts-depth 5] [--repeat 3]

Prints figures only; docs/benchmarks.md records them. Each perft is run ``--repeat`` times and
the best and median reported, because other processes share the machine.
"""

from __future__ import annotations

import argparse
import random
import statistics
import time

from app.rules import Game, get_variant
from app.rules.perft import perft


def timed_perft(variant: str, depth: int, repeat: int) -> tuple[int, list[float]]:
    position = get_variant(variant).position()
    times = []
    leaves = 0
    for _ in range(repeat):
        start = time.perf_counter()
        leaves = perft(position, depth)
        times.append(time.perf_counter() - start)
    return leaves, times


def pydraughts_perft(depth: int) -> tuple[int, float]:
    from draughts import Board

    def count(board: Board, depth: int) -> int:
        if depth == 0:
            return 1
        total = 0
        for move in board.legal_moves():
            board.push(move)
            total += count(board, depth - 1)
            board.pop()
        return total

    start = time.perf_counter()
    leaves = count(Board(variant="english"), depth)
    return leaves, time.perf_counter() - start


def move_validation(variant: str, games: int = 40, seed: int = 7) -> list[float]:
    """Microseconds per ``Game.play(text)`` (parse, legality, apply, outcome) over random games."""
    rng = random.Random(seed)
    records = []
    for _ in range(games):
        game = Game(variant)
        while game.outcome() is None and game.ply < 120:
            game.play(rng.choice(game.legal_moves()))
        records.append([str(m) for m in game.moves])
    samples = []
    for texts in records:
        game = Game(variant)
        for text in texts:
            start = time.perf_counter_ns()
            game.play(text)
            samples.append((time.perf_counter_ns() - start) / 1000)
    return samples


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--depth", type=int, default=8)
    parser.add_argument("--pydraughts-depth", type=int, default=5)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()

    rates = {}
    for variant in ("english", "pool"):
        leaves, times = timed_perft(variant, args.depth, args.repeat)
        best, median = min(times), statistics.median(times)
        rates[variant] = leaves / best
        print(
            f"{variant:8} perft({args.depth}) = {leaves:,} leaves: best {best:.3f} s "
            f"({leaves / best:,.0f} leaves/s), median {median:.3f} s ({leaves / median:,.0f}/s)"
        )
    print(f"pool/english time ratio: {rates['english'] / rates['pool']:.2f}")

    leaves, seconds = pydraughts_perft(args.pydraughts_depth)
    theirs = leaves / seconds
    print(
        f"pydraughts english perft({args.pydraughts_depth}) = {leaves:,} leaves: {seconds:.2f} s "
        f"({theirs:,.0f} leaves/s)"
    )
    print(f"speed ratio english vs pydraughts: {rates['english'] / theirs:,.0f}x")

    for variant in ("english", "pool"):
        samples = sorted(move_validation(variant))
        median, p90 = statistics.median(samples), samples[int(len(samples) * 0.9)]
        print(
            f"{variant:8} validate one move (Game.play): median {median:.1f} us, "
            f"p90 {p90:.1f} us over {len(samples):,} moves"
        )


if __name__ == "__main__":
    main()
