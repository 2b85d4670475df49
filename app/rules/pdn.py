"""PDN (Portable Draughts Notation) reading and writing.

The reader streams: it takes any iterable of lines (an open file) and yields one ``PdnGame`` at a
time, so a large archive never sits in memory. It is tolerant of real files (comments, nested
variations, NAGs, move numbers in every style, ``x`` for steps, FEN-only records, a remark glued
to a move) and reports an unreadable record through ``PdnGame.error`` instead of aborting the
file; what it read by guessing is in ``PdnGame.warnings``. It does not check legality: replay
the moves with ``Game``, or ``app.rules.record`` for records as they are.
"""

from __future__ import annotations

import functools
import io
import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TextIO, cast

from app.rules.game import Game, Result
from app.rules.moves import Move
from app.rules.variants import ENGLISH, POOL, Variant


class PdnError(ValueError):
    """A PDN record that cannot be used."""


class UnsupportedGameTypeError(PdnError):
    """The record is for another game (GameType other than 21 English or 23 pool)."""


GAME_TYPE_NAMES = {
    20: "international draughts",
    22: "Italian draughts",
    24: "Spanish draughts",
    25: "Russian draughts",
    26: "Brazilian draughts",
    27: "Canadian draughts",
    28: "Portuguese draughts",
    29: "Czech draughts",
    30: "Turkish draughts",
    31: "Thai draughts",
    40: "Frisian draughts",
}
# Scores some programs write (two points per game) mapped to the PDN results.
_RESULT_ALIASES = {
    "2-0": Result.BLACK_WINS,
    "0-2": Result.WHITE_WINS,
    "1-1": Result.DRAW,
    "0-0": Result.UNFINISHED,
}
STANDARD_TAGS = ("Event", "Site", "Date", "Round", "Black", "White", "Result", "GameType", "FEN")

# Possessive: a value is matched run by run, never character by character with a way back (a
# 30 MB value once took 5 GB to match).
_TAG = re.compile(r'\[\s*([A-Za-z0-9_]+)\s*"((?:[^"\\]++|\\.)*+)"\s*\]')
# Bounds of what one record may hold: a longer tag value, comment or line, or more tags, makes
# the record unreadable (with the reason), and the reader never holds more than a line.
MAX_TAG_LENGTH = 1_000  # characters of a tag value
MAX_TAGS = 100  # tags of one record
MAX_COMMENT_LENGTH = 20_000  # characters of one comment, across lines
MAX_LINE_LENGTH = 100_000  # characters of one line
_TOKEN = re.compile(
    r"(?P<result>1-0|0-1|1/2-1/2|2-0|0-2|1-1|0-0|\*)(?![\w/-])"
    r"|(?P<number>\d+\s*\.(?:\s*\.\.)?)"
    r"|(?P<move>\d{1,2}(?:\s*[-xX:]\s*\d{1,2})+)[!?]*"
    r"|(?P<annotation>\$\d+|[!?]+|\.\.\.?|…)",
    re.ASCII,
)
# The two escapes of a tag value, as in PGN: \" and \\ (any other backslash is kept).
_ESCAPED = re.compile(r"\\([\\\"])")


@dataclass
class PdnGame:
    """One record of a PDN file: ``moves`` are the move texts as written (spaces removed)."""

    tags: dict[str, str] = field(default_factory=dict)
    moves: list[str] = field(default_factory=list)
    result: Result | None = None
    """The game termination marker, else the Result tag, else None."""
    line: int = 0
    """The line of the file where the record starts (1-based)."""
    error: str | None = None
    """Why the record could not be read, or None."""
    warnings: list[str] = field(default_factory=list)
    """What was read by guessing (``line N: …``), e.g. a remark glued to a move."""

    @property
    def fen(self) -> str | None:
        return self.tags.get("FEN") or None

    def variant(self, default: Variant = ENGLISH) -> Variant:
        """The variant from the GameType tag (``default`` when absent)."""
        raw = self.tags.get("GameType", "").strip()
        if not raw:
            return default
        head = raw.split(",")[0].strip()
        number = int(head) if head.isdigit() else None
        if number == ENGLISH.pdn_game_type:
            return ENGLISH
        if number == POOL.pdn_game_type:
            return POOL
        name = GAME_TYPE_NAMES.get(number, "an unknown game") if number is not None else "unknown"
        raise UnsupportedGameTypeError(
            f"GameType {raw!r} ({name}) is not supported: only English draughts (21) and "
            "American pool checkers (23) can be read"
        )

    def game(self, default: Variant = ENGLISH) -> Game:
        """The game replayed with its variant's rules; raises the first illegal move's error."""
        return Game.replay(self.variant(default), self.moves, self.fen)


