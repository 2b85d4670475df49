"""Puzzles (docs/puzzles.md): positions from games where the side to move wins material or the
game by one clearly best line (`app.puzzles`), shipped with the server and loaded into the
database at start; served one at a time near the player's puzzle rating, solved move by move
against the server (which alone knows the solution: it shows it to whoever solved the puzzle or
has a try at it on record), and rated with Glicko-2 on the player's first try, the puzzle rated
too.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy.exc import IntegrityError

from app.db.engine import Database
from app.db.models import Puzzle, PuzzlePlayer
from app.errors import Code
from app.live.liveplay import LivePlay, PlayError
from app.puzzles import THEMES, VARIANTS
from app.puzzles import store as stored
from app.puzzles.generate import Puzzle as Found
from app.ratings import limits as ratings
from app.ratings.glicko2 import Glicko
from app.rules import Game, Position, RulesError
from app.timeutil import as_unix

PUZZLE_RD = 350.0  # a new puzzle's rating deviation: its first rating is a guess
RECENT = 20


@dataclass(frozen=True)
class Solver:
    """Who solves: a signed-in player (rated on their first try) or a guest (None)."""

    user_id: int | None


def row_of(puzzle: Found) -> dict[str, Any]:
    return {
        "key": puzzle.key,
        "variant": puzzle.variant,
        "fen": puzzle.fen,
        "before_fen": puzzle.before_fen,
        "last_move": puzzle.last_move,
        "moves": list(puzzle.moves),
        "themes": f" {' '.join(puzzle.themes)} ",
        "source": puzzle.source[:200],
        "rating": float(puzzle.rating),
        "rd": PUZZLE_RD,
        "volatility": ratings.DEFAULT.volatility,
        "plays": 0,
        "wins": 0,
    }


async def load(db: Database, puzzles: Sequence[Found]) -> int:
    """Store the puzzles not stored yet (by key); how many were new. Every server process
    does it at start: a puzzle is stored once whoever comes first, and puzzles of the server's
    own (`checkers puzzles generate`) stay beside the shipped ones."""
    async with db.session() as session:
        known = await stored.keys(session)
        missing = [row_of(p) for p in puzzles if p.key not in known]
        if not missing:
            return 0
        added = await stored.add_missing(session, missing)
        await session.commit()
    return added


def _position(row: Puzzle, moves: list[str]) -> Position:
    game = Game(row.variant, row.fen, automatic_draws=False)
    for text in moves:
        game.play(text)
    return game.position


def _line_fens(row: Puzzle) -> list[str]:
    """The FEN of the puzzle's position and after each move of its solution."""
    game = Game(row.variant, row.fen, automatic_draws=False)
    fens = [game.position.fen()]
    for text in row.moves:
        game.play(text)
        fens.append(game.position.fen())
    return fens


def view(row: Puzzle, *, solution: bool = False) -> dict[str, Any]:
    """A puzzle as served: the position and what leads to it, whose move it is and the legal
    moves, its themes and rating; the solution only once the solver is done with it."""
    position = _position(row, [])
    shown: dict[str, Any] = {
        "id": row.id,
        "variant": row.variant,
        "fen": row.fen,
        "before_fen": row.before_fen,
        "last_move": row.last_move,
        "turn": position.turn.value,
        "legal_moves": position.legal_move_texts(),
        "solver_moves": (len(row.moves) + 1) // 2,
        "themes": row.themes.split(),
        "rating": ratings.display(row.rating),
        "plays": row.plays,
        "solved_share": round(row.wins / row.plays, 3) if row.plays else None,
        "source": row.source,
        "solution": list(row.moves) if solution else None,
        "solution_fens": _line_fens(row) if solution else None,
    }
    return shown


