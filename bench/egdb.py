"""What the endgame database adds to the computer opponent: prints figures for docs/benchmarks.md.

Usage: .venv/bin/python bench/egdb.py [stats] [verify] [choices] [convert] [cost]
       [--positions N] [--games N] [--movetime MS] [--seed S] [--oracle FILE.xz]

- stats: positions, wins/draws/losses and the longest distance, by number of pieces.
- verify: every stored position's value against its children's, found with the rules' public
  API (``Position.legal_moves``/``play``): with the distances this proves the whole table.
- choices: positions of the database (four pieces) where some moves keep the result and others
  change it; how often the level-8 search picks a move that changes it, with and without the
  database. With ``--kings5`` the same for five kings (three against two, four against one),
  judged by those slices solved here from the shipped database (about a minute), where the
  search with the shipped database probes only the children that capture; with ``--oracle``
  (a bigger database, e.g. five pieces built by ``checkers build-egdb --pieces 5 --output``),
  for positions of that many pieces.
- convert: won positions of the database (or of ``--kings5``/``--oracle``) played out under
  the rules' game (40-move and repetition draws included) by level 8 with and without the
  database against level 8 with it; how many are won.
- cost: the search's nodes per second and time to a fixed depth from positions of five and six
  pieces, with and without the database; how many nodes were answered by a probe.
"""

from __future__ import annotations

import argparse
import lzma
import random
import time
from collections import Counter
from pathlib import Path

from app.engine import Limits, level_limits, search_position
from app.engine.egdb import Egdb, outcome, shipped_egdb, slice_positions, slices
from app.engine.egdb_build import extend
from app.engine.search import Searcher, node_of
from app.rules import Game, Position, get_variant
from app.rules.board import Color

ENGLISH = get_variant("english")


def database() -> Egdb:
    found = shipped_egdb()
    if found is None:
        raise SystemExit("no egdb.bin.xz in the package: run `checkers build-egdb` first")
    return found


def value(db: Egdb, position: Position) -> int:
    found = db.value(*node_of(position))
    assert found is not None
    return found


def random_position(db: Egdb, rng: random.Random, pieces: int) -> Position:
    """A stored position of exactly ``pieces`` pieces, by a uniform pick of its slots."""
    choices = [s for s in db.tables if sum(s) == pieces]
    weights = [slice_positions(s) for s in choices]
    while True:
        a, b, c, d = rng.choices(choices, weights)[0]
        squares = rng.sample(range(32), a + b + c + d)
        men, kings = squares[:a], squares[a : a + b]
        opp_men, opp_kings = squares[a + b : a + b + c], squares[a + b + c :]
        if any(sq >= 28 for sq in men) or any(sq < 4 for sq in opp_men):
            continue
        bits = [sum(1 << sq for sq in group) for group in (men, kings, opp_men, opp_kings)]
        if rng.random() < 0.5:
            return Position(ENGLISH, Color.BLACK, *bits)
        turned = [sum(1 << (31 - i) for i in range(32) if b >> i & 1) for b in bits]
        return Position(ENGLISH, Color.WHITE, turned[2], turned[3], turned[0], turned[1])


def child_result(db: Egdb, position: Position, move: str) -> int:
    """The result for the side to move in ``position`` after ``move``: +1, 0, -1."""
    child = position.play(move)
    if not child.has_legal_moves():
        return 1
    return -outcome(value(db, child))


def run_stats(db: Egdb) -> None:
    by_pieces: dict[int, Counter[int]] = {}
    longest: dict[int, int] = {}
    for s in slices(db.pieces):
        n = sum(s)
        table = db.tables[s]
        counts = by_pieces.setdefault(n, Counter())
        counts["positions"] += slice_positions(s)
        for byte in range(1, 256):
            found = table.count(byte)
            if found:
                counts["wins" if (byte - 1) % 2 else "losses"] += found
                longest[n] = max(longest.get(n, 0), byte - 1)
    print("pieces  positions   wins       draws      losses     longest (plies)")
    for n, counts in sorted(by_pieces.items()):
        draws = counts["positions"] - counts["wins"] - counts["losses"]
        print(
            f"{n:>6}  {counts['positions']:>9,}  {counts['wins']:>9,}  {draws:>9,}  "
            f"{counts['losses']:>9,}  {longest.get(n, 0)}"
        )


def run_verify(db: Egdb) -> None:
    started = time.perf_counter()
    checked = wrong = 0
    for _, men, kings, opp_men, opp_kings, stored in db.positions():
        position = Position(ENGLISH, Color.BLACK, men, kings, opp_men, opp_kings)
        children = []
        for move in position.legal_moves():
            child = position.play(move)
            children.append(value(db, child) if child.has_legal_moves() else 1)
        wins = [v + 1 for v in children if v and (v - 1) % 2 == 0]
        if not children:
            want = 1
        elif wins:
            want = min(wins)
        elif 0 in children:
            want = 0
        else:
            want = max(v + 1 for v in children)
        checked += 1
        if want != stored:
            wrong += 1
            print("MISMATCH", position.fen(), stored, want)
    seconds = time.perf_counter() - started
    print(f"verify: {checked:,} positions, {wrong} wrong, {seconds:.0f} s")


def critical(db: Egdb, rng: random.Random, pieces: int) -> tuple[Position, dict[str, int]]:
    """A position where the choice of move matters: (position, result of each move)."""
    while True:
        position = random_position(db, rng, pieces)
        moves = position.legal_move_texts()
        if len(moves) < 2:
            continue
        results = {move: child_result(db, position, move) for move in moves}
        if len(set(results.values())) > 1:
            return position, results


