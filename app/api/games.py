"""REST routes of the game archive: search the history, read one game, export PDN or NDJSON."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import replace
from datetime import date
from typing import Annotated, Literal

from fastapi import APIRouter, Depends, Header, Query, Request
from fastapi.responses import Response, StreamingResponse

from app.analysis import service as analysis
from app.api.common.deps import ArchiveSessionDep
from app.api.common.errors import ApiError, ErrorBody
from app.api.common.params import DIGITS, ISO_DATE, MAX_ID, NAME_PATTERN, TRUE_FALSE, GameId
from app.api.common.viewer import InviteQuery, ViewerDep
from app.api.schemas.archive import (
    GamePublic,
    GamesPage,
    GameSummaryPublic,
    ResultFilter,
    Variant,
)
from app.archive import records
from app.archive import service as archive
from app.archive.service import GameFilter, GameRecord
from app.archive.visibility import Viewer
from app.db.engine import Database
from app.errors import Code
from app.rules import Termination
from app.status import GameStatus

router = APIRouter(prefix="/api", tags=["games"])

PDN_MEDIA_TYPE = "application/x-pdn"
NDJSON_MEDIA_TYPE = "application/x-ndjson"
_NDJSON_TYPES = {NDJSON_MEDIA_TYPE, "application/ndjson", "application/jsonl"}
_PDN_TYPES = {PDN_MEDIA_TYPE, "text/plain", "text/*", "application/*", "*/*"}
EXPORT_CHUNK_CHARS = 64 * 1024

ERRORS: dict[int | str, dict[str, object]] = {
    400: {"model": ErrorBody, "description": "Bad cursor, or filters that do not fit together."},
    404: {"model": ErrorBody, "description": "No such game, player or room."},
    422: {"model": ErrorBody, "description": "A parameter out of range or of the wrong type."},
}

_PDN_EXAMPLE = """[Event "Rated english game"]
[Site "https://checkers.example/api/games/1042"]
[Date "2026.03.01"]
[Round "-"]
[Black "alice"]
[White "bob"]
[Result "0-1"]
[GameType "21"]
[TimeControl "300+3"]
[Termination "resignation"]

1. 11-15 {[%clock 0:04:58]} 23-19 {[%clock 0:04:59]} 2. 8-11 {[%clock 0:04:55]} 0-1
"""


def common_filter(
    variant: Annotated[Variant | None, Query(description="Only this variant.")] = None,
    result: Annotated[
        ResultFilter | None,
        Query(description="A PDN result, or `win`/`loss`/`draw` seen from `player`."),
    ] = None,
    termination: Annotated[Termination | None, Query(description="How it ended.")] = None,
    room: Annotated[
        str | None,
        Query(
            description="Room slug.",
            max_length=40,
            pattern=NAME_PATTERN,
            examples=["english-blitz"],
        ),
    ] = None,
    rated: Annotated[
        bool | None, Query(description="Rated or casual games only."), TRUE_FALSE
    ] = None,
    ai: Annotated[
        bool | None,
        Query(description="Games against the computer (`AI level 1` … 8) only, or none."),
        TRUE_FALSE,
    ] = None,
    status: Annotated[GameStatus | None, Query(description="`playing`: in progress.")] = None,
    since: Annotated[
        date | None,
        Query(description="Started on or after (YYYY-MM-DD, UTC).", examples=["2026-01-01"]),
        ISO_DATE,
    ] = None,
    until: Annotated[
        date | None,
        Query(description="Started on or before (YYYY-MM-DD).", examples=["2026-01-31"]),
        ISO_DATE,
    ] = None,
    min_plies: Annotated[
        int | None,
        Query(ge=0, le=10_000, description="At least so many plies."),
        DIGITS,
    ] = None,
    opponent: Annotated[
        str | None,
        Query(
            max_length=64,
            pattern=NAME_PATTERN,
            description="With `player`: games against this name.",
            examples=["bob"],
        ),
    ] = None,
    colour: Annotated[
        Literal["black", "white"] | None,
        Query(description="With `player`: games where the player had this colour."),
    ] = None,
    tournament: Annotated[
        int | None,
        Query(ge=1, le=MAX_ID, description="Played in this tournament."),
        DIGITS,
    ] = None,
) -> GameFilter:
    """The filters shared by the game search, a player's games and the bulk export."""
    return GameFilter(
        opponent=opponent,
        colour=colour,
        variant=variant,
        result=result,
        termination=None if termination is None else termination.value,
        room=room,
        rated=rated,
        ai=ai,
        status=status,
        since=since,
        until=until,
        min_plies=min_plies,
        tournament=tournament,
    )


