"""``checkers puzzles``: find puzzles in games (``generate``), check a file of them
(``check``), store one in the database (``load``). See docs/puzzles.md.

``load`` stores a file of them in the database, beside the shipped ones.

``generate`` reads games from PDN files (games played from the start, and problem positions
with or without their moves), from the archive (``--archive``: the finished public games of the
database) and from the computer's levels playing each other (``--self-play N``), looks at every
position with the engine in ``--jobs`` processes, and adds the puzzles found to ``--out`` (JSON
lines; puzzles already there are kept, the same one is never written twice). ``check`` searches
every move of each puzzle's solution again and prints the puzzles whose line is no longer the
only good one (exit status 1 if any).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass
from pathlib import Path

from app.commands.rules import USAGE_ERROR

EXIT_PROBLEMS = 1


@dataclass(frozen=True, slots=True)
class Source:
    """One game to look at: from a PDN file, the archive, or self-play (``seed``)."""

    variant: str
    moves: tuple[str, ...]
    start_fen: str | None
    name: str
    seed: int | None = None


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "puzzles",
        help="find puzzles in games, or check a file of puzzles",
        description="Find puzzles in games (generate) or check a file of them (check).",
    )
    actions = parser.add_subparsers(dest="action", required=True, metavar="ACTION")
    generate = actions.add_parser(
        "generate",
        help="find puzzles in PDN files, the archive or self-play games",
        description="Look at every position of the games with the engine and add the puzzles "
        "found (one clearly best line winning a piece or the game) to OUT, as JSON lines.",
    )
    generate.add_argument("--pdn", nargs="*", type=Path, default=[], metavar="FILE.pdn")
    generate.add_argument(
        "--archive", action="store_true", help="the archive's finished public games"
    )
    generate.add_argument("--database-url", help="with --archive (default: DATABASE_URL)")
    generate.add_argument(
        "--self-play", type=int, default=0, metavar="N", help="N games of the levels 2-6"
    )
    generate.add_argument("--seed", type=int, default=0, help="the first self-play game's seed")
    generate.add_argument(
        "--variant",
        choices=("english", "pool"),
        default="english",
        help="the self-play games' rules (PDN and archive games keep their own)",
    )
    generate.add_argument("--jobs", type=int, default=1, help="processes to search in (1)")
    generate.add_argument("--out", type=Path, required=True, metavar="FILE.jsonl")
    generate.add_argument("--quiet", action="store_true", help="no progress bar")
    generate.set_defaults(func=run_generate)
    check = actions.add_parser(
        "check",
        help="search every solution again; print the puzzles that fail",
        description="Replay each puzzle and search each move of the solver again: the move "
        "must be legal and clearly the best. Exit status 1 if a puzzle fails.",
    )
    check.add_argument("file", type=Path, metavar="FILE.jsonl")
    check.add_argument("--jobs", type=int, default=1, help="processes to search in (1)")
    check.set_defaults(func=run_check)
    load = actions.add_parser(
        "load",
        help="store a file of puzzles in the database, beside the shipped ones",
        description="Store the puzzles of FILE (as generate writes them) that the database "
        "does not hold yet; they are served like the shipped ones.",
    )
    load.add_argument("file", type=Path, metavar="FILE.jsonl")
    load.add_argument("--database-url", help="default: DATABASE_URL from settings")
    load.set_defaults(func=run_load)


def _fail(message: str) -> int:
    print(f"checkers: error: {message}", file=sys.stderr)
    return USAGE_ERROR


def _pdn_sources(paths: list[Path]) -> Iterator[Source]:
    from app.rules.pdn import read_games

    for path in paths:
        with path.open(encoding="utf-8", errors="replace") as handle:
            for number, record in enumerate(read_games(handle), 1):
                if record.error is not None:
                    continue
                try:
                    variant = record.variant().name
                except ValueError:
                    continue  # a GameType we do not play
                yield Source(variant, tuple(record.moves), record.fen, f"{path.name} #{number}")


async def _archive_sources(url: str) -> list[Source]:
    from app.archive import service as archive
    from app.archive.visibility import Viewer
    from app.db.engine import Database

    db = Database(url)
    found = []
    try:
        async with db.session() as session:
            for game_id in await archive.public_finished_ids(session, min_plies=10):
                record = await archive.get_game(session, game_id, Viewer(admin=True))
                found.append(
                    Source(
                        record.variant,
                        tuple(record.moves),
                        record.start_fen,
                        f"archive game {game_id}",
                    )
                )
    finally:
        await db.dispose()
    return found


def scan_source(source: Source) -> tuple[list[dict[str, object]], int, int]:
    """Look at one game (in a worker process): the puzzles found, as records, and how many
    positions and candidates it had."""
    from app.puzzles.generate import scan_game
    from app.puzzles.sources import self_play

    moves, name = source.moves, source.name
    if source.seed is not None:
        black, white, played = self_play(source.variant, source.seed)
        moves = tuple(played)
        name = f"self-play {source.variant} {source.seed} (levels {black}-{white})"
    scan = scan_game(source.variant, moves, source.start_fen, name)
    return [p.record() for p in scan.puzzles], scan.positions, scan.candidates


def read_puzzles(path: Path) -> list[dict[str, object]]:
    """The records of a file of puzzles (none if it does not exist)."""
    if not path.exists():
        return []
    with path.open(encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def run_generate(args: argparse.Namespace) -> int:
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

    if args.jobs < 1 or args.self_play < 0:
        return _fail("--jobs must be at least 1 and --self-play at least 0")
    try:
        sources = list(_pdn_sources(args.pdn))
    except OSError as exc:
        return _fail(f"cannot read {exc.filename}: {exc.strerror or exc}")
    if args.archive:
        from app.config import get_settings

        url = args.database_url or get_settings().database_url
        sources += asyncio.run(_archive_sources(url))
    sources += [
        Source(args.variant, (), None, "self-play", seed)
        for seed in range(args.seed, args.seed + args.self_play)
    ]
    kept = read_puzzles(args.out)
    keys = {str(p["key"]) for p in kept}
    added = positions = candidates = 0
    console = Console(stderr=True)
    with (
        Progress(
            TextColumn("games"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.fields[found]} puzzles"),
            console=console,
            disable=args.quiet,
        ) as progress,
        ProcessPoolExecutor(args.jobs) as pool,
        args.out.open("a", encoding="utf-8") as out,
    ):
        task = progress.add_task("games", total=len(sources), found=0)
        futures = {pool.submit(scan_source, source): source for source in sources}
        failed: list[str] = []
        for future in as_completed(futures):
            try:
                records, looked, kept_back = future.result()
            except Exception as exc:  # a game the search cannot take: say so, go on
                failed.append(f"{futures[future].name}: {type(exc).__name__}: {exc}")
                progress.update(task, advance=1)
                continue
            positions += looked
            candidates += kept_back
            for record in records:
                if record["key"] in keys:
                    continue
                keys.add(str(record["key"]))
                out.write(json.dumps(record) + "\n")
                out.flush()
                added += 1
            progress.update(task, advance=1, found=added)
    for line in failed:
        print(f"checkers: cannot look at {line}", file=sys.stderr)
    print(
        f"games {len(sources)} positions {positions} candidates {candidates} "
        f"puzzles added {added} in file {len(keys)} failed {len(failed)}"
    )
    return EXIT_PROBLEMS if failed else 0


def check_record(record: dict[str, object]) -> str | None:
    from app.puzzles.generate import Puzzle, check

    return check(Puzzle.from_record(record))


def run_check(args: argparse.Namespace) -> int:
    if not args.file.is_file():
        return _fail(f"cannot read {args.file}: no such file")
    try:
        records = read_puzzles(args.file)
    except (OSError, ValueError) as exc:
        return _fail(f"cannot read {args.file}: {exc}")
    failed = 0
    with ProcessPoolExecutor(max(1, args.jobs)) as pool:
        for record, problem in zip(records, pool.map(check_record, records), strict=True):
            if problem is not None:
                failed += 1
                print(f"{record['key']} {record['fen']}: {problem}")
    print(f"puzzles {len(records)} failed {failed}")
    return EXIT_PROBLEMS if failed else 0


def run_load(args: argparse.Namespace) -> int:
    from app.config import get_settings
    from app.db.engine import Database
    from app.puzzles import service as puzzles
    from app.puzzles.generate import Puzzle

    if not args.file.is_file():
        return _fail(f"cannot read {args.file}: no such file")
    try:
        found = [Puzzle.from_record(record) for record in read_puzzles(args.file)]
    except (OSError, ValueError, KeyError, AssertionError) as exc:
        return _fail(f"cannot read {args.file}: {exc}")

    async def store() -> int:
        db = Database(args.database_url or get_settings().database_url)
        try:
            return await puzzles.load(db, found)
        finally:
            await db.dispose()

    added = asyncio.run(store())
    print(f"puzzles {len(found)} stored {added}")
    return 0