def run_choices(db: Egdb, oracle: Egdb | None, positions: int, movetime: int, seed: int) -> None:
    rng = random.Random(seed)
    for truth in (db, oracle) if oracle else (db,):
        pieces = truth.pieces
        changed = {False: 0, True: 0}
        started = time.perf_counter()
        for _ in range(positions):
            position, results = critical(truth, rng, pieces)
            best = max(results.values())
            for with_db in (False, True):
                limits = Limits(movetime_ms=movetime, egdb=with_db)
                move = search_position(position, limits).move
                if results[move] < best:
                    changed[with_db] += 1
        print(
            f"choices, {pieces} pieces ({positions} positions where the move matters, "
            f"{movetime} ms a move): result thrown away without the database "
            f"{changed[False]} ({100 * changed[False] / positions:.0f} %), with it "
            f"{changed[True]} ({100 * changed[True] / positions:.0f} %) "
            f"[{time.perf_counter() - started:.0f} s]"
        )


def play_out(fen: str, attacker: Limits, defender: Limits, attacker_colour: Color) -> Game:
    game = Game(ENGLISH, fen)
    history: list[Position] = []
    while game.outcome() is None:
        limits = attacker if game.position.turn is attacker_colour else defender
        result = search_position(game.position, limits, history)
        history.append(game.position)
        game.play(result.move)
    return game


def run_convert(db: Egdb, games: int, movetime: int, seed: int) -> None:
    """Won positions of ``db``'s largest size (the shipped database or a bigger oracle); the
    searches use the shipped database."""
    rng = random.Random(seed)
    won: list[Position] = []
    while len(won) < games:
        position = random_position(db, rng, db.pieces)
        stored = value(db, position)
        # Wins that take some play: at least ten plies, no capture at once.
        if outcome(stored) == 1 and stored > 10 and "x" not in position.legal_move_texts()[0]:
            won.append(position)
    defender = Limits(movetime_ms=movetime, egdb=True)
    for with_db in (True, False):
        attacker = Limits(movetime_ms=movetime, egdb=with_db)
        ends: Counter[str] = Counter()
        plies = []
        started = time.perf_counter()
        for position in won:
            game = play_out(position.fen(), attacker, defender, position.turn)
            end = game.outcome()
            assert end is not None
            if end.winner is position.turn:
                ends["won"] += 1
                plies.append(game.ply)
            else:
                ends[end.termination.value if end.winner is None else "lost"] += 1
        mean = sum(plies) / len(plies) if plies else 0
        print(
            f"convert ({games} won positions of {db.pieces} pieces, {movetime} ms a move), "
            f"{'with' if with_db else 'without'} the database: won {ends['won']}, "
            f"{dict((k, v) for k, v in ends.items() if k != 'won')} "
            f"(mean {mean:.0f} plies to win) [{time.perf_counter() - started:.0f} s]"
        )


def run_cost(db: Egdb, positions: int, seed: int) -> None:
    rng = random.Random(seed)
    for pieces in (5, 6):
        samples = []
        while len(samples) < positions:
            # Random men and kings of both sides, no capture pending, not over.
            n_black = rng.randint(2, pieces - 2)
            squares = rng.sample(range(32), pieces)
            bits = [0, 0, 0, 0]
            for i, sq in enumerate(squares):
                black = i < n_black
                king = rng.random() < 0.5 or (sq >= 28 if black else sq < 4)
                bits[(0 if black else 2) + (1 if king else 0)] |= 1 << sq
            position = Position(ENGLISH, Color.BLACK, *bits)
            moves = position.legal_move_texts()
            if len(moves) >= 2 and "x" not in moves[0]:
                samples.append(position)
        for with_db in (False, True):
            nodes = probes = 0
            seconds = 0.0
            for position in samples:
                limits = Limits(depth=10, egdb=with_db)
                searcher = Searcher(position.variant, limits, random.Random(0))
                if with_db:
                    searcher.egdb = db
                    searcher.egdb_pieces = db.pieces
                started = time.process_time()
                searcher.run(node_of(position))
                seconds += time.process_time() - started
                nodes += searcher.nodes
                probes += searcher.probes
            print(
                f"cost, {pieces} pieces, depth 10, {positions} positions, "
                f"{'with' if with_db else 'without'} the database: {nodes:,} nodes, "
                f"{seconds:.2f} s of CPU, {nodes / seconds:,.0f} nodes/s, probes {probes:,} "
                f"({100 * probes / max(1, nodes):.0f} % of nodes)"
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("modes", nargs="*", default=["stats"])
    parser.add_argument("--positions", type=int, default=100)
    parser.add_argument("--games", type=int, default=20)
    parser.add_argument("--movetime", type=int, default=level_limits(8).movetime_ms)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--oracle", help="a bigger database file (.xz) to judge larger positions")
    parser.add_argument("--kings5", action="store_true", help="judge five kings (see above)")
    args = parser.parse_args()
    db = database()
    oracle = (
        Egdb.from_bytes(lzma.decompress(Path(args.oracle).read_bytes())) if args.oracle else None
    )
    if args.kings5:
        started = time.process_time()
        kings = extend(db, [(0, 3, 0, 2), (0, 4, 0, 1)])
        print(f"five kings solved in {time.process_time() - started:.0f} s of CPU")
        oracle = Egdb(db.pieces + 1, {**db.tables, **kings})
    for mode in args.modes:
        if mode == "stats":
            run_stats(oracle or db)
        elif mode == "verify":
            run_verify(oracle or db)
        elif mode == "choices":
            run_choices(db, oracle, args.positions, args.movetime, args.seed)
        elif mode == "convert":
            run_convert(oracle or db, args.games, args.movetime, args.seed)
        elif mode == "cost":
            run_cost(db, args.positions, args.seed)
        else:
            parser.error(f"unknown mode {mode!r}")


if __name__ == "__main__":
    main()
