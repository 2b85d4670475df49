"""``checkers analyse FILE.pdn``: a game of a PDN file analysed by the engine.

Prints one line per ply, ``PLY MOVE EVAL BEST LABEL``: the move played, the evaluation after it
(centipieces from Black's side, ``#N`` a forced win in N of Black's moves, ``#-N`` of White's),
the best move instead, and ``-`` or ``inaccuracy``, ``mistake``, ``blunder``; then a last line
``accuracy black=A white=B`` (``-`` for a side without a move). See docs/analysis.md. A file
that cannot be read, a game that does not replay or a bad budget: a one-line error and exit
status 2.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from app.commands.rules import USAGE_ERROR


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "analyse",
        help="analyse a game of a PDN file: each move's evaluation, the best move, its label",
        description="Search every position of the game at a fixed budget and print one line "
        "per ply (PLY MOVE EVAL BEST LABEL), then each side's accuracy. Default budget: "
        "100,000 nodes a position.",
    )
    parser.add_argument("file", type=Path, metavar="FILE.pdn")
    parser.add_argument("--game", type=int, default=1, help="the game's number in the file (1)")
    parser.add_argument(
        "--variant",
        choices=("english", "pool"),
        help="the rules (default: the game's GameType tag, else english)",
    )
    budget = parser.add_mutually_exclusive_group()
    budget.add_argument("--nodes", type=int, help="nodes a position (default 100000)")
    budget.add_argument("--movetime", type=int, metavar="MS", help="CPU milliseconds a position")
    parser.set_defaults(func=run_analyse)


def _fail(message: str) -> int:
    print(f"checkers: error: {message}", file=sys.stderr)
    return USAGE_ERROR


def run_analyse(args: argparse.Namespace) -> int:
    from app.analysis import analyse, limits
    from app.rules import Color, RulesError, get_variant
    from app.rules.pdn import read_games

    try:
        budget = limits(args.nodes, args.movetime)
    except ValueError as exc:
        return _fail(str(exc))
    if args.game < 1:
        return _fail(f"--game counts from 1, not {args.game}")
    try:
        with args.file.open(encoding="utf-8", errors="replace") as handle:
            record = None
            for number, found in enumerate(read_games(handle), 1):
                if number == args.game:
                    record = found
                    break
    except OSError as exc:
        return _fail(f"cannot read {args.file}: {exc.strerror or exc}")
    if record is None:
        return _fail(f"{args.file} has no game {args.game}")
    if record.error is not None:
        return _fail(f"game {args.game} cannot be read: {record.error}")
    try:
        variant = get_variant(args.variant) if args.variant else record.variant()
        analysis = analyse(variant.name, record.moves, record.fen, budget)
    except (RulesError, ValueError) as exc:
        return _fail(f"game {args.game} does not replay: {exc}")
    for ply in analysis.plies:
        print(ply.line())
    black, white = (analysis.accuracy(colour) for colour in (Color.BLACK, Color.WHITE))
    print(
        f"accuracy black={'-' if black is None else black} white={'-' if white is None else white}"
    )
    return 0
