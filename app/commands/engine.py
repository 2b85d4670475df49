"""``checkers best`` (the computer opponent's move), ``checkers build-book`` and
``checkers build-egdb``.

``best`` prints info lines (``info depth … score … nodes … nps … pv …``) and then the chosen move,
in the notation of ``checkers moves``, as its last line; the search stops at the level's movetime
less the time the command took to start. Bad arguments, a bad FEN or a position without a move:
a one-line error and exit status 2.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

from app.commands.rules import USAGE_ERROR

_STARTED = time.perf_counter()
MAX_MOVETIME_MS = 600_000
MAX_EGDB_PIECES = 5
EXIT_MARGIN_MS = 10
"""Kept back from the movetime for printing the move and leaving."""


def _spent_ms() -> int:
    """Milliseconds since this process started (Linux's /proc, to 10 ms), at least since this
    module was loaded: the interpreter's start counts against the movetime too."""
    loaded = round((time.perf_counter() - _STARTED) * 1000)
    try:
        with open("/proc/self/stat") as stat, open("/proc/uptime") as uptime:
            start_ticks = int(stat.read().rsplit(")", 1)[1].split()[19])
            now = float(uptime.read().split()[0])
        return max(loaded, round((now - start_ticks / os.sysconf("SC_CLK_TCK")) * 1000))
    except (OSError, ValueError, IndexError):
        return loaded


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    best = subparsers.add_parser(
        "best",
        help="print the computer opponent's move in a position (last line)",
        description="Search a position and print info lines, then the chosen move as the last "
        "line. Default: level 8 (one second).",
    )
    best.add_argument("--variant", default="english", help="english (default) or pool")
    best.add_argument("--fen", help="the position, as PDN FEN (default: the standard start)")
    strength = best.add_mutually_exclusive_group()
    strength.add_argument("--level", type=int, help="computer level 1-8 (default 8)")
    strength.add_argument(
        "--movetime", type=int, metavar="MS", help="think this many milliseconds, full strength"
    )
    best.add_argument("--seed", type=int, help="seed for the weak levels' noise and the book")
    best.set_defaults(func=run_best)

    build = subparsers.add_parser(
        "build-book",
        help="build the opening book from PDN master games",
        description="Count the moves of the first plies of every game (the losing side's moves "
        "left out) and write the book file that the engine ships.",
    )
    build.add_argument("files", nargs="+", metavar="FILE.pdn")
    build.add_argument("--plies", type=int, default=16, help="plies of each game (default 16)")
    build.add_argument(
        "--output", help="where to write (default: the book inside the installed package)"
    )
    build.set_defaults(func=run_build_book)

    egdb = subparsers.add_parser(
        "build-egdb",
        help="build the English endgame database by retrograde analysis",
        description="Solve every English position of 2 to N pieces (win, loss or draw and the "
        "distance to the end) and write the database file that the engine ships. Four pieces "
        "take about a minute and 1.1 MB; five pieces about half an hour and 180 MB of memory.",
    )
    egdb.add_argument(
        "--pieces", type=int, default=4, help=f"pieces at most, 2 to {MAX_EGDB_PIECES} (default 4)"
    )
    egdb.add_argument(
        "--output", help="where to write (default: the database inside the installed package)"
    )
    egdb.set_defaults(func=run_build_egdb)


def _fail(message: str) -> int:
    print(f"checkers: error: {message}", file=sys.stderr)
    return USAGE_ERROR


def run_best(args: argparse.Namespace) -> int:
    from dataclasses import replace

    from app.engine import Limits, level_limits, search
    from app.rules import RulesError

    if args.movetime is not None:
        if not 1 <= args.movetime <= MAX_MOVETIME_MS:
            return _fail(f"--movetime must be 1 to {MAX_MOVETIME_MS} ms, not {args.movetime}")
        limits = Limits(movetime_ms=args.movetime, book=True, seed=args.seed, egdb=True)
    else:
        try:
            limits = level_limits(8 if args.level is None else args.level, seed=args.seed)
        except ValueError as exc:
            return _fail(str(exc))
    assert limits.movetime_ms is not None
    # The level's limits (its depth cap too), with the time already spent starting taken off.
    budget = replace(limits, movetime_ms=max(1, limits.movetime_ms - _spent_ms() - EXIT_MARGIN_MS))
    try:
        result = search(args.fen, args.variant, budget)
    except (RulesError, ValueError) as exc:
        return _fail(str(exc))
    if result.book:
        print("info book")
    else:
        nps = result.nodes * 1000 // max(1, result.millis)
        print(
            f"info depth {result.depth} score {result.score} nodes {result.nodes} "
            f"nps {nps} time {result.millis} pv {' '.join(result.pv)}"
        )
    print(result.move)
    return 0


def run_build_book(args: argparse.Namespace) -> int:
    import gzip
    from importlib import resources
    from pathlib import Path

    from app.engine.book import BOOK_FILE
    from app.engine.book_build import book_text, collect
    from app.rules.pdn import PdnGame, read_games

    if args.plies < 1:
        return _fail(f"--plies must be 1 or more, not {args.plies}")
    games: list[PdnGame] = []
    for name in args.files:
        try:
            with open(name, encoding="utf-8", errors="replace") as stream:
                games.extend(read_games(stream))
        except OSError as exc:
            return _fail(f"cannot read {name}: {exc.strerror}")
    book = collect(games, args.plies)
    output = (
        Path(args.output)
        if args.output
        else Path(str(resources.files("app.engine").joinpath(BOOK_FILE)))
    )
    # mtime=0: the same games give the same bytes.
    output.write_bytes(gzip.compress(book_text(book).encode("utf-8"), mtime=0))
    moves = sum(sum(counts.values()) for counts in book.values())
    print(f"positions={len(book)} moves={moves} games={len(games)} written to {output}")
    return 0


def run_build_egdb(args: argparse.Namespace) -> int:
    import lzma
    from importlib import resources
    from pathlib import Path

    from app.engine.egdb import EGDB_FILE
    from app.engine.egdb_build import build

    if not 2 <= args.pieces <= MAX_EGDB_PIECES:
        return _fail(f"--pieces must be 2 to {MAX_EGDB_PIECES}, not {args.pieces}")
    output = (
        Path(args.output)
        if args.output
        else Path(str(resources.files("app.engine").joinpath(EGDB_FILE)))
    )
    started = time.perf_counter()
    database = build(args.pieces)
    data = database.to_bytes()
    packed = lzma.compress(data, preset=9)  # the same positions give the same bytes
    try:
        output.write_bytes(packed)
    except OSError as exc:
        return _fail(f"cannot write {output}: {exc.strerror}")
    counts = database.counts()
    print(
        f"pieces={args.pieces} positions={sum(counts.values())} wins={counts[1]} "
        f"draws={counts[0]} losses={counts[-1]} bytes={len(packed)} "
        f"seconds={time.perf_counter() - started:.1f} written to {output}"
    )
    return 0
