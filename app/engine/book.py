"""The opening book: positions from the first plies of public master games and the moves the
masters played there. Built by ``app.engine.book_build`` (``checkers book build``) and shipped
inside the package as ``book.txt.gz``: one line per position, ``variant<TAB>FEN<TAB>move:count
...``.
"""

from __future__ import annotations

import functools
import gzip
import random
from importlib import resources

from app.rules.position import Position

BOOK_FILE = "book.txt.gz"

Book = dict[tuple[str, str], dict[str, int]]
"""(variant name, canonical FEN) -> {move text: how many master games played it}."""


def parse_book(text: str) -> Book:
    book: Book = {}
    for line in text.splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        variant, fen, moves = line.split("\t")
        book[(variant, fen)] = {
            move: int(count) for move, count in (item.split(":") for item in moves.split())
        }
    return book


@functools.cache
def shipped_book() -> Book:
    """The book shipped in the package (read once); empty if the file is missing."""
    source = resources.files("app.engine").joinpath(BOOK_FILE)
    if not source.is_file():
        return {}
    return parse_book(gzip.decompress(source.read_bytes()).decode("utf-8"))


def book_moves(position: Position) -> dict[str, int]:
    """The book's moves in ``position`` that are legal there, with their counts."""
    entry = shipped_book().get((position.variant.name, position.fen()), {})
    legal = set(position.legal_move_texts())
    return {move: count for move, count in entry.items() if move in legal}


def book_move(position: Position, rng: random.Random) -> str | None:
    """A book move chosen at random in proportion to how often masters played it, or None."""
    moves = book_moves(position)
    if not moves:
        return None
    texts = sorted(moves)
    return rng.choices(texts, weights=[moves[t] for t in texts])[0]
