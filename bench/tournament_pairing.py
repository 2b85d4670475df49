"""CPU time of tournament pairing: one arena wave and one Swiss round, as the issue's figures
ask (a 1,000-player wave in at most 1 s of CPU, a 250-player Swiss round in at most 2 s).

Usage: .venv/bin/python bench/tournament_pairing.py [--players 1000] [--swiss 250]
       [--rounds 4] [--repeat 5] [--seed 1]

- arena: ``--players`` waiting players, ratings drawn from N(1500, 300), ranks 1..N in a
  shuffled order, a third of them with a last opponent among their neighbours in rank, waiting
  since random times; one ``pair_wave``.
- Swiss: ``--swiss`` players with ratings from N(1500, 300) play ``--rounds`` rounds first
  (paired by ``pair_round``, results drawn from the rating difference, a draw one game in
  four), so that scores, colours and past opponents differ; then the next round is paired.

Each measure is ``time.process_time`` (CPU seconds of this process, so other load on the machine
matters little), repeated ``--repeat`` times, the median and the worst printed.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from app.tournaments.arena import ArenaPlayer, pair_wave  # noqa: E402
from app.tournaments.swiss import Colour, SwissPlayer, pair_round  # noqa: E402


def arena_players(count: int, rng: random.Random) -> list[ArenaPlayer]:
    ranks = list(range(1, count + 1))
    rng.shuffle(ranks)
    by_rank = {rank: player for player, rank in enumerate(ranks)}
    players = []
    for player, rank in enumerate(ranks):
        last = None
        if rng.random() < 1 / 3:
            last = by_rank.get(rank + rng.choice((-2, -1, 1, 2)))
        players.append(
            ArenaPlayer(player, int(rng.gauss(1500, 300)), rank, last, rng.uniform(0, 60))
        )
    return players


def swiss_field(count: int, rounds: int, rng: random.Random) -> tuple[list[SwissPlayer], float]:
    """The players after ``rounds`` rounds, and the worst CPU seconds one of them took."""
    ratings = {i: int(rng.gauss(1500, 300)) for i in range(count)}
    points = dict.fromkeys(ratings, 0)
    opponents: dict[int, set[int]] = {i: set() for i in ratings}
    colours: dict[int, list[Colour | None]] = {i: [] for i in ratings}
    byes: set[int] = set()
    worst = 0.0

    def players() -> list[SwissPlayer]:
        return [
            SwissPlayer(
                i, ratings[i], points[i], frozenset(opponents[i]), tuple(colours[i]), i in byes
            )
            for i in ratings
        ]

    for _ in range(rounds):
        start = time.process_time()
        round_ = pair_round(players())
        worst = max(worst, time.process_time() - start)
        for black, white in round_.pairs:
            expected = 1 / (1 + 10 ** ((ratings[white] - ratings[black]) / 400))
            roll = rng.random()
            result = 1 if roll < 0.25 else (2 if roll < 0.25 + 0.75 * expected else 0)
            points[black] += result
            points[white] += 2 - result
            opponents[black].add(white)
            opponents[white].add(black)
            colours[black].append("black")
            colours[white].append("white")
        if round_.bye is not None:
            points[round_.bye] += 2
            byes.add(round_.bye)
            colours[round_.bye].append(None)
    return players(), worst


def measure(work: Callable[[], object], repeat: int) -> list[float]:
    times = []
    for _ in range(repeat):
        start = time.process_time()
        work()
        times.append(time.process_time() - start)
    return times


def report(label: str, times: list[float], target: float) -> None:
    median, worst = statistics.median(times), max(times)
    verdict = "met" if worst <= target else "MISSED"
    print(
        f"{label:44} median {median:6.3f} s  worst {worst:6.3f} s CPU"
        f"  (target {target:.0f} s: {verdict})"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--players", type=int, default=1000, help="waiting arena players")
    parser.add_argument("--swiss", type=int, default=250, help="Swiss players")
    parser.add_argument("--rounds", type=int, default=4, help="Swiss rounds played first")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    rng = random.Random(args.seed)

    waiting = arena_players(args.players, rng)
    pairs = pair_wave(waiting)
    times = measure(lambda: pair_wave(waiting), args.repeat)
    report(f"arena wave, {args.players} waiting ({len(pairs)} pairs)", times, 1)

    field, worst_played = swiss_field(args.swiss, args.rounds, rng)
    round_ = pair_round(field)
    times = measure(lambda: pair_round(field), args.repeat)
    label = f"Swiss round {args.rounds + 1}, {args.swiss} players ({len(round_.pairs)} pairs)"
    report(label, times, 2)
    print(f"{'  (worst of the rounds played before it)':44} {worst_played:6.3f} s CPU")


if __name__ == "__main__":
    main()
