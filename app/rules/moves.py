"""The public ``Move`` and the syntax of move text (``11-15``, ``15x24``, ``15x24x31``)."""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

from app.rules.board import Square
from app.rules.errors import InvalidMoveError

_MOVE_TEXT = re.compile(r"\s*[0-9]{1,2}(?:\s*[-xX:]\s*[0-9]{1,2})+\s*")
_NUMBER = re.compile(r"[0-9]+")


@dataclass(frozen=True, slots=True)
class Move:
    """One move: ``path`` is every square visited (start, each landing); ``captured`` in order."""

    path: tuple[Square, ...]
    captured: tuple[Square, ...] = ()

    @property
    def is_capture(self) -> bool:
        return bool(self.captured)

    @property
    def start(self) -> Square:
        return self.path[0]

    @property
    def end(self) -> Square:
        return self.path[-1]

    def __str__(self) -> str:
        return ("x" if self.captured else "-").join(map(str, self.path))


@functools.lru_cache(maxsize=4096)  # a few hundred texts name every move ever played
def parse_squares(text: str) -> tuple[Square, ...]:
    """The squares named by move text; ``x`` may stand for a step, ``-`` only joins two squares.

    Raises ``InvalidMoveError`` whose message is the reason alone; the position adds itself.
    """
    if not _MOVE_TEXT.fullmatch(text):
        raise InvalidMoveError("write a step as 11-15 and a capture as 15x24 or 15x24x31")
    squares = tuple(map(int, _NUMBER.findall(text)))
    if "-" in text and len(squares) > 2:
        raise InvalidMoveError("a multi-jump is written with x, as in 15x24x31")
    if not all(1 <= s <= 32 for s in squares):
        raise InvalidMoveError("squares are numbered 1 to 32")
    return squares
