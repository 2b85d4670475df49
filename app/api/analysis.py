"""`/api/games/{id}/analysis`: a finished game's computer analysis, asked for and read
(docs/analysis.md)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Depends, Request, Response, status
from pydantic import BaseModel, ConfigDict

from app.api.auth import client_address
from app.api.deps import CurrentUser, LiveDep, OptionalUser, SessionDep
from app.api.errors import ErrorBody
from app.api.params import GameId
from app.api.viewer import InviteQuery
from app.services import analysis
from app.services.visibility import Viewer

router = APIRouter(prefix="/api/games", tags=["analysis"])

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
    "/{game_id}/analysis",
    status_code=status.HTTP_202_ACCEPTED,
    responses={**ERRORS, 200: {"description": "Asked for before: the analysis as it is."}},
)
async def request_analysis(
    game_id: GameId,
    asker: Annotated[analysis.Asker, Depends(_asker)],
    live: LiveDep,
    response: Response,
) -> AnalysisPublic:
    """Ask for the game's analysis (a finished game: one of its players, or anyone signed in
    for a public game). 202 when queued now; 200 with the analysis when it was asked for
    before. Read it with GET as it progresses."""
    shown, queued = await analysis.request(live, asker, game_id)
    if not queued:
        response.status_code = status.HTTP_200_OK
    return AnalysisPublic.model_validate(shown)


@router.get("/{game_id}/analysis", responses=ERRORS)
async def get_analysis(
    game_id: GameId, viewer: Annotated[Viewer, Depends(_viewer)], live: LiveDep
) -> AnalysisPublic:
    """The game's analysis as far as it has got, for anyone who may see the game."""
    return AnalysisPublic.model_validate(await analysis.get(live, game_id, viewer))
