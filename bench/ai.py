"""Strength and speed of the computer opponent (app/engine): prints figures for docs/benchmarks.md.

Usage: .venv/bin/python bench/ai.py [speed] [ladder] [agreement] [--games N] [--positions N]
       [--variant english|pool] [--pairs 2-1,8-7] [--workers 2] [--agreement-ms 1000]
       [--agreement-depth D]

- speed: nodes/s (by the wall clock and by CPU time) and depth reached in 1 s from the start and
  from middle-game positions, both variants, for the engine and for the calibration baseline (a
  material-only alpha-beta).
- ladder: each level against the one below and level 8 against level 1 (or the --pairs given),
  N games per pair from the 3-move ballots (each ballot twice, colours swapped), in a process
  pool; each pair's score comes with its standard error.
- agreement: how often the engine (level 8's search, after the book) picks the master's move on
  non-forced positions of plies 24-80 of the master collections, next to the baseline; by
  movetime, or with --agreement-depth both to that fixed depth (the same on any load).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import multiprocessing
import os
import statistics
import subprocess
import time
from collections.abc import Sequence
from pathlib import Path

from app.engine import Limits, level_limits, search_position
from app.engine.book import book_moves
from app.engine.search import node_of
from app.rules import Game, Position, get_variant
from app.rules.board import FULL
from app.rules.pdn import read_games
from app.rules.record import replay_record

DATA = Path(__file__).resolve().parents[1] / "tests" / "data"
COLLECTIONS = ("OCA_2.0.pdn", "Principles_of_Strategy.pdn", "inferno.pdn")
BALLOTS = Path(__file__).resolve().parent / "ballots"
MAX_PLIES = 200
ADJUDICATE = 500
"""Both sides' searches agree that one of them is five men up: the game is adjudicated won."""
DRAWN_AFTER, DRAWN_PLIES, DRAWN_SCORE = 80, 20, 10
"""From ply 80, when the last 20 searches of two strong levels (5-8) all scored the game within
a tenth of a man of level, it is adjudicated drawn (as engine matches adjudicate dead draws)."""


class _Stop(Exception):
    pass


def baseline(position: Position, movetime_ms: int, max_depth: int = 59) -> tuple[str, int, int]:
    """The calibration line: iterative deepening negamax alpha-beta over the rules' internals,
    material only (king 1.3 men), captures played out at depth 0. (move, depth, nodes)."""
    generate = position.variant._generate
    deadline = time.perf_counter() + movetime_ms / 1000
    nodes = 0

    def alphabeta(m: int, k: int, om: int, ok: int, black: bool, depth: int, a: int, b: int) -> int:
        nonlocal nodes
        nodes += 1
        if nodes & 1023 == 0 and time.perf_counter() > deadline:
            raise _Stop
        moves = generate(m, k, om | ok, FULL ^ (m | k | om | ok), black)
        if not moves:
            return -10_000
        if depth <= 0 and not moves[0][1]:
            return 100 * (m.bit_count() - om.bit_count()) + 130 * (k.bit_count() - ok.bit_count())
        crown = 0xF0000000 if black else 0xF
        for path, captured in moves:
            source, target = 1 << path[0], 1 << path[-1]
            if m & source:
                nm, nk = (m ^ source, k | target) if target & crown else (m ^ source | target, k)
            else:
                nm, nk = m, k ^ source ^ target
            score = -alphabeta(om & ~captured, ok & ~captured, nm, nk, not black, depth - 1, -b, -a)
            if score > a:
                a = score
                if a >= b:
                    break
        return a

    men, kings, opp_men, opp_kings, black = node_of(position)
    root = generate(
        men, kings, opp_men | opp_kings, FULL ^ (men | kings | opp_men | opp_kings), black
    )
    best, depth = root[0], 0
    try:
        for d in range(1, max_depth + 1):
            alpha, chosen = -100_000, root[0]
            for move in root:
                path, captured = move
                source, target = 1 << path[0], 1 << path[-1]
                crown = 0xF0000000 if black else 0xF
                if men & source:
                    nm, nk = (
                        (men ^ source, kings | target)
                        if target & crown
                        else (men ^ source | target, kings)
                    )
                else:
                    nm, nk = men, kings ^ source ^ target
                score = -alphabeta(
                    opp_men & ~captured,
                    opp_kings & ~captured,
                    nm,
                    nk,
                    not black,
                    d - 1,
                    -100_000,
                    -alpha,
                )
                if score > alpha:
                    alpha, chosen = score, move
            root.remove(chosen)
            root.insert(0, chosen)
            best, depth = chosen, d
    except _Stop:
        pass
    text = ("x" if best[1] else "-").join(str(i + 1) for i in best[0])
    return text, depth, nodes


