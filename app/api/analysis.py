"""`/api/games/{id}/analysis`: a finished game's computer analysis, asked for and read
(docs/analysis.md)."""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Depends, Query, Request, Response, status
from pydantic import BaseModel, ConfigDict

from app.analysis import service as analysis
from app.analysis.board import Board
from app.analysis.game import MAX_DEPTH
from app.api.auth import client_address
from app.api.common.deps import CurrentUser, LiveDep, OptionalUser, SessionDep
from app.api.common.errors import ApiError, ErrorBody
from app.api.common.params import GameId
from app.api.common.viewer import InviteQuery
from app.archive.visibility import Viewer
from app.errors import Code

router = APIRouter(prefix="/api", tags=["analysis"])

ERRORS: dict[int | str, dict[str, Any]] = {
    401: {"model": ErrorBody, "description": "No valid bearer token (asking needs one)."},
    404: {
        "model": ErrorBody,
        "description": "No such game, a private game of others, or (reading) none asked for "
        "(`not_found`).",
    },
    409: {"model": ErrorBody, "description": "A game in progress, or without a move (`conflict`)."},
    429: {
        "model": ErrorBody,
        "description": "One analysis of yours is still waiting, or the day's analyses of your "
        "account or address are used up (`rate_limited`, with `Retry-After`).",
    },
}


class Evaluation(BaseModel):
    """From Black's side: `cp` centipieces, or a forced win in `win_in` of the winner's moves
    (`black_wins` says whose); `text` as `checkers analyse` prints it (`+35`, `#-3`)."""

    cp: int | None
    win_in: int | None
    black_wins: bool | None
    text: str


class AnalysedPly(BaseModel):
    model_config = ConfigDict(extra="allow")

    ply: int
    move: str
    eval: Evaluation
    wdl: list[int]  # Black's win, draw and loss in thousandths
    best: str | None  # the best move in the position before this one
    pv: list[str]  # its line
    label: Literal["inaccuracy", "mistake", "blunder"] | None


class Progress(BaseModel):
    done: int
    total: int


class Accuracy(BaseModel):
    black: float | None
    white: float | None


class AnalysisPublic(BaseModel):
    """A game's analysis: `queued` (`ahead`: analyses in front of it), `running` (`progress`:
    positions searched of `total`), `done` (`plies`, `accuracy`) or `failed` (`error`)."""

    model_config = ConfigDict(extra="allow")

    game: int
    status: Literal["queued", "running", "done", "failed"]
    nodes: int
    progress: Progress
    ahead: int | None
    requested_at: int
    finished_at: int | None
    plies: list[AnalysedPly]
    accuracy: Accuracy | None


async def _viewer(user: OptionalUser, session: SessionDep, invite: InviteQuery = None) -> Viewer:
    """Who reads (the request's session given back at once: the service opens its own)."""
    viewer = (
        Viewer(invite=invite) if user is None else Viewer(user.id, user.role == "admin", invite)
    )
    await session.close()
    return viewer


async def _asker(user: CurrentUser, session: SessionDep, request: Request) -> analysis.Asker:
    asker = analysis.Asker(user.id, user.role == "admin", client_address(request))
    await session.close()
    return asker


@router.post(
    "/games/{game_id}/analysis",
    status_code=status.HTTP_202_ACCEPTED,
    responses={**ERRORS, 200: {"description": "Asked for before: the analysis as it is."}},
)
async def request_analysis(
    game_id: GameId,
    asker: Annotated[analysis.Asker, Depends(_asker)],
    live: LiveDep,
    request: Request,
    response: Response,
) -> AnalysisPublic:
    """Ask for the game's analysis (a finished game: one of its players, or anyone signed in
    for a public game). 202 when queued now; 200 with the analysis when it was asked for
    before. Read it with GET as it progresses."""
    shown, queued = await analysis.request(live, asker, game_id)
    if queued:  # this process's workers take it at once (the others look every second)
        request.app.state.analyses.wake.set()
    else:
        response.status_code = status.HTTP_200_OK
    return AnalysisPublic.model_validate(shown)


@router.get("/games/{game_id}/analysis", responses=ERRORS)
async def get_analysis(
    game_id: GameId, viewer: Annotated[Viewer, Depends(_viewer)], live: LiveDep
) -> AnalysisPublic:
    """The game's analysis as far as it has got, for anyone who may see the game."""
    return AnalysisPublic.model_validate(await analysis.get(live, game_id, viewer))


# --- the analysis board ---------------------------------------------------------------------

MAX_BOARD_MOVES = 400
MOVE_TEXT = re.compile(r"[0-9x\-]{3,80}")


class EngineLine(BaseModel):
    depth: int
    eval: Evaluation
    wdl: list[int]
    best: str | None
    pv: list[str]


class BoardPosition(BaseModel):
    """The analysis board's position after `moves` from `start_fen`: whose turn, the legal
    moves, the result if the game is over there, and (asked with `depth`) the engine's line."""

    variant: Literal["english", "pool"]
    start_fen: str
    moves: list[str]
    fen: str
    turn: Literal["black", "white"]
    legal_moves: list[str]
    result: str | None
    termination: str | None
    line: EngineLine | None


BOARD_ERRORS: dict[int | str, dict[str, Any]] = {
    400: {
        "model": ErrorBody,
        "description": "Not a position, or a move that is not legal (`bad_request`, naming it).",
    },
    429: {
        "model": ErrorBody,
        "description": "Too many requests from your address, in progress or searches in the "
        "last minute, or the board busy with everyone's (`rate_limited`, `Retry-After`).",
    },
}


@router.get("/analysis/position", responses=BOARD_ERRORS)
async def board_position(
    request: Request,
    live: LiveDep,
    variant: Annotated[Literal["english", "pool"], Query()] = "english",
    fen: Annotated[
        str | None, Query(max_length=200, description="The start position (default: the usual).")
    ] = None,
    moves: Annotated[
        str | None,
        Query(
            max_length=MAX_BOARD_MOVES * 8,
            description="Moves played from it, comma-separated (`11-15,23-19`).",
        ),
    ] = None,
    depth: Annotated[
        int | None,
        Query(ge=1, le=MAX_DEPTH, description="Search the position to this depth."),
    ] = None,
) -> BoardPosition:
    """The analysis board: any position of either variant, moves played freely from it, and
    the engine's line at a depth (ask for one depth after another to see it deepen). Searches
    run in the analysis processes, at most 120 a minute and one at a time per address; a few
    requests at a time per address, and beyond what the server takes in at once, 429."""
    played = [m for m in (moves or "").split(",") if m]
    if len(played) > MAX_BOARD_MOVES or not all(map(MOVE_TEXT.fullmatch, played)):
        raise ApiError(Code.BAD_REQUEST, f"moves: at most {MAX_BOARD_MOVES}, each like 11-15")
    board: Board = request.app.state.board
    shown = await board.position(live, client_address(request), variant, fen, played, depth)
    return BoardPosition.model_validate(shown)
