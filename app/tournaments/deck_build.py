"""Build the ballot deck shipped as ``deck.txt`` (``bench/tournament_deck.py`` writes it).

No freely licensed copy of the ACF's 156-opening three-move deck could be verified (the copy
in pydraughts lists 157 openings as playable, one more than the ACF's count), so the deck is
derived, by two tests any 3-ply opening from the English start position must pass:

- balanced: a search of our engine to ``DEPTH`` plies scores it within ``BOUND`` hundredths of
  a man for either side;
- played: at least one master game of the PDN collections shipped with the tests
  (``tests/data``) begins with it, so a player can find it in the literature. This is also what
  keeps out the openings known to lose: a search this shallow passes all of them.

Of the 302 three-ply openings, 246 are balanced and 63 are also played (62 of them are in the
ACF-style list of pydraughts, none among its losing ones). The module does no I/O: the caller
reads the games and writes the text.
"""

from __future__ import annotations

from collections.abc import Iterable

from app.engine.search import Limits, search_position
from app.rules.errors import RulesError
from app.rules.pdn import PdnError, PdnGame
from app.rules.variants import ENGLISH

DEPTH = 9
BOUND = 33
"""A third of a man, in the engine's hundredths of a man."""
PLIES = 3


def all_openings() -> list[tuple[str, ...]]:
    """Every 3-ply opening from the English start position, in the rules' move order."""
    found: list[tuple[str, ...]] = []
    start = ENGLISH.position()
    for first in start.legal_moves():
        one = start.play(first)
        for second in one.legal_moves():
            two = one.play(second)
            found += [(str(first), str(second), str(third)) for third in two.legal_moves()]
    return found


def played_openings(games: Iterable[PdnGame]) -> set[tuple[str, ...]]:
    """The first three plies of every English game from the start position."""
    found: set[tuple[str, ...]] = set()
    for record in games:
        if record.error or record.fen or len(record.moves) < PLIES:
            continue
        try:
            if record.variant() is not ENGLISH:
                continue
            position = ENGLISH.position()
            moves = []
            for text in record.moves[:PLIES]:
                move = position.parse_move(text)
                moves.append(str(move))
                position = position.play(move)
        except (PdnError, RulesError):
            continue
        found.add(tuple(moves))
    return found


def balanced(opening: tuple[str, ...], depth: int = DEPTH, bound: int = BOUND) -> bool:
    """Whether a ``depth``-ply search scores the position after ``opening`` within ``bound``."""
    position = ENGLISH.position()
    for move in opening:
        position = position.play(move)
    return abs(search_position(position, Limits(depth=depth)).score) <= bound


def build_deck(
    games: Iterable[PdnGame], depth: int = DEPTH, bound: int = BOUND
) -> list[tuple[str, ...]]:
    """The openings both played in ``games`` and balanced, in the rules' move order."""
    played = played_openings(games)
    return [o for o in all_openings() if o in played and balanced(o, depth, bound)]


def deck_text(deck: Iterable[tuple[str, ...]], depth: int = DEPTH, bound: int = BOUND) -> str:
    """The text of ``deck.txt``: a comment saying how it was made, then one opening a line."""
    header = (
        f"# English ballot deck: 3-ply openings played in the master games of tests/data and\n"
        f"# scored within {bound}/100 of a man by a depth-{depth} search "
        "(app/tournaments/deck_build.py)\n"
    )
    return header + "".join(" ".join(opening) + "\n" for opening in deck)