# -- positions -------------------------------------------------------------------------------


def master_positions(name: str) -> list[tuple[Position, str, list[Position]]]:
    """(position, master's move, earlier positions) for non-forced positions at plies 24-80
    that are not in the book."""
    out = []
    with open(DATA / name, encoding="utf-8", errors="replace") as stream:
        records = list(read_games(stream))
    for record in records:
        if record.error or record.fen:
            continue
        replay = replay_record(record.variant(), record.moves)
        game = Game(record.variant())
        seen: list[Position] = []
        for ply, move in enumerate(replay.game.moves):
            position = game.position
            if 24 <= ply <= 80 and len(position.legal_moves()) > 1 and not book_moves(position):
                out.append((position, str(move), list(seen)))
            seen.append(position)
            try:
                game.play(move)
            except Exception:
                break
    return out


def middle_games(variant: str, count: int) -> list[Position]:
    """Middle-game positions: English from the master games at ply 30, pool from level-3
    self-play at ply 30 (no pool master games are public)."""
    if variant == "english":
        return [p for p, _, _ in master_positions("OCA_2.0.pdn")[::40]][:count]
    out = []
    for seed in range(count):
        game = Game(variant)
        while game.ply < 30 and game.outcome() is None:
            game.play(
                search_position(game.position, level_limits(3, seed=seed * 100 + game.ply)).move
            )
        if game.outcome() is None:
            out.append(game.position)
    return out


# -- speed -----------------------------------------------------------------------------------


def speed(movetime_ms: int) -> None:
    """Nodes per second by the wall clock (what a player waits for) and by the process's CPU
    time (what the code costs: the same on a crowded machine), engine and baseline one after
    the other in this process, and the depth each completes."""
    print(f"== speed: {movetime_ms} ms per position, nodes/s (wall clock; CPU time) and depth")
    print(
        "variant  positions  engine nps  (CPU)      depth   baseline nps  (CPU)      depth"
        "   engine/baseline (CPU)"
    )
    for variant in ("english", "pool"):
        for label, positions in (
            ("start", [get_variant(variant).position()]),
            ("middle", middle_games(variant, 6)),
        ):
            rows: list[tuple[float, ...]] = []
            for position in positions:
                cpu = time.process_time()
                result = search_position(position, Limits(movetime_ms=movetime_ms))
                engine_cpu = result.nodes / max(time.process_time() - cpu, 1e-6)
                start, cpu = time.perf_counter(), time.process_time()
                _, depth, nodes = baseline(position, movetime_ms)
                base_cpu = nodes / max(time.process_time() - cpu, 1e-6)
                rows.append(
                    (
                        result.nodes * 1000 / max(1, result.millis),
                        engine_cpu,
                        result.depth,
                        nodes / (time.perf_counter() - start),
                        base_cpu,
                        depth,
                        engine_cpu / base_cpu,
                    )
                )
            m = [statistics.median(column) for column in zip(*rows, strict=True)]
            print(
                f"{variant:8} {label:6} x{len(positions):<3} {m[0]:9,.0f} ({m[1]:9,.0f})  {m[2]:5}"
                f"   {m[3]:9,.0f} ({m[4]:9,.0f})  {m[5]:5}   {m[6]:.2f}"
            )


# -- ladder ----------------------------------------------------------------------------------


def ballots(variant: str) -> list[tuple[str, ...]]:
    """The 3-move ballots: every 3-ply opening whose depth-9 search score stays within a third
    of a man (the lopsided ones dropped, as the ACF deck drops the lost ones). Derived once and
    kept in bench/ballots/VARIANT.txt."""
    path = BALLOTS / f"{variant}.txt"
    if path.exists():
        return [tuple(line.split()) for line in path.read_text().splitlines() if line.strip()]
    rules = get_variant(variant)
    kept = []
    start = rules.position()
    for first in start.legal_moves():
        one = start.play(first)
        for second in one.legal_moves():
            two = one.play(second)
            for third in two.legal_moves():
                three = two.play(third)
                score = search_position(three, Limits(depth=9)).score
                if abs(score) <= 33:
                    kept.append((str(first), str(second), str(third)))
    BALLOTS.mkdir(exist_ok=True)
    path.write_text("".join(" ".join(b) + "\n" for b in kept))
    return kept


