"""Figures of the game analysis (app/analysis, issue 34) for docs/benchmarks.md.

Usage: .venv/bin/python bench/analysis.py [speed] [masters] [giveaways] [--nodes N]
       [--workers 2] [--giveaways 150]

- speed: a 60-ply master game analysed at the budget in this process: CPU seconds (one core)
  and wall seconds (goal: at most 30 s of one core at the default budget).
- masters: the master moves of plies 24-80 of the master collections (OCA 2.0, Principles of
  Strategy, Inferno, Border classics): the share labelled mistake or blunder (goal ≤ 10 %).
- giveaways: moves that give a man away for nothing, from the positions of plies 10-60 of the
  same games (every other one): a move that does not capture, after which a material minimax
  of 6 plies (captures played out, as bench/shots.py) leaves its side a man down, in a
  position where the best move for material keeps the balance; the share labelled blunder
  (goal ≥ 90 %).

Without a figure named, all three. Prints one line per figure, with the load average.
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import sys
import time
from pathlib import Path

from app.analysis import chances
from app.analysis.game import analyse, evaluate, limits, value_at
from app.rules import Color, Game, Position, get_variant
from app.rules.pdn import read_games

sys.path.insert(0, str(Path(__file__).resolve().parent))
from shots import WON, balance, minimax  # noqa: E402  (bench/ is not a package: its sibling)

DATA = Path(__file__).resolve().parents[1] / "tests" / "data"
COLLECTIONS = ("OCA_2.0.pdn", "Principles_of_Strategy.pdn", "inferno.pdn", "borderclassics.pdn")
FIRST, LAST = 24, 80  # the middle game's plies


def master_games() -> list[tuple[list[str], str | None]]:
    games = []
    for name in COLLECTIONS:
        with (DATA / name).open(encoding="utf-8", errors="replace") as handle:
            for record in read_games(handle):
                if record.error:
                    continue
                try:
                    record.game()
                except ValueError:
                    continue
                games.append((record.moves, record.fen))
    return games


def middle_labels(job: tuple[list[str], str | None, int]) -> list[str | None]:
    """The labels of plies FIRST..LAST of one game."""
    moves, fen, nodes = job
    last = min(LAST, len(moves))
    if last < FIRST:
        return []
    budget = limits(nodes)
    values = {p: value_at("english", moves, fen, p, budget) for p in range(FIRST - 1, last + 1)}
    game = Game("english", fen, automatic_draws=False)
    labels = []
    for index, text in enumerate(moves[:last]):
        mover = game.position.turn
        played = str(game.play(text))
        if index + 1 < FIRST:
            continue
        before, after = values[index], values[index + 1]
        cost = chances.label(before.value.for_side(mover), after.value.for_side(mover))
        labels.append(None if before.best == played else cost)
    return labels


Pair = tuple[chances.Eval, chances.Eval]


def giveaways_in(job: tuple[list[str], str | None, int]) -> list[Pair]:
    """The moves that give a man away for nothing in one game's positions: each as its mover's
    values before and after it (from the mover's side: Black's, or turned round)."""
    moves, fen, nodes = job
    budget = limits(nodes)
    game = Game("english", fen, automatic_draws=False)
    history: list[Position] = []
    found: list[Pair] = []
    for ply, text in enumerate(moves[:60]):
        position = game.position
        if ply >= 10 and ply % 2 == 0 and position.legal_moves():
            now = balance(position)
            after = {
                str(m): -minimax(position.play(m), 5, -WON - 1, WON + 1)
                for m in position.legal_moves()
            }
            if max(after.values()) == now:
                lost = [
                    m
                    for m in position.legal_moves()
                    if not m.is_capture and after[str(m)] == now - 1
                ]
                if lost:
                    before = evaluate(game, history, budget)
                    for move in lost[:1]:
                        trial = Game("english", position.fen(), automatic_draws=False)
                        trial.play(move)
                        value = evaluate(trial, [*history, position], budget)
                        found.append((mine(before.value, position), mine(value.value, position)))
        history.append(position)
        game.play(text)
    return found


def mine(value: chances.Eval, position: Position) -> chances.Eval:
    """`value` from the side to move in `position`."""
    if position.turn is Color.BLACK:
        return value
    if value.win_in is not None:
        return chances.Eval(win_in=value.win_in, black_wins=not value.black_wins)
    return chances.Eval(-value.cp)


def speed(nodes: int) -> None:
    games = [g for g in master_games() if len(g[0]) >= 60]
    moves, fen = games[0]
    cpu, wall = time.process_time(), time.perf_counter()
    analyse("english", moves[:60], fen, limits(nodes))
    cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    print(f"speed: a 60-ply game at {nodes:,} nodes a position: {cpu:.1f} s CPU, {wall:.1f} s wall")


def masters(nodes: int, workers: int) -> None:
    jobs = [(moves, fen, nodes) for moves, fen in master_games()]
    with multiprocessing.Pool(workers) as pool:
        labels = [label for found in pool.imap_unordered(middle_labels, jobs) for label in found]
    costly = sum(1 for label in labels if label in ("mistake", "blunder"))
    inaccurate = sum(1 for label in labels if label == "inaccuracy")
    print(
        f"masters: {len(labels)} moves of plies {FIRST}-{LAST}, {costly} mistakes or blunders "
        f"({100 * costly / max(1, len(labels)):.1f} %), {inaccurate} inaccuracies "
        f"({100 * inaccurate / max(1, len(labels)):.1f} %)"
    )


def giveaways(nodes: int, workers: int, wanted: int) -> None:
    jobs = [(moves, fen, nodes) for moves, fen in master_games()]
    pairs: list[Pair] = []
    with multiprocessing.Pool(workers) as pool:
        for found in pool.imap_unordered(giveaways_in, jobs):
            pairs += found
            if len(pairs) >= wanted:
                pool.terminate()
                break
    labels = [chances.label(before.chances(), after.chances()) for before, after in pairs]
    drops = sorted(
        after.cp - before.cp
        for before, after in pairs
        if before.win_in is None and after.win_in is None
    )
    if drops:
        print(f"giveaways: the evaluation's fall, median {drops[len(drops) // 2]} centipieces")
    counts = {label: labels.count(label) for label in ("blunder", "mistake", "inaccuracy", None)}
    print(
        f"giveaways: {len(labels)} moves that give a man away for nothing: "
        f"{counts['blunder']} blunders ({100 * counts['blunder'] / max(1, len(labels)):.1f} %), "
        f"{counts['mistake']} mistakes, {counts['inaccuracy']} inaccuracies, "
        f"{counts[None]} unlabelled"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("figures", nargs="*", help="speed, masters, giveaways (default: all)")
    parser.add_argument("--nodes", type=int, default=100_000)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--giveaways", type=int, default=150)
    args = parser.parse_args()
    figures = args.figures or ["speed", "masters", "giveaways"]
    unknown = set(figures) - {"speed", "masters", "giveaways"}
    if unknown:
        parser.error(f"unknown figures: {', '.join(sorted(unknown))}")
    print(f"load average before: {os.getloadavg()[0]:.2f}", flush=True)
    get_variant("english")
    if "speed" in figures:
        speed(args.nodes)
    if "masters" in figures:
        masters(args.nodes, args.workers)
    if "giveaways" in figures:
        giveaways(args.nodes, args.workers, args.giveaways)
    print(f"load average after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
