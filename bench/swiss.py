"""CPU time of a Swiss round, per round, for every colour pattern and field size: the bound of
docs/tournaments.md (at most 2 s of CPU a round for 1,000 players, whatever the colours).

Usage: .venv/bin/python bench/swiss.py [--sizes 100 600 1000] [--rounds 10] [--seed 1]
       [--patterns same alternating random no-shows]

Each field (ratings from N(1500, 300)) is paired round after round by `pair_round`, each round
timed with `time.process_time` (CPU seconds of this process, so other load on the machine
matters little). Between rounds:

- same: every player has had Black in every round so far (every pair wants the same colour,
  and from round 3 absolutely: the matching's worst case), results drawn from the ratings;
- alternating: every player's colours alternated, half of them from Black, half from White;
- random: each player's colour of each round drawn at random;
- no-shows: the colours the pairing gave, and Black loses every game (on time, not having
  moved): each score group's colour history is then one and the same, the reported case.

In the first three the opponents and scores are the pairing's, the colours those of the
pattern. Printed: each pattern and size's CPU seconds per round, its median and worst.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from app.tournaments.swiss import Colour, SwissPlayer, pair_round  # noqa: E402

PATTERNS = ("same", "alternating", "random", "no-shows")
TARGET_S = 2.0


def colour_of(
    pattern: str, player: int, round_no: int, given: Colour, rng: random.Random
) -> Colour:
    """The colour `player` is noted to have had in round `round_no` (0-based)."""
    if pattern == "same":
        return "black"
    if pattern == "alternating":
        return "black" if (player + round_no) % 2 == 0 else "white"
    if pattern == "random":
        return "black" if rng.random() < 0.5 else "white"
    return given


def black_scores(
    pattern: str, black: int, white: int, ratings: dict[int, int], rng: random.Random
) -> int:
    """Black's half points: nothing against a no-show pattern, else drawn from the ratings (a
    draw one game in four)."""
    if pattern == "no-shows":
        return 0
    expected = 1 / (1 + 10 ** ((ratings[white] - ratings[black]) / 400))
    roll = rng.random()
    return 1 if roll < 0.25 else (2 if roll < 0.25 + 0.75 * expected else 0)


def run(pattern: str, size: int, rounds: int, seed: int) -> list[float]:
    """CPU seconds of each round's pairing."""
    rng = random.Random(seed)
    ratings = {i: int(rng.gauss(1500, 300)) for i in range(size)}
    points = dict.fromkeys(ratings, 0)
    opponents: dict[int, set[int]] = {i: set() for i in ratings}
    colours: dict[int, list[Colour | None]] = {i: [] for i in ratings}
    byes: set[int] = set()
    times = []
    for round_no in range(rounds):
        field = [
            SwissPlayer(
                i, ratings[i], points[i], frozenset(opponents[i]), tuple(colours[i]), i in byes
            )
            for i in ratings
        ]
        start = time.process_time()
        paired = pair_round(field)
        times.append(time.process_time() - start)
        for black, white in paired.pairs:
            result = black_scores(pattern, black, white, ratings, rng)
            points[black] += result
            points[white] += 2 - result
            opponents[black].add(white)
            opponents[white].add(black)
            colours[black].append(colour_of(pattern, black, round_no, "black", rng))
            colours[white].append(colour_of(pattern, white, round_no, "white", rng))
        if paired.bye is not None:
            points[paired.bye] += 2
            byes.add(paired.bye)
            colours[paired.bye].append(None)
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[100, 600, 1000])
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--patterns", nargs="+", choices=PATTERNS, default=list(PATTERNS))
    args = parser.parse_args()
    print(f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}, {os.cpu_count()} CPUs")
    worst_all = 0.0
    for size in args.sizes:
        for pattern in args.patterns:
            times = run(pattern, size, args.rounds, args.seed)
            worst = max(times)
            worst_all = max(worst_all, worst)
            rounds = " ".join(f"{t:.2f}" for t in times)
            print(
                f"{size:5} {pattern:12} median {statistics.median(times):5.2f} s  worst "
                f"{worst:5.2f} s (round {times.index(worst) + 1})  per round: {rounds}",
                flush=True,
            )
    verdict = "met" if worst_all <= TARGET_S else "MISSED"
    print(f"worst round {worst_all:.2f} s CPU (target {TARGET_S:.0f} s: {verdict})")
    print(f"load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