def play_game(job: tuple[str, tuple[str, ...], int, int, int]) -> tuple[int, int, int, str]:
    """One game from a ballot between two levels: (black's level, white's, plies, result).

    Each search's movetime is counted in this process's CPU time, so that the result does not
    depend on what else the machine runs (on an idle machine with a core per process the two
    clocks agree, as they do on the server)."""
    variant, ballot, black, white, seed = job
    game = Game(variant)
    for move in ballot:
        game.play(move)
    history: list[Position] = list()
    scores: list[int] = []
    result = "1/2-1/2"
    while game.outcome() is None and game.ply < MAX_PLIES:
        level = black if game.position.turn.value == "black" else white
        limits = dataclasses.replace(level_limits(level, seed=seed + game.ply), cpu_time=True)
        found = search_position(game.position, limits, history)
        history.append(game.position)
        game.play(found.move)
        scores.append(found.score if not found.book else 0)
        last = scores[-4:]
        if len(last) == 4 and all(
            (s >= ADJUDICATE if i % 2 == 0 else s <= -ADJUDICATE) for i, s in enumerate(last)
        ):
            # The side that moved 4 plies ago (and 2 plies ago) is winning by both searches.
            winner = game.position.turn  # after 4 plies the same side is to move again
            result = "1-0" if winner.value == "black" else "0-1"
            break
        quiet = scores[-DRAWN_PLIES:]
        if (
            game.ply >= DRAWN_AFTER
            and len(quiet) == DRAWN_PLIES
            and all(abs(s) <= DRAWN_SCORE for s in quiet)
            and min(black, white) >= 5
        ):
            break  # both strong searches have called it level for 20 plies: a draw
    outcome = game.outcome()
    if outcome is not None:
        result = outcome.result().value
    return black, white, game.ply, result


ALL_PAIRS = tuple((level, level - 1) for level in range(2, 9)) + ((8, 1),)


def parse_pairs(text: str) -> list[tuple[int, int]]:
    """ "2-1,8-7" -> [(2, 1), (8, 7)]; empty: every pair of the ladder."""
    if not text:
        return list(ALL_PAIRS)
    pairs = []
    for item in text.split(","):
        strong, weak = (int(n) for n in item.split("-"))
        pairs.append((strong, weak))
    return pairs


