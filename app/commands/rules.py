"""``checkers perft``, ``checkers moves`` and ``checkers replay``: the rules engine from a shell.

Other tools parse these outputs, so their format is fixed: perft ends with the bare leaf count,
moves are full paths sorted as strings, replay ends with ``games=N moves=M illegal=K
unreadable=U past_draw=P warnings=W``. Bad arguments or a bad FEN give a one-line error and exit
status 2.
"""

from __future__ import annotations

import argparse
import io
import os
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from app.rules import Variant

USAGE_ERROR = 2
MAX_PERFT_DEPTH = 30
"""Deeper trees cannot be counted in any lifetime, and the search recursion would overflow."""


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    perft = subparsers.add_parser(
        "perft", help="count the leaves of the legal-move tree (move generator check)"
    )
    _variant_options(perft)
    perft.add_argument("--divide", action="store_true", help="also print the count per first move")
    perft.add_argument(
        "depth", type=int, metavar="DEPTH", help=f"plies to search (0 to {MAX_PERFT_DEPTH})"
    )
    perft.set_defaults(func=run_perft)

    moves = subparsers.add_parser("moves", help="list the legal moves of a position")
    _variant_options(moves)
    moves.add_argument(
        "--batch",
        action="store_true",
        help="read FENs from stdin, one per line (blank lines ignored); print one line of moves "
        "for each",
    )
    moves.set_defaults(func=run_moves)

    replay = subparsers.add_parser(
        "replay",
        help="check that every game of PDN files is legal, read as it was played",
        description=(
            "Replay every game of PDN files. A short capture the next moves make clear, a remark "
            "glued to a move and a game played on past an automatic draw (claim rules) are kept, "
            "each with a warning line. The last line is: games=N moves=M illegal=K unreadable=U "
            "past_draw=P warnings=W. Exit status 1 if a game is illegal or unreadable."
        ),
    )
    replay.add_argument(
        "--variant",
        default="english",
        help="variant of games without a GameType tag (english or pool; default english)",
    )
    replay.add_argument("files", nargs="+", metavar="FILE.pdn", help="PDN files to replay")
    replay.set_defaults(func=run_replay)


def _variant_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--variant", default="english", help="english (default) or pool")
    parser.add_argument("--fen", help="start from this PDN FEN instead of the standard start")


def _fail(message: str) -> int:
    print(f"checkers: error: {message}", file=sys.stderr)
    return USAGE_ERROR


def _variant(name: str) -> Variant | None:
    from app.rules import get_variant

    try:
        return get_variant(name)
    except ValueError as exc:
        _fail(str(exc))
        return None


def run_perft(args: argparse.Namespace) -> int:
    from app.rules import RulesError
    from app.rules.perft import divide, perft

    variant = _variant(args.variant)
    if variant is None:
        return USAGE_ERROR
    if not 0 <= args.depth <= MAX_PERFT_DEPTH:
        return _fail(f"perft depth must be 0 to {MAX_PERFT_DEPTH}, not {args.depth}")
    try:
        position = variant.position(args.fen)
    except RulesError as exc:
        return _fail(str(exc))
    if args.divide and args.depth > 0:
        split = divide(position, args.depth)
        for move, count in sorted(split):
            print(f"{move} {count}")
        print(sum(count for _, count in split))
    else:
        print(perft(position, args.depth))
    return 0


def run_moves(args: argparse.Namespace) -> int:
    from app.rules import RulesError

    variant = _variant(args.variant)
    if variant is None:
        return USAGE_ERROR
    if args.batch and args.fen:
        return _fail("--batch reads positions from stdin; do not combine it with --fen")
    if not args.batch:
        try:
            position = variant.position(args.fen)
        except RulesError as exc:
            return _fail(str(exc))
        for move in sorted(str(m) for m in position.legal_moves()):
            print(move)
        return 0
    out = sys.stdout
    if isinstance(sys.stdin, io.TextIOWrapper):
        # Undecodable bytes make an invalid FEN on that line, not a traceback.
        sys.stdin.reconfigure(errors="replace")
    for number, line in enumerate(sys.stdin, 1):
        fen = line.strip()
        if not fen:
            continue
        try:
            position = variant.position(fen)
        except RulesError as exc:
            out.flush()
            return _fail(f"stdin line {number}: {exc}")
        out.write(" ".join(sorted(str(m) for m in position.legal_moves())) + "\n")
    return 0


def run_replay(args: argparse.Namespace) -> int:
    """Replay records as they were played (``app.rules.record``): what is read by choice is a
    warning line, and only illegal or unreadable games fail the run."""
    from app.rules import RulesError
    from app.rules.pdn import PdnError, read_games
    from app.rules.record import replay_record

    default = _variant(args.variant)
    if default is None:
        return USAGE_ERROR
    for path in args.files:
        # Every file is checked before any output: a bad argument is a one-line error only.
        if os.path.isdir(path):
            return _fail(f"cannot read {path}: it is a directory")
        if not os.access(path, os.R_OK):
            reason = "no such file" if not os.path.exists(path) else "permission denied"
            return _fail(f"cannot read {path}: {reason}")
    games = moves = illegal = unreadable = past_draw = warnings = 0
    for path in args.files:
        try:
            stream = open(path, encoding="utf-8", errors="replace")  # noqa: SIM115
        except OSError as exc:
            return _fail(f"cannot read {path}: {exc.strerror}")
        with stream:
            for number, record in enumerate(read_games(stream), 1):
                games += 1
                where = f"{path}: game {number} [{record.tags.get('Event', '')}]"
                if record.error:
                    unreadable += 1
                    print(f"{where}: unreadable: {record.error}")
                    continue
                try:
                    replay = replay_record(record.variant(default), record.moves, record.fen)
                except (PdnError, RulesError) as exc:
                    unreadable += 1
                    print(f"{where}: unreadable: {exc}")
                    continue
                for warning in [*record.warnings, *replay.warnings]:
                    warnings += 1
                    print(f"{where} line {record.line}: warning: {warning}")
                past_draw += replay.past_draw is not None
                game = replay.game
                if replay.error is not None:
                    illegal += 1
                    text = record.moves[game.ply]
                    print(f"{where}: illegal at ply {game.ply + 1} {text!r}: {replay.error}")
                moves += game.ply
    print(
        f"games={games} moves={moves} illegal={illegal} unreadable={unreadable} "
        f"past_draw={past_draw} warnings={warnings}"
    )
    return 0 if illegal == unreadable == 0 else 1
