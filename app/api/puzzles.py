"""`/api/puzzles`: puzzles from real games, solved move by move against the server, and each
player's puzzle rating (docs/puzzles.md)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Depends, Path, Query
from pydantic import BaseModel, ConfigDict, Field

from app.api.common.deps import CurrentUser, LiveDep, OptionalUser, SessionDep
from app.api.common.errors import ErrorBody
from app.api.common.params import DIGITS, MAX_ID
from app.puzzles import Theme
from app.puzzles import service as puzzles
from app.status import UserKind

router = APIRouter(prefix="/api/puzzles", tags=["puzzles"])

PuzzleId = Annotated[int, Path(ge=1, le=MAX_ID, description="Puzzle id."), DIGITS]
MOVE_TEXT = r"^[0-9x\-]{3,80}$"
MAX_LINE = 40

ERRORS: dict[int | str, dict[str, Any]] = {
    404: {"model": ErrorBody, "description": "No such puzzle (`not_found`)."},
}


class PuzzlePublic(BaseModel):
    """A puzzle: the position (`fen`, the solver to move), the opponent's move that led to it
    (`last_move`, from `before_fen`), the legal moves, how many moves the solver makes, its
    themes and rating; `solution` once you have tried it."""

    model_config = ConfigDict(extra="allow")

    id: int
    variant: Literal["english", "pool"]
    fen: str
    before_fen: str | None
    last_move: str | None
    turn: Literal["black", "white"]
    legal_moves: list[str]
    solver_moves: int
    themes: list[str]
    rating: int
    plays: int
    solved_share: float | None
    source: str
    solution: list[str] | None
    solution_fens: list[str] | None  # the position, then after each move of the solution


class Attempt(BaseModel):
    """The line so far (your moves and the replies, as the server sent them) and your next
    move: an odd number of moves."""

    model_config = ConfigDict(extra="forbid")

    moves: list[Annotated[str, Field(pattern=MOVE_TEXT)]] = Field(min_length=1, max_length=MAX_LINE)


class RatingChange(BaseModel):
    after: int
    diff: int


class Verdict(BaseModel):
    """Your move: `correct` or not, and whether the puzzle is `done`. Not done: the `reply`
    and the position after it (`fen`, `legal_moves`). Done: for a registered player's first
    try (`rated`) the new puzzle rating; solved, the `solution` (and the position after each of
    its moves); wrong, for a registered player only (whose try is then on record), the
    `correct_move` at that ply, and the solution from `GET /api/puzzles/{id}`."""

    puzzle: int
    correct: bool
    done: bool
    moved_fen: str  # the position after your move
    reply: str | None = None
    fen: str | None = None
    legal_moves: list[str] | None = None
    solution: list[str] | None = None
    solution_fens: list[str] | None = None
    correct_move: str | None = None  # the line's move where yours was wrong
    rated: bool | None = None
    rating: RatingChange | None = None


class Round(BaseModel):
    puzzle: int
    solved: bool
    at: int
    rating_after: int
    rating_diff: int


class Dashboard(BaseModel):
    """Your puzzle rating (one for both variants), how many you played and solved, and your
    latest tries."""

    rating: int
    rd: int
    provisional: bool
    played: int
    solved: int
    recent: list[Round]


async def _solver(user: OptionalUser, session: SessionDep) -> puzzles.Solver:
    """A registered player solves as themself (rated); a guest account as anybody."""
    registered = user is not None and user.kind == UserKind.REGISTERED
    solver = puzzles.Solver(user.id if user is not None and registered else None)
    await session.close()  # the service opens its own
    return solver


SolverDep = Annotated[puzzles.Solver, Depends(_solver)]


@router.get("/next", responses={404: {"model": ErrorBody, "description": "None left to try."}})
async def next_puzzle(
    solver: SolverDep,
    live: LiveDep,
    variant: Annotated[Literal["english", "pool"], Query()] = "english",
    theme: Annotated[Theme | None, Query()] = None,
) -> PuzzlePublic:
    """A puzzle to solve: near your puzzle rating, one you have not tried (a guest: near
    1500), of `theme` if given."""
    return PuzzlePublic.model_validate(await puzzles.next_puzzle(live, solver, variant, theme))


@router.get("/themes")
async def puzzle_themes(
    live: LiveDep, variant: Annotated[Literal["english", "pool"], Query()] = "english"
) -> dict[str, int]:
    """Each theme of the variant's puzzles, with how many puzzles have it."""
    return await puzzles.themes(live, variant)


@router.get("/dashboard", responses={401: {"model": ErrorBody, "description": "Signed in only."}})
async def dashboard(user: CurrentUser, session: SessionDep, live: LiveDep) -> Dashboard:
    """Your puzzle rating and latest tries."""
    user_id = user.id
    await session.close()
    return Dashboard.model_validate(await puzzles.dashboard(live, user_id))


@router.get("/{puzzle_id}", responses=ERRORS)
async def get_puzzle(puzzle_id: PuzzleId, solver: SolverDep, live: LiveDep) -> PuzzlePublic:
    """A puzzle by its number (shareable); its solution too once you have tried it."""
    return PuzzlePublic.model_validate(await puzzles.get(live, solver, puzzle_id))


@router.post(
    "/{puzzle_id}/moves",
    responses={
        **ERRORS,
        400: {
            "model": ErrorBody,
            "description": "An even number of moves, or moves that are not the line so far "
            "(`bad_request`).",
        },
        409: {"model": ErrorBody, "description": "Your move is not legal (`illegal_move`)."},
    },
)
async def solve(puzzle_id: PuzzleId, attempt: Attempt, solver: SolverDep, live: LiveDep) -> Verdict:
    """Play your next move: right or wrong at once. A wrong move ends the puzzle; so does the
    last move of the solution. Your first try at a puzzle moves your puzzle rating (and the
    puzzle's); later tries, and guests' tries, move nobody's. The solution is shown to whoever
    solves it; after a wrong move, only to a registered player, once the try is recorded."""
    return Verdict.model_validate(await puzzles.attempt(live, solver, puzzle_id, attempt.moves))