def ladder(
    variant: str,
    games: int,
    workers: int,
    pairs: Sequence[tuple[int, int]] = ALL_PAIRS,
    record: Path | None = None,
) -> None:
    """Play the pairs' games (those not yet in ``record``, a JSON-lines file each finished game
    is appended to, so that a stopped run goes on where it was) and print each pair's score."""
    deck = ballots(variant)
    done: dict[tuple[str, int, int, int], tuple[int, int, int, str]] = {}
    if record is not None and record.exists():
        for line in record.read_text().splitlines():
            row = json.loads(line)
            key = (row["variant"], row["strong"], row["weak"], row["n"])
            done[key] = (row["black"], row["white"], row["plies"], row["result"])
    jobs = []
    for strong, weak in pairs:
        for n in range(games):
            if (variant, strong, weak, n) in done:
                continue
            ballot = deck[(n // 2 * 7 + strong) % len(deck)]
            black, white = (strong, weak) if n % 2 == 0 else (weak, strong)
            jobs.append(((strong, weak, n), (variant, ballot, black, white, 1000 * n + strong)))
    print(
        f"== ladder {variant}: {games} games per pair, {len(deck)} ballots, {workers} workers, "
        f"{len(jobs)} to play"
    )
    code = subprocess.run(
        ["git", "describe", "--always", "--dirty"], capture_output=True, text=True, check=False
    ).stdout.strip()
    with multiprocessing.Pool(workers) as pool:
        played = pool.imap_unordered(play_keyed, jobs, chunksize=1)
        for (strong, weak, n), (black, white, ply, result) in played:
            done[(variant, strong, weak, n)] = (black, white, ply, result)
            if record is not None:
                row = {"variant": variant, "strong": strong, "weak": weak, "n": n, "code": code}
                row |= {"black": black, "white": white, "plies": ply, "result": result}
                with record.open("a") as out:
                    out.write(json.dumps(row) + "\n")
    for strong, weak in pairs:
        results = [done[(variant, strong, weak, n)] for n in range(games)]
        wins = draws = losses = plies = 0.0
        for black, _white, ply, result in results:
            plies += ply
            strong_black = black == strong
            if result == "1/2-1/2":
                draws += 1
            elif (result == "1-0") == strong_black:
                wins += 1
            else:
                losses += 1
        points = wins + draws / 2
        n = wins + draws + losses
        share = points / n
        spread = (wins * (1 - share) ** 2 + draws * (0.5 - share) ** 2 + losses * share**2) / n
        error = 100 * (spread / n) ** 0.5
        print(
            f"level {strong} v {weak}: +{wins:.0f} ={draws:.0f} -{losses:.0f}  "
            f"score {100 * share:.0f}% ± {error:.0f}  (mean {plies / n:.0f} plies)"
        )


def play_keyed(
    job: tuple[tuple[int, int, int], tuple[str, tuple[str, ...], int, int, int]],
) -> tuple[tuple[int, int, int], tuple[int, int, int, str]]:
    key, game = job
    return key, play_game(game)


# -- agreement -------------------------------------------------------------------------------


def agree_one(
    job: tuple[str, str, list[str], str, int, int | None],
) -> tuple[bool, bool, int, int]:
    variant, fen, history, master, movetime, depth = job
    rules = get_variant(variant)
    position = rules.position(fen)
    limits = Limits(depth=depth) if depth else Limits(movetime_ms=movetime)
    found = search_position(position, limits, [rules.position(f) for f in history])
    if depth:
        base, _, _ = baseline(position, 3_600_000, depth)
    else:
        base, _, _ = baseline(position, movetime)
    return (
        found.move == master,
        base == master,
        found.depth,
        found.nodes * 1000 // max(1, found.millis),
    )


def agreement(limit: int, movetime: int, workers: int, depth: int | None = None) -> None:
    budget = f"depth {depth}" if depth else f"{movetime} ms"
    print(f"== agreement with the masters, {budget} a position, plies 24-80, non-forced")
    for name in COLLECTIONS:
        positions = master_positions(name)
        step = max(1, len(positions) // limit) if limit else 1
        sample = positions[::step][: limit or None]
        jobs = [
            ("english", p.fen(), [h.fen() for h in history], move, movetime, depth)
            for p, move, history in sample
        ]
        with multiprocessing.Pool(workers) as pool:
            results = pool.map(agree_one, jobs, chunksize=1)
        engine = sum(r[0] for r in results)
        base = sum(r[1] for r in results)
        deep = statistics.median(r[2] for r in results)
        nps = statistics.median(r[3] for r in results)
        print(
            f"{name:28} {len(results):4} of {len(positions):4} positions: engine "
            f"{100 * engine / len(results):.0f}% (median depth {deep}, {nps:,.0f} nodes/s), "
            f"baseline {100 * base / len(results):.0f}%"
        )


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("parts", nargs="*", default=["speed", "ladder", "agreement"])
    parser.add_argument("--games", type=int, default=100, help="games per pair in the ladder")
    parser.add_argument("--variant", default="english", help="the ladder's variant")
    parser.add_argument(
        "--pairs", default="", help="the ladder's pairs, e.g. 2-1,8-7 (default: all, and 8-1)"
    )
    parser.add_argument("--positions", type=int, default=0, help="per collection (0: all)")
    parser.add_argument("--agreement-ms", type=int, default=1000)
    parser.add_argument(
        "--agreement-depth", type=int, default=None, help="a fixed depth instead of a movetime"
    )
    parser.add_argument("--workers", type=int, default=min(2, os.cpu_count() or 1))
    parser.add_argument(
        "--record", type=Path, help="the ladder's games, JSON lines: a rerun plays only the rest"
    )
    args = parser.parse_args(argv)
    print(f"load average before: {os.getloadavg()}")
    if "speed" in args.parts:
        speed(1000)
    if "agreement" in args.parts:
        agreement(args.positions, args.agreement_ms, args.workers, args.agreement_depth)
    if "ladder" in args.parts:
        ladder(args.variant, args.games, args.workers, parse_pairs(args.pairs), args.record)
    print(f"load average after: {os.getloadavg()}")


if __name__ == "__main__":
    main()
