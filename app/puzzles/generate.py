"""Puzzles found in games (docs/puzzles.md).

A position of a game becomes a puzzle when the side to move (the solver) wins material or the
game by one clearly best line. The rule is lichess's: at every move of the solver, the best
move's winning chances (``app.analysis.chances``) exceed every other move's by at least
``MARGIN``, so that any other move would be a blunder by the analysis's own labels. The
opponent answers with the engine's best reply. The line ends, on a move of the solver, once the
solver is at least one piece up on the position before (and the opponent has no capture to
take it back), or has won; in English draughts a line that reaches an ending of the endgame
database (``app.engine.egdb_outcome``) is checked against its exact results at every move.

Finding them takes two passes: a quick search of every position (``SCAN_NODES``) keeps the
ones where the engine sees the solver gaining a piece, then each legal move of those is searched
(``VERIFY_NODES`` each) to find the line and check it is the only one.

Pure: no I/O; plain values in and out, so a process pool can run it.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal, get_args

from app.analysis import chances
from app.analysis.chances import WON
from app.engine import Limits, egdb_outcome, search_position
from app.rules import Color, Game, Move, Position

SCAN_NODES = 4_000
VERIFY_NODES = 30_000
MARGIN = chances.BLUNDER
"""How much better, in winning chances (-1 to +1), the best move must be than the second."""
GAIN_CP = 75
"""A line counts as winning material when the search says the solver ends at least this many
hundredths of a man better off than the material now."""
MAX_SOLVER_MOVES = 6
FIRST_PLY = 6
"""Positions before this ply are the opening: known lines, not puzzles."""
ENDGAME_PIECES = 8
Theme = Literal[
    "crowning",
    "endgame",
    "long",
    "material",
    "middlegame",
    "multi_jump",
    "one_move",
    "opening",
    "quiet_move",
    "short",
    "shot",
    "win",
]
THEMES: tuple[str, ...] = get_args(Theme)
BASE_RATING = 1500


@dataclass(frozen=True, slots=True)
class Puzzle:
    """``fen``: the position, the solver to move; ``moves``: the solution, the solver's moves
    and the opponent's replies in turn, ending on the solver's; ``last_move``: the opponent's
    move that led to ``fen`` (from ``before_fen``), for context."""

    variant: str
    fen: str
    moves: tuple[str, ...]
    themes: tuple[str, ...]
    rating: int
    source: str
    before_fen: str | None = None
    last_move: str | None = None

    @property
    def key(self) -> str:
        """A stable name: the same position and solution give the same key."""
        text = f"{self.variant}|{self.fen}|{' '.join(self.moves)}"
        return hashlib.sha256(text.encode()).hexdigest()[:16]

    def record(self) -> dict[str, object]:
        """As shipped (one JSON line each)."""
        return {
            "key": self.key,
            "variant": self.variant,
            "fen": self.fen,
            "moves": list(self.moves),
            "themes": list(self.themes),
            "rating": self.rating,
            "source": self.source,
            "before_fen": self.before_fen,
            "last_move": self.last_move,
        }

    @classmethod
    def from_record(cls, data: dict[str, object]) -> Puzzle:
        moves = data["moves"]
        themes = data.get("themes") or []
        assert isinstance(moves, list) and isinstance(themes, list)
        before, last = data.get("before_fen"), data.get("last_move")
        return cls(
            variant=str(data["variant"]),
            fen=str(data["fen"]),
            moves=tuple(str(m) for m in moves),
            themes=tuple(str(t) for t in themes),
            rating=int(str(data.get("rating", BASE_RATING))),
            source=str(data.get("source", "")),
            before_fen=str(before) if before is not None else None,
            last_move=str(last) if last is not None else None,
        )


@dataclass(slots=True)
class Scan:
    """What a pass over some games found: the puzzles and how many positions it looked at."""

    puzzles: list[Puzzle] = field(default_factory=list)
    positions: int = 0
    candidates: int = 0


def balance(position: Position, side: Color) -> int:
    """Pieces of ``side`` less the other side's."""
    return position.count(side) - position.count(side.other)


def _score(found: int) -> float:
    """A search score's winning chances for the side it belongs to."""
    if found > WON:
        return 1.0
    if found < -WON:
        return -1.0
    return chances.chances(found)


