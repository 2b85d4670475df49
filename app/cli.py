"""The `checkers` command. Each subcommand lives in a module of `app.commands` that registers it.

Command modules import heavy dependencies (FastAPI, SQLAlchemy) inside their handlers so that the
rules commands (`perft`, `moves`, `replay`) start fast.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence
from typing import NoReturn

COMMAND_MODULES = (
    "app.commands.rules",
    "app.commands.server",
    "app.commands.archive",
    "app.commands.engine",
    "app.commands.analysis",
    "app.commands.puzzles",
    "app.commands.config_doc",
)


class _Parser(argparse.ArgumentParser):
    """Bad arguments give a one-line error and exit status 2: tools parse our output."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message} (see --help)\n")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="checkers", description="Online checkers server tools.")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name in COMMAND_MODULES:
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as exc:  # a command module not written yet
            if exc.name != name:
                raise
            continue
        module.register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    result: int = args.func(args)
    return result


if __name__ == "__main__":
    sys.exit(main())