async def next_puzzle(
    live: LivePlay, solver: Solver, variant: str, theme: str | None
) -> dict[str, Any]:
    """A puzzle for the solver: near their puzzle rating (1500 for a guest or a newcomer),
    one they have not tried yet, of ``theme`` if given."""
    if variant not in VARIANTS:
        raise PlayError(Code.BAD_REQUEST, f"no such variant: {variant}")
    if theme is not None and theme not in THEMES:
        raise PlayError(Code.BAD_REQUEST, f"no such theme: {theme}")
    async with live.db.session() as session:
        rating = ratings.DEFAULT.rating
        if solver.user_id is not None:
            mine = await stored.player(session, solver.user_id)
            if mine is not None:
                rating = mine.rating
        found = await stored.near(session, variant, rating, theme, solver.user_id)
        if not found:
            raise PlayError(Code.NOT_FOUND, "no puzzle left to try here: try another theme")
        return view(random.choice(found))


async def get(live: LivePlay, solver: Solver, puzzle_id: int) -> dict[str, Any]:
    """A puzzle by its number; its solution too for a player who has tried it."""
    async with live.db.session() as session:
        row = await stored.get(session, puzzle_id)
        if row is None:
            raise PlayError(Code.NOT_FOUND, f"no puzzle {puzzle_id}")
        tried = solver.user_id is not None and (
            await stored.round_of(session, solver.user_id, puzzle_id) is not None
        )
        return view(row, solution=tried)


def judge(row: Puzzle, moves: list[str]) -> tuple[bool, bool]:
    """Whether the last of ``moves`` (the solver's, after the line so far) is right, and
    whether the puzzle is over. ``bad_request`` for moves that do not follow the line or a
    move that is not legal."""
    line = list(row.moves)
    if not moves or len(moves) % 2 == 0 or len(moves) > len(line):
        raise PlayError(
            Code.BAD_REQUEST, "send the line so far and your move: an odd number of moves"
        )
    game = Game(row.variant, row.fen, automatic_draws=False)
    for index, (text, expected) in enumerate(zip(moves[:-1], line, strict=False), 1):
        try:
            same = game.position.parse_move(text) == game.position.parse_move(expected)
        except RulesError:
            same = False
        if not same:
            raise PlayError(Code.BAD_REQUEST, f"move {index} ({text}) is not the line played")
        game.play(expected)
    try:
        move = game.position.parse_move(moves[-1])
    except RulesError as exc:
        raise PlayError(Code.ILLEGAL_MOVE, str(exc)) from None
    if move == game.position.parse_move(line[len(moves) - 1]):
        return True, len(moves) == len(line)
    # Another move that ends the game at once wins as well as the line does.
    wins_now = not game.position.play(move).has_legal_moves()
    return wins_now, True


async def attempt(
    live: LivePlay, solver: Solver, puzzle_id: int, moves: list[str]
) -> dict[str, Any]:
    """The solver's next move (``moves``: the line so far and that move): right or wrong at
    once; the reply when right and not over; when over, the rating change of a signed-in
    player's first try, then the solution if solved. A wrong move shows no more than the
    line's move at its ply, and only to a solver whose try is now on record (rated if it was
    the first): a visitor's answer would let an account of theirs solve it, as its first try."""
    async with live.db.session() as session:
        row = await stored.get(session, puzzle_id)
        if row is None:
            raise PlayError(Code.NOT_FOUND, f"no puzzle {puzzle_id}")
        right, over = judge(row, moves)
        line = list(row.moves)
        moved = _position(row, [*line[: len(moves) - 1], moves[-1]])
        answer: dict[str, Any] = {
            "puzzle": row.id,
            "correct": right,
            "done": over,
            "moved_fen": moved.fen(),
        }
        if not over:
            reply = line[len(moves)]
            position = moved.play(moved.parse_move(reply))
            answer |= {
                "reply": reply,
                "fen": position.fen(),
                "legal_moves": position.legal_move_texts(),
            }
            return answer
        fens = _line_fens(row) if right else None  # read before a rollback expires the row
        answer |= {"rated": False, "rating": None}
        if solver.user_id is not None:
            try:
                answer |= await _rate(live, session, solver.user_id, puzzle_id, right)
                await session.commit()
            except IntegrityError:  # the same first try sent twice at once: the other counted
                await session.rollback()
                answer |= {"rated": False, "rating": None}
        if right:
            answer |= {"solution": line, "solution_fens": fens}
        elif solver.user_id is not None:  # on record: as lichess, the move that was wanted
            answer["correct_move"] = line[len(moves) - 1]
        return answer