def move_values(
    position: Position, history: Sequence[Position], nodes: int
) -> list[tuple[Move, int]]:
    """Every legal move with its score for the side to move (each child searched at ``nodes``),
    best first; a move that leaves the opponent without a move scores as a win."""
    budget = Limits(nodes=nodes, egdb=True, seed=0)
    path = [*history, position]
    values = []
    for move in position.legal_moves():
        child = position.play(move)
        if not child.has_legal_moves():
            values.append((move, WON + 1000))
            continue
        values.append((move, -search_position(child, budget, path).score))
    values.sort(key=lambda pair: -pair[1])
    return values


def gains(position: Position, line: Sequence[str], baseline: int) -> bool:
    """Whether ``line`` (a search's principal variation) wins the side to move the game, or a
    piece on ``baseline`` that the opponent cannot take back at once."""
    solver = position.turn
    current = position
    for index, text in enumerate(line[: 2 * MAX_SOLVER_MOVES]):
        current = current.play(current.parse_move(text))
        replies = current.legal_moves()
        if not replies:
            return current.turn is not solver
        if index % 2 == 0 and egdb_outcome(current) == -1:
            return True  # an ending the database gives the solver
        ahead = index % 2 == 0 and balance(current, solver) - baseline >= 1
        if ahead and not replies[0].is_capture:
            return True
    return False


def _egdb_agrees(position: Position, chosen: Move) -> bool:
    """In an ending of the database: the chosen move wins and no other does."""
    for move in position.legal_moves():
        child = position.play(move)
        exact = egdb_outcome(child)
        if exact is None:
            return True  # not an ending the database holds
        wins = exact == -1 or not child.has_legal_moves()
        if wins != (move == chosen):
            return False
    return True


