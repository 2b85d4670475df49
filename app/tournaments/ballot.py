"""Ballot openings for English draughts: the deck, drawing from it, and scoring a ballot match.

In a ballot round two players play a two-game match from one opening drawn at random, each
taking each colour once; the match scores the sum of the two games. The deck is derived (see
``app.tournaments.deck_build``): the 3-ply openings that masters played and our engine finds
balanced, shipped as ``deck.txt``, one opening a line in our move text. The other choice is
go-as-you-please, ``GO_AS_YOU_PLEASE``: no moves imposed.

An opening's ``name`` is its moves (``9-13 22-18 10-15``), the way ballots are known; it is
what a tournament stores to avoid drawing the same opening twice.
"""

from __future__ import annotations

import random
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from importlib import resources

from app.rules.variants import ENGLISH

DECK_FILE = "deck.txt"


@dataclass(frozen=True)
class Opening:
    name: str
    moves: tuple[str, ...]
    """In our move text, e.g. ("9-13", "22-18", "10-15")."""
    fen: str
    """The position after the moves, in our FEN: where the games of the match start."""


def opening(moves: Sequence[str]) -> Opening:
    """The opening made of ``moves`` from the English start; raises the rules' error for an
    illegal one. Moves are rewritten in canonical text (``13x22`` for a capture)."""
    position = ENGLISH.position()
    canonical: list[str] = []
    for text in moves:
        move = position.parse_move(text)
        canonical.append(str(move))
        position = position.play(move)
    name = " ".join(canonical) if canonical else "go as you please"
    return Opening(name, tuple(canonical), position.fen())


def parse_deck(text: str) -> tuple[Opening, ...]:
    """The openings of a deck file: one a line, moves separated by spaces, ``#`` comments."""
    return tuple(
        opening(line.split())
        for line in text.splitlines()
        if line.strip() and not line.lstrip().startswith("#")
    )


GO_AS_YOU_PLEASE = opening(())
DECK: tuple[Opening, ...] = parse_deck(
    resources.files("app.tournaments").joinpath(DECK_FILE).read_text(encoding="utf-8")
)


def draw(rng: random.Random, used: Collection[str] = (), deck: Sequence[Opening] = DECK) -> Opening:
    """An opening drawn at random from those whose name is not in ``used`` (the tournament's
    openings so far); once every opening has been used, from the whole deck."""
    if not deck:
        raise ValueError("the deck is empty")
    fresh = [o for o in deck if o.name not in used]
    return rng.choice(fresh or list(deck))


def match_score(points: Sequence[int]) -> int:
    """A ballot match's score in half points: the sum of its games' (two games from the same
    opening, the colours reversed for the second; 4 for two wins, 2 for a win and a loss or
    two draws)."""
    return sum(points)
