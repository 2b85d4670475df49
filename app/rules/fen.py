"""PDN FEN: reading (PDN 3.0 ranges, any square order, trailing ``.``) and canonical writing."""

from __future__ import annotations

import re
from typing import NamedTuple

from app.rules.board import Color
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


def _byte_texts(prefix: str) -> tuple[tuple[tuple[str, ...], ...], ...]:
    """For each byte of a 32-square mask and each value of it, the squares it names as text:
    ``[k][value]`` lists squares ``8k + 1`` to ``8k + 8`` whose bit is set, lowest first."""
    return tuple(
        tuple(
            tuple(f"{prefix}{8 * k + i + 1}" for i in range(8) if value >> i & 1)
            for value in range(256)
        )
        for k in range(4)
    )


_MEN_TEXT = _byte_texts("")
_KINGS_TEXT = _byte_texts("K")


def _squares(mask: int, texts: tuple[tuple[tuple[str, ...], ...], ...]) -> tuple[str, ...]:
    return (
        texts[0][mask & 0xFF]
        + texts[1][mask >> 8 & 0xFF]
        + texts[2][mask >> 16 & 0xFF]
        + texts[3][mask >> 24 & 0xFF]
    )


def _side(letter: str, men: int, kings: int) -> str:
    # By tables of text per byte: FENs are written for every move sent to clients.
    return letter + ",".join(_squares(men, _MEN_TEXT) + _squares(kings, _KINGS_TEXT))


def format_fen(placement: Placement) -> str:
    """The canonical FEN: side to move, White's then Black's squares, men before kings."""
    turn = "B" if placement.turn is Color.BLACK else "W"
    white = _side("W", placement.white_men, placement.white_kings)
    black = _side("B", placement.black_men, placement.black_kings)
    return f"{turn}:{white}:{black}"