def solve(
    position: Position,
    history: Sequence[Position],
    baseline: int,
    nodes: int = VERIFY_NODES,
) -> tuple[tuple[str, ...], bool] | None:
    """The puzzle's line from ``position`` (the solver to move; ``baseline``: the solver's
    material to gain on), and whether it wins the game; None where there is no such line or
    more than one."""
    solver = position.turn
    line: list[str] = []
    path = list(history)
    current = position
    # Most candidates have a second move about as good: a search of a sixth of the budget
    # turns them away before the full one (which alone accepts a puzzle).
    first = move_values(current, path, max(1_000, nodes // 6))
    if len(first) > 1 and _score(first[0][1]) - _score(first[1][1]) < MARGIN:
        return None
    for _ in range(MAX_SOLVER_MOVES):
        values = move_values(current, path, nodes)
        best, score = values[0]
        if len(values) > 1 and _score(score) - _score(values[1][1]) < MARGIN:
            return None  # another move is about as good: not one clear line
        if score < 100 * baseline + GAIN_CP and score <= WON:
            return None  # the best move no longer wins anything
        exact = egdb_outcome(current) if len(values) > 1 else None
        if exact is not None and not _egdb_agrees(current, best):
            return None
        path.append(current)
        current = current.play(best)
        line.append(str(best))
        if not current.has_legal_moves():
            return tuple(line), True
        exact = egdb_outcome(current)
        if exact == -1:  # the opponent to move is lost: the database's win
            return tuple(line), True
        replies = current.legal_moves()
        ahead = balance(current, solver) - baseline >= 1
        if ahead and not replies[0].is_capture:
            return tuple(line), False
        reply = search_position(current, Limits(nodes=nodes, egdb=True, seed=0), path).move
        path.append(current)
        current = current.play(reply)
        line.append(reply)
    return None


def themes_of(position: Position, line: Sequence[str], won: bool, ply: int) -> tuple[str, ...]:
    """The puzzle's themes (docs/puzzles.md)."""
    found: set[str] = set()
    current = position
    solver = position.turn
    baseline = balance(position, solver)
    pieces = position.count(Color.BLACK) + position.count(Color.WHITE)
    found.add("endgame" if pieces <= ENDGAME_PIECES else "opening" if ply < 20 else "middlegame")
    for index, text in enumerate(line):
        move = current.parse_move(text)
        kings_before = current.count(current.turn, kings=True)
        after = current.play(move)
        if index % 2 == 0:  # the solver's
            if len(move.captured) >= 2:
                found.add("multi_jump")
            if after.count(current.turn, kings=True) > kings_before:
                found.add("crowning")
        elif balance(after, solver) < baseline:
            found.add("shot")  # the solver gave material, to win more
        current = after
    first = position.parse_move(line[0])
    if not first.is_capture:
        found.add("quiet_move")
    found.add("win" if won else "material")
    solver_moves = (len(line) + 1) // 2
    found.add("one_move" if solver_moves == 1 else "short" if solver_moves == 2 else "long")
    return tuple(sorted(found))


def rating_of(position: Position, line: Sequence[str], themes: Sequence[str]) -> int:
    """A first guess at the puzzle's rating, before anybody has played it: longer lines, quiet
    first moves and sacrifices are harder. Glicko-2 corrects it as people play."""
    solver_moves = (len(line) + 1) // 2
    rating = 1100 + 150 * solver_moves
    if "quiet_move" in themes:
        rating += 150
    if "shot" in themes:
        rating += 150
    rating += 10 * min(10, len(position.legal_moves()))
    return rating


def scan_game(
    variant: str,
    moves: Sequence[str],
    start_fen: str | None,
    source: str,
    scan_nodes: int = SCAN_NODES,
    verify_nodes: int = VERIFY_NODES,
) -> Scan:
    """The puzzles of one game: every position from ``FIRST_PLY`` on looked at (at most one
    puzzle per solver per five plies, so one combination gives one puzzle)."""
    game = Game(variant, start_fen, automatic_draws=False)
    positions = [game.position]
    played: list[str] = []
    for text in moves:
        played.append(str(game.play(text)))
        positions.append(game.position)
    scan = Scan()
    taken_until = {Color.BLACK: -1, Color.WHITE: -1}
    budget = Limits(nodes=scan_nodes, egdb=True, seed=0)
    # A game from the start position: its opening is known lines. A position set up (a
    # problem, with or without its moves): from its first position.
    for ply in range(FIRST_PLY if start_fen is None else 0, len(positions)):
        position = positions[ply]
        solver = position.turn
        if ply <= taken_until[solver] or len(position.legal_moves()) < 2:
            continue
        scan.positions += 1
        # The material to gain on: before the opponent's last move too, so that taking back
        # a piece just lost in an exchange is not a puzzle.
        baseline = balance(position, solver)
        if ply > 0:
            baseline = max(baseline, balance(positions[ply - 1], solver))
        quick = search_position(position, budget, positions[:ply])
        if quick.score <= WON and (
            quick.score < 100 * baseline + GAIN_CP or not gains(position, quick.pv, baseline)
        ):
            continue  # neither a forced win nor a line that wins a piece
        scan.candidates += 1
        solved = solve(position, positions[:ply], baseline, verify_nodes)
        if solved is None:
            continue
        line, won = solved
        themes = themes_of(position, line, won, ply)
        scan.puzzles.append(
            Puzzle(
                variant=variant,
                fen=position.fen(),
                moves=line,
                themes=themes,
                rating=rating_of(position, line, themes),
                source=f"{source}, ply {ply}",
                before_fen=positions[ply - 1].fen() if ply > 0 else None,
                last_move=played[ply - 1] if ply > 0 else None,
            )
        )
        taken_until[solver] = ply + 4
    return scan


def check(puzzle: Puzzle, nodes: int = VERIFY_NODES) -> str | None:
    """What is wrong with a puzzle (its solution does not replay, or at some move of the
    solver another move is about as good), or None."""
    game = Game(puzzle.variant, puzzle.fen, automatic_draws=False)
    history: list[Position] = []
    for index, text in enumerate(puzzle.moves):
        position = game.position
        try:
            move = position.parse_move(text)
        except ValueError as exc:
            return f"move {index + 1} ({text}) is not legal: {exc}"
        if index % 2 == 0:
            values = move_values(position, history, nodes)
            if values[0][0] != move:
                return f"move {index + 1}: the best move is {values[0][0]}, not {text}"
            if len(values) > 1 and _score(values[0][1]) - _score(values[1][1]) < MARGIN:
                return f"move {index + 1}: {values[1][0]} is about as good as {text}"
        history.append(position)
        game.play(move)
    return None
