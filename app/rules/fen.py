"""PDN FEN: reading (PDN 3.0 ranges, any square order, trailing ``.``) and canonical writing."""

from __future__ import annotations

import re
from typing import NamedTuple

from app.rules.board import Color, bit_indices
from app.rules.errors import InvalidFenError

_ITEM = re.compile(r"(K?)([0-9]{1,2})(?:-([0-9]{1,2}))?")


class Placement(NamedTuple):
    """The content of a FEN: side to move and the four piece sets."""

    turn: Color
    black_men: int
    black_kings: int
    white_men: int
    white_kings: int


def parse_fen(text: str) -> Placement:
    """Read a PDN FEN such as ``B:W18,24,K10:B12,K22`` or ``W:W21-32:B1-12.``."""
    compact = re.sub(r"\s+", "", text).removesuffix(".")
    fields = compact.split(":")
    if fields[0].upper() not in ("B", "W"):
        raise InvalidFenError(f"invalid FEN {text!r}: it must start with the side to move, B or W")
    turn = Color.BLACK if fields[0].upper() == "B" else Color.WHITE
    sets: dict[Color, list[int]] = {Color.BLACK: [0, 0], Color.WHITE: [0, 0]}
    seen_sides: set[Color] = set()
    occupied = 0
    for field in fields[1:]:
        side_letter = field[:1].upper()
        if side_letter not in ("B", "W"):
            raise InvalidFenError(f"invalid FEN {text!r}: unexpected field {field!r}")
        side = Color.BLACK if side_letter == "B" else Color.WHITE
        if side in seen_sides:
            raise InvalidFenError(f"invalid FEN {text!r}: {side.value} is listed twice")
        seen_sides.add(side)
        items = field[1:]
        for item in items.split(",") if items else []:
            match = _ITEM.fullmatch(item.upper())
            if match is None:
                raise InvalidFenError(f"invalid FEN {text!r}: bad square {item!r}")
            first = int(match.group(2))
            last = int(match.group(3)) if match.group(3) else first
            if not 1 <= first <= last <= 32:
                raise InvalidFenError(f"invalid FEN {text!r}: square out of range in {item!r}")
            kind = 1 if match.group(1) else 0
            for square in range(first, last + 1):
                bit = 1 << (square - 1)
                if occupied & bit:
                    raise InvalidFenError(f"invalid FEN {text!r}: square {square} is listed twice")
                occupied |= bit
                sets[side][kind] |= bit
    if not seen_sides:
        raise InvalidFenError(f"invalid FEN {text!r}: no piece lists")
    return Placement(turn, sets[Color.BLACK][0], sets[Color.BLACK][1], *sets[Color.WHITE])


def _side(letter: str, men: int, kings: int) -> str:
    items = [str(i + 1) for i in bit_indices(men)] + [f"K{i + 1}" for i in bit_indices(kings)]
    return letter + ",".join(items)


def format_fen(placement: Placement) -> str:
    """The canonical FEN: side to move, White's then Black's squares, men before kings."""
    turn = "B" if placement.turn is Color.BLACK else "W"
    white = _side("W", placement.white_men, placement.white_kings)
    black = _side("B", placement.black_men, placement.black_kings)
    return f"{turn}:{white}:{black}"