class _Reader:
    """The state of one pass over a file: the record being built and open comments."""

    def __init__(self) -> None:
        self.game = PdnGame()
        self.in_comment = False
        self.comment_length = 0  # characters of the open comment so far
        self.variation_depth = 0
        self.started = False

    def start(self, line: int) -> None:
        if not self.started:
            self.game.line = line
            self.started = True

    def take(self) -> PdnGame | None:
        """The finished record (None when nothing was read since the last one)."""
        game = self.game if self.started else None
        if game is not None and game.result is None:
            declared = game.tags.get("Result")
            game.result = Result.parse(declared)
        self.game = PdnGame()
        self.started = False
        self.variation_depth = 0
        return game

    def fail(self, message: str) -> None:
        if self.game.error is None:
            self.game.error = message


def bounded_lines(stream: TextIO, limit: int = MAX_LINE_LENGTH) -> Iterator[str]:
    """The lines of a text stream, a line longer than `limit` cut to `limit + 1` characters
    (the rest read and dropped piece by piece): a file of one enormous line is never held."""
    while line := stream.readline(limit + 1):
        if len(line) > limit and not line.endswith("\n"):
            while (rest := stream.readline(limit + 1)) and not rest.endswith("\n"):
                pass
        yield line


def read_games(source: Iterable[str] | TextIO | str) -> Iterator[PdnGame]:
    """Yield the records of a PDN text, game by game, from a stream of lines or a string.
    A text stream (a file) is read a bounded line at a time (`bounded_lines`)."""
    lines: Iterable[str]
    if isinstance(source, str):
        lines = bounded_lines(io.StringIO(source, newline=None))
    elif isinstance(source, io.TextIOBase) or hasattr(source, "readline"):
        lines = bounded_lines(cast(TextIO, source))
    else:
        lines = source
    reader = _Reader()
    number = 0
    for number, raw in enumerate(lines, 1):
        # A byte order mark starts the file, or each part of files joined with cat.
        line = raw.rstrip("\r\n").removeprefix("\ufeff")
        if len(line) > MAX_LINE_LENGTH:
            reader.start(number)
            reader.fail(f"line {number} is longer than {MAX_LINE_LENGTH} characters")
            continue
        if line.startswith("%") and not reader.in_comment:
            continue
        still_open = "}" not in line if reader.in_comment else reader.variation_depth > 0
        if still_open and _TAG.match(line):
            # A tag line inside a comment it does not close, or inside a variation: the brace or
            # parenthesis was never closed. Fail that record rather than swallow the rest of the
            # file. (A tag quoted in a comment that closes on the same line is comment text.)
            reader.fail(
                f"line {number}: {'comment' if reader.in_comment else 'variation'} not closed"
            )
            reader.in_comment = False
            reader.variation_depth = 0
        pos = 0
        end = len(line)
        while pos < end:
            if reader.in_comment:
                close = line.find("}", pos)
                reader.comment_length += (end + 1 if close < 0 else close) - pos
                if reader.comment_length > MAX_COMMENT_LENGTH:
                    reader.fail(
                        f"line {number}: a comment longer than {MAX_COMMENT_LENGTH} characters"
                    )
                if close < 0:
                    break
                reader.in_comment = False
                pos = close + 1
                continue
            char = line[pos]
            if char.isspace():
                pos += 1
            elif char == "{":
                reader.in_comment = True
                reader.comment_length = 0
                pos += 1
            elif char == ";":
                break
            elif char == "(":
                reader.start(number)
                reader.variation_depth += 1
                pos += 1
            elif reader.variation_depth:
                if char == ")":
                    reader.variation_depth -= 1
                pos += 1
            elif char == ")":
                reader.start(number)
                reader.fail(f"line {number}: ')' without '('")
                pos += 1
            elif char == "[":
                tag = _TAG.match(line, pos)
                game = reader.game
                if game.moves or game.result is not None or (tag and tag.group(1) in game.tags):
                    finished = reader.take()
                    if finished is not None:
                        yield finished
                reader.start(number)
                if tag is None:
                    reader.fail(f"line {number}: malformed tag {_excerpt(line[pos:].strip())!r}")
                    break
                name, value = tag.group(1), _ESCAPED.sub(r"\1", tag.group(2))
                pos = tag.end()
                if len(value) > MAX_TAG_LENGTH:
                    reader.fail(
                        f"line {number}: tag {_excerpt(name)} is longer than "
                        f"{MAX_TAG_LENGTH} characters"
                    )
                elif len(reader.game.tags) >= MAX_TAGS:
                    reader.fail(f"line {number}: more than {MAX_TAGS} tags")
                else:
                    reader.game.tags[name] = value
            else:
                token = _TOKEN.match(line, pos)
                reader.start(number)
                if token is None:
                    word = line[pos:].split(None, 1)[0]
                    reader.fail(f"line {number}: unexpected {_excerpt(word)!r}")
                    pos += len(word)
                    continue
                pos = token.end()
                if token.group("move"):
                    move = re.sub(r"\s+", "", token.group("move")).lower()
                    reader.game.moves.append(move)
                    if pos < end and line[pos].isalpha():
                        # `8-11Redoversteppedthetimecontrol.`: a remark typed without a space.
                        word = line[pos:].split(None, 1)[0]
                        reader.game.warnings.append(
                            f"line {number}: text glued to the move {move} read as a comment: "
                            f"{_excerpt(word)!r}"
                        )
                        pos += len(word)
                elif token.group("result"):
                    result = token.group("result")
                    reader.game.result = _RESULT_ALIASES.get(result) or Result(result)
                    finished = reader.take()
                    if finished is not None:
                        yield finished
    if reader.in_comment or reader.variation_depth:
        reader.start(number)
        reader.fail(f"line {number}: {'comment' if reader.in_comment else 'variation'} not closed")
    finished = reader.take()
    if finished is not None:
        yield finished


