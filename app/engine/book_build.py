"""Build the opening book from PDN game collections (``checkers book build``).

Every game is replayed with the rules; for each of its first ``plies`` positions the move
played is counted, unless the side that played it went on to lose the game (a losing line is
not worth repeating). Games set up from a FEN (problems) and games of other variants are
skipped. The text is the caller's to write: this module does no I/O.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

from app.rules.errors import RulesError
from app.rules.game import Result
from app.rules.pdn import PdnError, PdnGame
from app.rules.variants import ENGLISH, Variant

DEFAULT_PLIES = 16
"""Eight moves a side: the openings the collections share; the agreement bench starts at 24."""


def collect(
    games: Iterable[PdnGame], plies: int = DEFAULT_PLIES, default: Variant = ENGLISH
) -> dict[tuple[str, str], Counter[str]]:
    """(variant, FEN) -> moves played there by the side that did not lose, with counts."""
    book: dict[tuple[str, str], Counter[str]] = {}
    for record in games:
        if record.error or record.fen or not record.moves:
            continue
        try:
            variant = record.variant(default)
        except PdnError:
            continue
        loser = None
        if record.result in (Result.BLACK_WINS, Result.WHITE_WINS):
            winner = record.result.winner
            loser = winner.other if winner else None
        position = variant.position()
        for text in record.moves[:plies]:
            try:
                move = position.parse_move(text)
            except RulesError:
                break
            if position.turn is not loser:
                book.setdefault((variant.name, position.fen()), Counter())[str(move)] += 1
            position = position.play(move)
    return book


def book_text(book: dict[tuple[str, str], Counter[str]]) -> str:
    """The book file's text, sorted so that a rebuild from the same games is byte-identical."""
    lines = ["# opening book: variant, FEN, move:count (built by `checkers book build`)"]
    for (variant, fen), moves in sorted(book.items()):
        items = " ".join(f"{move}:{count}" for move, count in sorted(moves.items()))
        lines.append(f"{variant}\t{fen}\t{items}")
    return "\n".join(lines) + "\n"
