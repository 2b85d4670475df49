"""The search finds the shots of known problems (tests/data/goulds.pdn and beginner.pdn).

The set was picked by bench/shots.py: the problems where the side to move is the side the
Result tag says wins and a plain material minimax written with the rules' public API only
(captures played out at the horizon) finds exactly one first move that wins at least a piece
or the game within 7 plies. Each must be found within a budget of nodes, not of time.
"""

from __future__ import annotations

import pytest

from app.engine import Limits, search_position
from app.rules import get_variant

NODES = 20_000
"""About a tenth of a second of search; every problem is solved with 2,000 nodes but two."""

SHOTS = [
    ("Gould's Problems #6", "W:W32,K26:B19,K28", "32-27"),
    ("Gould's Problems #12", "W:WK17,K27:B18,K29,K30", "17-22"),
    ("Gould's Problems #25", "W:W19,K22,K30:B12,23,K32", "22-26"),
    ("Gould's Problems #47", "W:W19,23,30:B10,12,26", "19-15"),
    ("Gould's Problems #81", "B:W21,27:B9,K3", "9-14"),
    ("Gould's Problems #158", "W:W10,21,23,26,28,30:B2,3,13,14,16,19", "30-25"),
    ("Gould's Problems #205", "W:W20,32,K31:B11,19,23,28", "31-27"),
    ("Gould's Problems #218", "B:W18,23,K2,K10:B8,12,K25,K27", "25-22"),
    ("Gould's Problems #232", "B:W13,19,22,23,28:B1,6,10,11,12", "11-16"),
    ("Beginner's Problem #1", "W:W19,27,31:B5,12,17", "19-16"),
    ("Beginner's Problem #2", "W:W18,26,30:B10,11,19", "18-14"),
    ("Beginner's Problem #3", "W:W19,24,32:B10,11,18", "19-16"),
    ("Beginner's Problem #4", "W:W28,30,31:B18,19,22", "30-26"),
    ("Beginner's Problem #5", "W:W10,14,21:B1,3,17", "10-6"),
    ("Beginner's Problem #6", "W:W19,23,26,32:B10,12,14,27", "19-15"),
    ("Beginner's Problem #8", "W:W7,18,K10:B3,9,K26", "18-14"),
    ("Beginner's Problem #9", "W:W12,16,K19:B3,K26,K27", "12-8"),
    ("Beginner's Problem #11", "W:W27,30,32:B2,6,15,22", "30-26"),
    ("Beginner's Problem #16", "W:W24,31,32:B16,18,23", "24-19"),
    ("Beginner's Problem #17", "W:W26,30,31:B13,15,19", "31-27"),
    ("Beginner's Problem #18", "W:W25,30,31:B12,14,17", "31-26"),
    ("Beginner's Problem #19", "W:W22,K5,K12:B13,14,19", "5-9"),
    ("Beginner's Problem #22", "W:W26,K6,K14:B17,21,K31", "6-9"),
    ("Beginner's Problem #24", "W:W30,K32:B24,K22", "32-28"),
    ("Beginner's Problem #29", "W:W14,15,30:B6,7,12", "30-26"),
    ("Beginner's Problem #34", "W:W24,32,K30:B20,28,K23", "32-27"),
    ("Beginner's Problem #42", "W:W28,K13,K19:B20,27,K31", "19-24"),
    ("Beginner's Problem #43", "W:W19,22,30:B10,11,13", "22-18"),
    ("Beginner's Problem #44", "W:W10,11,25,30:B16,21,K15", "10-7"),
    ("Beginner's Problem #48", "W:W32,K7,K15:B18,28,K22", "32-27"),
    ("Beginner's Problem #54", "W:W20,28,K10:B8,12,K19", "20-16"),
]


@pytest.mark.parametrize(("event", "fen", "winning"), SHOTS, ids=[s[0] for s in SHOTS])
def test_the_search_finds_the_shot(event: str, fen: str, winning: str) -> None:
    position = get_variant("english").position(fen)
    result = search_position(position, Limits(nodes=NODES))
    assert result.move == winning, f"{event}: {result}"