async def _rate(
    live: LivePlay, session: Any, user_id: int, puzzle_id: int, solved: bool
) -> dict[str, Any]:
    """Rate a player's first try (and the puzzle, as its opponent); later tries rate
    nobody."""
    if await stored.round_of(session, user_id, puzzle_id) is not None:
        return {}
    now = live.clock.now()
    mine = await stored.player(session, user_id, lock=True)
    if mine is None:
        mine = PuzzlePlayer(
            user_id=user_id,
            rating=ratings.DEFAULT.rating,
            rd=ratings.DEFAULT.rd,
            volatility=ratings.DEFAULT.volatility,
            played=0,
            solved=0,
        )
        session.add(mine)
    row = await stored.get(session, puzzle_id, lock=True)
    assert row is not None
    last = as_unix(mine.last_at) if mine.last_at is not None else None
    player = Glicko(
        mine.rating,
        ratings.live_rd(Glicko(mine.rating, mine.rd, mine.volatility), last, as_unix(now)),
        mine.volatility,
    )
    puzzle = Glicko(row.rating, row.rd, row.volatility)
    change, against = ratings.rate_game(player, puzzle, 1.0 if solved else 0.0)
    _keep(mine, change.after)
    mine.played += 1
    mine.solved += int(solved)
    mine.last_at = now
    _keep(row, against.after)
    row.plays += 1
    row.wins += int(solved)
    after = ratings.display(change.after.rating)
    session.add(stored.new_round(user_id, puzzle_id, solved, now, after, change.diff))
    await session.flush()
    return {"rated": True, "rating": {"after": after, "diff": change.diff}}


def _keep(rated: Puzzle | PuzzlePlayer, glicko: Glicko) -> None:
    rated.rating, rated.rd, rated.volatility = glicko.rating, glicko.rd, glicko.volatility


async def dashboard(live: LivePlay, user_id: int) -> dict[str, Any]:
    """A player's puzzle rating and latest tries."""
    async with live.db.session() as session:
        mine = await stored.player(session, user_id)
        recent = await stored.rounds(session, user_id, RECENT)
    now = as_unix(live.clock.now())
    if mine is None:
        rating: dict[str, Any] = {
            "rating": ratings.display(ratings.DEFAULT.rating),
            "rd": round(ratings.DEFAULT.rd),
            "provisional": True,
            "played": 0,
            "solved": 0,
        }
    else:
        last = as_unix(mine.last_at) if mine.last_at is not None else None
        rd = ratings.live_rd(Glicko(mine.rating, mine.rd, mine.volatility), last, now)
        rating = {
            "rating": ratings.display(mine.rating),
            "rd": round(rd),
            "provisional": ratings.provisional(rd),
            "played": mine.played,
            "solved": mine.solved,
        }
    return rating | {
        "recent": [
            {
                "puzzle": r.puzzle_id,
                "solved": r.solved,
                "at": int(as_unix(r.at) * 1000),
                "rating_after": r.rating_after,
                "rating_diff": r.rating_diff,
            }
            for r in recent
        ]
    }


async def themes(live: LivePlay, variant: str) -> dict[str, int]:
    if variant not in VARIANTS:
        raise PlayError(Code.BAD_REQUEST, f"no such variant: {variant}")
    async with live.db.session() as session:
        return await stored.themes(session, variant)