def _excerpt(text: str, limit: int = 40) -> str:
    """``text`` cut short for an error message (a binary file can have a megabyte-long word)."""
    return text if len(text) <= limit else text[: limit - 1] + "…"


def write_game(
    tags: Mapping[str, str],
    moves: Sequence[str | Move],
    result: str,
    comments: Mapping[int, str] | None = None,
) -> str:
    """One PDN record: tags in standard order, numbered moves wrapped near 80 columns, result.

    ``comments`` maps a ply (1 = first move) to text placed in ``{}`` after that move; clock
    readings go there. The output ends with a blank line so records can be concatenated.
    """
    if Result.parse(result) is None:
        raise ValueError(f"result must be one of {', '.join(Result)}, not {result!r}")
    values = dict(tags)
    values["Result"] = result
    order = [t for t in STANDARD_TAGS if t in values] + [
        t for t in values if t not in STANDARD_TAGS
    ]
    lines = [f'[{name} "{_escape(values[name])}"]' for name in order]

    white_first = values.get("FEN", "B").strip()[:1].upper() == "W"
    return "\n".join(lines) + "\n\n" + _movetext(moves, result, comments or {}, white_first)


_KEEP = "\x00"  # stands for a space inside a token (a move number, a comment) while wrapping
_NUMBERS = [f"{n}.{_KEEP}" for n in range(1, 501)]  # "1. " … "500. ", written before Black's moves


def _movetext(
    moves: Sequence[str | Move], result: str, notes: Mapping[int, str], white_first: bool
) -> str:
    """The numbered moves, comments and result, in lines of at most 80 columns broken only
    between tokens (a longer token stands alone)."""
    tokens: list[str] = []
    append = tokens.append
    for ply, move in enumerate(moves, 1):
        # Pairs are numbered from Black, the first mover; a number stays with its move.
        index = ply if white_first else ply - 1
        if not index & 1:
            number = index >> 1
            prefix = _NUMBERS[number] if number < len(_NUMBERS) else f"{number + 1}.{_KEEP}"
            append(prefix + (move if isinstance(move, str) else str(move)))
        elif ply == 1:
            append(f"1...{_KEEP}{move}")
        else:
            append(move if isinstance(move, str) else str(move))
        note = notes.get(ply)
        if note is not None:
            append(_comment(note))
    append(result)
    # One string, cut at the last space before each 81st column: a few searches per record
    # instead of a step per token.
    body = " ".join(tokens)
    lines = []
    start = 0
    while len(body) - start > 80:
        cut = body.rfind(" ", start, start + 81)
        if cut == -1:  # a token longer than a line
            cut = body.find(" ", start + 81)
            if cut == -1:
                break
        lines.append(body[start:cut])
        start = cut + 1
    lines.append(body[start:])
    return "\n".join(lines).replace(_KEEP, " ") + "\n\n"


@functools.lru_cache(maxsize=4096)
def _comment(note: str) -> str:
    """A comment as written after its move: in braces, any brace inside made a parenthesis.
    Cached: an export writes one per move, and clock readings repeat."""
    note = note.replace(_KEEP, "").replace("}", ")").replace("{", "(").replace(" ", _KEEP)
    return "{" + note + "}"


def _escape(value: str) -> str:
    value = value.replace("\\", "\\\\").replace('"', '\\"')
    return value.replace("\r\n", " ").replace("\r", " ").replace("\n", " ")