def game_filter(
    base: Annotated[GameFilter, Depends(common_filter)],
    player: Annotated[
        str | None,
        Query(
            max_length=64,
            pattern=NAME_PATTERN,
            description="Games this player played, either colour (name, any case).",
            examples=["alice"],
        ),
    ] = None,
) -> GameFilter:
    return replace(base, player=player)


FilterDep = Annotated[GameFilter, Depends(game_filter)]
OrderQuery = Annotated[
    Literal["desc", "asc"], Query(description="By start time: `desc` newest first.")
]


async def games_page(
    session: ArchiveSessionDep,
    viewer: Viewer,
    flt: GameFilter,
    limit: int,
    cursor: str | None,
    order: Literal["desc", "asc"],
    count: bool,
) -> GamesPage:
    page = await archive.list_games(
        session, flt, viewer, limit=limit, cursor=cursor, order=order, with_total=count
    )
    return GamesPage(
        data=[GameSummaryPublic.of(g) for g in page.games],
        count=page.total,
        count_exact=None if page.total is None else page.total_exact,
        next_cursor=page.next_cursor,
    )


LimitQuery = Annotated[int, Query(ge=1, le=100, description="Games per page (1–100)."), DIGITS]
CursorQuery = Annotated[
    str | None,
    Query(max_length=200, description="`next_cursor` of the previous page; omit for the first."),
]
CountQuery = Annotated[
    bool,
    Query(
        description="Also count every matching game (an index scan of the matches; the "
        "database's estimate, `count_exact: false`, where no index serves the count)."
    ),
    TRUE_FALSE,
]


@router.get("/games", response_model=GamesPage, responses=ERRORS)
async def search_games(
    session: ArchiveSessionDep,
    viewer: ViewerDep,
    flt: FilterDep,
    limit: LimitQuery = 20,
    cursor: CursorQuery = None,
    order: OrderQuery = "desc",
    count: CountQuery = True,
) -> GamesPage:
    """Games matching every given filter, live ones included, newest first.

    Pages follow `next_cursor`; a page never skips or repeats a game, even while new games
    start between two requests. Games of private tables are listed (and counted) only for
    their players and administrators (send the bearer token).
    """
    return await games_page(session, viewer, flt, limit, cursor, order, count)


def _negotiate(accept: str | None, fmt: Literal["pdn", "ndjson"] | None) -> str:
    if fmt is not None:
        return PDN_MEDIA_TYPE if fmt == "pdn" else NDJSON_MEDIA_TYPE
    if not accept:
        return PDN_MEDIA_TYPE
    for item in accept.split(","):
        media = item.split(";")[0].strip().lower()
        if media in _NDJSON_TYPES:
            return NDJSON_MEDIA_TYPE
        if media in _PDN_TYPES:
            return PDN_MEDIA_TYPE
    raise ApiError(
        Code.NOT_ACCEPTABLE, f"export is {PDN_MEDIA_TYPE} or {NDJSON_MEDIA_TYPE}, not {accept}"
    )


def _site(request: Request, game_id: int) -> str:
    return f"{str(request.base_url).rstrip('/')}/api/games/{game_id}"


