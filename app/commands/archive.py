"""`checkers import FILE.pdn...`: load PDN game collections into the archive."""

from __future__ import annotations

import argparse
import asyncio
from pathlib import Path

EXIT_OK = 0
EXIT_REJECTED = 1  # some games were refused; the others are stored
EXIT_UNREADABLE = 2  # a file could not be opened
EXIT_DATABASE = 3  # the database refused (not reachable, or not migrated)


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "import",
        help="import PDN files into the game archive",
        description=(
            "Import PDN game collections. Every game is replayed by the rules engine, as it was "
            "played: a short capture the next moves make clear, a remark glued to a move and a "
            "game played on past an automatic draw are stored with a warning. Games "
            "already in the archive are skipped, so a file can be imported again safely. Exit "
            "status: 0 all stored or already present, 1 some games rejected, 2 a file unreadable, "
            "3 the database unusable (run `checkers migrate` first)."
        ),
    )
    parser.add_argument("files", nargs="+", type=Path, metavar="FILE.pdn")
    parser.add_argument(
        "--database-url", help="database to import into (default: DATABASE_URL from settings)"
    )
    parser.add_argument(
        "--quiet", action="store_true", help="no progress bar (the error report is still printed)"
    )
    parser.set_defaults(func=run_import)


def run_import(args: argparse.Namespace) -> int:
    from app.config import get_settings

    url = args.database_url or get_settings().database_url
    return asyncio.run(import_files(url, args.files, quiet=args.quiet))


async def import_files(url: str, files: list[Path], *, quiet: bool = False) -> int:
    """Import each file in turn with a progress bar, then print the per-game error report."""
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TaskID, TextColumn
    from sqlalchemy.exc import SQLAlchemyError

    from app.archive.importer import CountingReader, Importer, text_encoding
    from app.db.engine import Database
    from app.rules.pdn import read_games

    console = Console(stderr=True)
    db = Database(url)
    importer = Importer(db.sessionmaker)
    unreadable: list[tuple[Path, str]] = []
    try:
        with Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.fields[games]} games"),
            console=console,
            disable=quiet,
        ) as progress:
            for path in files:
                try:
                    size = path.stat().st_size
                    stream = path.open(encoding=text_encoding(path), newline="")
                except OSError as exc:
                    unreadable.append((path, exc.strerror or str(exc)))
                    continue
                task = progress.add_task(path.name, total=size, games=0)
                with stream:
                    reader = CountingReader(stream)

                    def advance(
                        games: int, reader: CountingReader = reader, task: TaskID = task
                    ) -> None:
                        progress.update(task, completed=reader.consumed, games=games)

                    await importer.import_records(str(path), read_games(reader), advance)
                progress.update(task, completed=size)
    except (OSError, SQLAlchemyError) as exc:
        reason = getattr(exc, "orig", None) or exc
        console.print(
            f"[red]cannot use the database[/red] {db.engine.url!r}: {reason} "
            "(is it running, and migrated with `checkers migrate`?)",
            highlight=False,
            soft_wrap=True,
        )
        return EXIT_DATABASE
    finally:
        await db.dispose()

    report = importer.report
    for path, reason in unreadable:
        console.print(f"[red]cannot read[/red] {path}: {reason}", highlight=False, soft_wrap=True)
    for issue in report.rejected:
        console.print(
            f"[red]rejected[/red] {issue.file} game {issue.number} (line {issue.line}) "
            f"{issue.label!r}: {issue.message}",
            highlight=False,
            soft_wrap=True,
        )
    for issue in report.warnings:
        console.print(
            f"[yellow]warning[/yellow] {issue.file} game {issue.number} (line {issue.line}) "
            f"{issue.label!r}: {issue.message}",
            highlight=False,
            soft_wrap=True,
        )
    console.print(
        f"imported {report.imported}, already present {report.duplicates}, "
        f"rejected {len(report.rejected)}, warnings {len(report.warnings)}"
    )
    if unreadable:
        return EXIT_UNREADABLE
    return EXIT_REJECTED if report.rejected else EXIT_OK
