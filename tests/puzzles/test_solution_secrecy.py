"""A puzzle's solution stays the server's (issue 45): a wrong move's answer tells nothing to a
solver whose try is not on record (a visitor, a guest), and to a registered player only the
line's move at that ply, once the try is recorded and rated as lost; a try after the first is
never rated. (The review's fresh account read each solution by posting one wrong move as a
visitor, then solved as itself: 1500 to 2908 in 6 s.)"""

from __future__ import annotations

from typing import Any

import httpx
from sqlalchemy import select

from app.db.engine import Database
from app.db.models import Puzzle
from app.rules import Game
from tests.puzzles.test_service import bearer, solution_of
from tests.support.server import Served
from tests.support.ws import guest_token, member_token


async def long_puzzle(db_url: str) -> int:
    """A puzzle of two moves of the solver or more, with a move other than the solution's at
    its last."""
    db = Database(db_url)
    try:
        async with db.session() as session:
            rows = (await session.scalars(select(Puzzle).order_by(Puzzle.id))).all()
    finally:
        await db.dispose()
    for row in rows:
        shown = {"variant": row.variant, "fen": row.fen}
        line = list(row.moves)
        if len(line) >= 3 and wrong_after(shown, line[:-1], line) is not None:
            return row.id
    raise AssertionError("no such puzzle shipped")


def wrong_after(puzzle: dict[str, Any], line: list[str], solution: list[str]) -> str | None:
    """A legal move after `line` (the solution's first moves) that is not the solution's."""
    game = Game(puzzle["variant"], puzzle["fen"])
    for move in line:
        game.play(move)
    right = game.position.parse_move(solution[len(line)])
    return next((m for m in game.legal_move_texts() if game.position.parse_move(m) != right), None)


async def try_moves(http: httpx.AsyncClient, puzzle: int, moves: list[str]) -> dict[str, Any]:
    answer = await http.post(f"/api/puzzles/{puzzle}/moves", json={"moves": moves})
    assert answer.status_code == 200, answer.text
    verdict: dict[str, Any] = answer.json()
    return verdict


async def test_a_wrong_move_tells_nothing_to_a_solver_not_on_record(
    server: Served, db_url: str
) -> None:
    guest = await guest_token(server.url)
    for headers in ({}, bearer(guest)):  # a visitor, and a guest account
        async with server.http(headers=headers) as http:
            puzzle = (await http.get("/api/puzzles/next")).json()
            solution = await solution_of(db_url, puzzle["id"])
            first_wrong = wrong_after(puzzle, [], solution)
            assert first_wrong is not None  # a puzzle starts with two legal moves or more
            verdict = await try_moves(http, puzzle["id"], [first_wrong])
            assert (verdict["correct"], verdict["done"], verdict["rated"]) == (False, True, False)
            assert verdict["solution"] is None and verdict["solution_fens"] is None
            assert verdict.get("correct_move") is None
            assert "reply" not in verdict or verdict["reply"] is None
            # Nor does the puzzle itself, asked again.
            assert (await http.get(f"/api/puzzles/{puzzle['id']}")).json()["solution"] is None


async def test_a_wrong_move_is_rated_before_the_move_at_its_ply_is_shown(
    server: Served, db_url: str
) -> None:
    token = await member_token(server.url, "tess")
    async with server.http(headers=bearer(token)) as http:
        # The line so far right, the solver's last move wrong.
        puzzle = (await http.get(f"/api/puzzles/{await long_puzzle(db_url)}")).json()
        solution = await solution_of(db_url, puzzle["id"])
        line = solution[:-1]
        wrong = wrong_after(puzzle, line, solution)
        assert wrong is not None
        verdict = await try_moves(http, puzzle["id"], [*line, wrong])
        assert (verdict["correct"], verdict["done"]) == (False, True)
        assert verdict["rated"] is True and verdict["rating"]["diff"] < 0
        # The line's move there, and no more: not the solution, not its positions.
        assert verdict["solution"] is None and verdict["solution_fens"] is None
        assert verdict["correct_move"] == solution[-1]
        mine = (await http.get("/api/puzzles/dashboard")).json()
        assert (mine["played"], mine["solved"]) == (1, 0)
        assert mine["rating"] == verdict["rating"]["after"] < 1500
        # Tried (and rated): the puzzle now shows its solution to this player, as lichess's
        # "view the solution" does.
        assert (await http.get(f"/api/puzzles/{puzzle['id']}")).json()["solution"] == solution
        # Trying again is never rated, wrong or right.
        first_wrong = wrong_after(puzzle, [], solution)
        assert first_wrong is not None
        again = await try_moves(http, puzzle["id"], [first_wrong])
        assert again["rated"] is False and again["correct_move"] == solution[0]
        solved = await try_moves(http, puzzle["id"], solution[:1])
        assert solved["correct"] is True and solved["rated"] in (False, None)
        after = (await http.get("/api/puzzles/dashboard")).json()
        assert (after["played"], after["rating"]) == (1, mine["rating"])