@router.get(
    "/games/export",
    response_class=StreamingResponse,
    responses={
        200: {
            "description": "The games, streamed one by one as they are read.",
            "content": {
                PDN_MEDIA_TYPE: {"example": _PDN_EXAMPLE},
                NDJSON_MEDIA_TYPE: {
                    "example": '{"id":1042,"variant":"english","result":"0-1",'
                    '"moves":["11-15","23-19","8-11"],"clocks_ms":[298000,299000,295000]}\n'
                },
            },
        },
        406: {"model": ErrorBody, "description": "Accept names neither PDN nor NDJSON."},
        **ERRORS,
    },
)
async def export_games(
    request: Request,
    session: ArchiveSessionDep,
    viewer: ViewerDep,
    flt: FilterDep,
    order: OrderQuery = "desc",
    max_games: Annotated[
        int | None,
        Query(alias="max", ge=1, description="Stop after so many games."),
        DIGITS,
    ] = None,
    fmt: Annotated[
        Literal["pdn", "ndjson"] | None,
        Query(alias="format", description="Overrides the Accept header."),
    ] = None,
    accept: Annotated[str | None, Header(include_in_schema=False)] = None,
) -> StreamingResponse:
    """Every matching game, as PDN (`Accept: application/x-pdn`, the default) or as one JSON
    object per line (`Accept: application/x-ndjson`). The body is streamed game by game.
    Games of private tables are exported only for their players and administrators."""
    media_type = _negotiate(accept, fmt)
    resolved = await archive.resolve_filter(session, flt, viewer)
    # The stream reads through its own session, which outlives this request's; end this one's
    # transaction first (SQLite lets one transaction at a time hold the database).
    await session.commit()
    db: Database = request.app.state.archive_db

    def render(record: GameRecord) -> str:
        if media_type == NDJSON_MEDIA_TYPE:
            return records.render_ndjson(record)
        return records.render_pdn(record, _site(request, record.id))

    async def body() -> AsyncIterator[str]:
        """Games rendered one by one, sent in chunks of about 64 KB (a write per game would
        cost more than rendering it)."""
        chunk: list[str] = []
        size = 0
        async with db.session() as export_session:
            async for record in archive.iter_games(
                export_session, resolved, order=order, max_games=max_games
            ):
                text = render(record)
                chunk.append(text)
                size += len(text)
                if size >= EXPORT_CHUNK_CHARS:
                    yield "".join(chunk)
                    chunk, size = [], 0
        if chunk:
            yield "".join(chunk)

    return StreamingResponse(body(), media_type=media_type)


async def _load(session: ArchiveSessionDep, game_id: int, viewer: Viewer) -> GameRecord:
    return await archive.get_game(session, game_id, viewer)


@router.get(
    "/games/{game_id}.pdn",
    response_class=Response,
    responses={
        200: {
            "description": "The game in PDN.",
            "content": {PDN_MEDIA_TYPE: {"example": _PDN_EXAMPLE}},
        },
        404: ERRORS[404],
    },
)
async def game_pdn(
    request: Request,
    session: ArchiveSessionDep,
    viewer: ViewerDep,
    game_id: GameId,
    invite: InviteQuery = None,
    evals: Annotated[
        bool,
        Query(
            description="With the game's computer analysis, once done: each move's evaluation "
            "(`[%eval -97]`, centipieces from Black's side, or `#N`) and label "
            "(`Blunder. 9-14 was best.`) in its comment."
        ),
        TRUE_FALSE,
    ] = False,
) -> Response:
    """One game as a standard PDN record (GameType 21 or 23, clock times as comments).

    A game of a private table is shown to its players and administrators (send the bearer
    token) and with `invite`, the table's code; to anyone else it is 404 like a missing game.
    """
    record = await _load(session, game_id, replace(viewer, invite=invite))
    plies = await analysis.plies_of(session, game_id) if evals else None
    return Response(
        records.render_pdn(record, _site(request, game_id), plies), media_type=PDN_MEDIA_TYPE
    )


@router.get("/games/{game_id}", response_model=GamePublic, responses={404: ERRORS[404]})
async def get_game(
    session: ArchiveSessionDep,
    viewer: ViewerDep,
    game_id: GameId,
    positions: Annotated[
        bool,
        Query(description="Add the FEN of the start and after every ply."),
        TRUE_FALSE,
    ] = False,
    invite: InviteQuery = None,
) -> GamePublic:
    """One game: players, tags, moves with clock times, result and how it ended.

    A game of a private table is shown to its players and administrators (send the bearer
    token) and with `invite`, the table's code; to anyone else it is 404 like a missing game.
    """
    record = await _load(session, game_id, replace(viewer, invite=invite))
    if not positions:
        return GamePublic.of_record(record)
    return GamePublic.of_record(
        record, records.start_position(record), records.positions_after(record)
    )
