"""REST: the bot API, in the shape of lichess's: upgrade to a bot account, the event stream,
a game's stream, and a bot's moves and decisions. Streams are NDJSON, one JSON object a line,
with an empty line when nothing happened for 7 seconds (keep-alive)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Path, Query, Request
from fastapi.responses import StreamingResponse
from pydantic import BaseModel, ConfigDict, Field
from starlette.background import BackgroundTask

from app.api.account import AccountPublic
from app.api.common.deps import Caller, CallerDep, CurrentUser, LiveDep, SessionDep, SocketCountsDep
from app.api.common.errors import ErrorBody
from app.api.common.lichess import body_schema, read
from app.api.common.params import GameId
from app.bots import accounts as bots
from app.bots import streams
from app.errors import Code, ServiceError
from app.live.liveplay import LivePlay
from app.play import decisions, games
from app.tables import chat as table_chat

router = APIRouter(prefix="/api", tags=["bot"])

NDJSON = "application/x-ndjson"
RETRY_AFTER_SECONDS = 30  # as a websocket refused for the connection caps
ERRORS: dict[int | str, dict[str, Any]] = {
    400: {"model": ErrorBody, "description": "An illegal move, a bad request."},
    401: {"model": ErrorBody, "description": "No valid bearer token."},
    403: {"model": ErrorBody, "description": "Not a bot account (`not_a_bot`)."},
    429: {
        "model": ErrorBody,
        "description": "The event stream: too many connections (`too_many_connections`).",
    },
    409: {
        "model": ErrorBody,
        "description": "Refused by the game: `not_found`, `not_your_turn`, `game_over`, an "
        "illegal move (`illegal_move`, `capture_required`…), `too_early`…",
    },
}


class Ok(BaseModel):
    ok: bool = True


class ChatLine(BaseModel):
    """A line for the game's chat, as lichess's bot API takes it (JSON or form-encoded)."""

    model_config = ConfigDict(extra="forbid", strict=True)

    room: Literal["player", "spectator"] = Field(
        default="player",
        description="Lichess's rooms; here a player always writes to the players' channel.",
    )
    text: str = Field(min_length=1, max_length=1000)


async def _bot_game(live: LivePlay, user: Caller, game_id: int) -> int:
    """The game's ply now, for a bot: a bad id is 422 and no such game 404 whoever asks (a
    private game the caller does not play too, word for word), and anyone but a bot is then
    refused (403)."""
    ply = await games.current_ply(live, game_id, user.id)
    bots.check_bot(user.is_bot)
    return ply


async def _ndjson(lines: AsyncIterator[dict[str, Any] | None]) -> AsyncIterator[str]:
    async for line in lines:
        yield "\n" if line is None else json.dumps(line, separators=(",", ":")) + "\n"


def _stream(lines: AsyncIterator[dict[str, Any] | None]) -> StreamingResponse:
    return StreamingResponse(
        _ndjson(lines), media_type=NDJSON, headers={"Cache-Control": "no-store"}
    )


@router.post("/bot/account/upgrade", responses=ERRORS)
async def upgrade(user: CurrentUser, session: SessionDep) -> Ok:
    """Make your account a bot account, for good: only a registered account that has played no
    game. A bot plays through this API and cannot wait in the quick-pairing pools."""
    await bots.upgrade(session, user.id)
    return Ok()


@router.get(
    "/stream/event",
    responses=ERRORS | {200: {"content": {NDJSON: {}}, "description": "NDJSON lines."}},
    response_class=StreamingResponse,
)
async def stream_events(
    request: Request, user: CallerDep, live: LiveDep, gate: SocketCountsDep
) -> StreamingResponse:
    """Your events, for any account: first your games in progress (`gameStart`) and the
    challenges waiting (`challenge`), then `gameStart`, `gameFinish`, `challenge`,
    `challengeDeclined`, `challengeCanceled` as they happen. A stream is held open like a
    websocket and counts in the same caps (per address, per user, per process): 429
    `too_many_connections` beyond them."""
    host = request.client.host if request.client is not None else ""
    refused = gate.enter(host)
    if refused is None:
        refused = gate.enter_user(user.id)
        if refused is not None:
            gate.leave(host)
    if refused is not None:
        raise ServiceError(Code.TOO_MANY_CONNECTIONS, refused, retry_after=RETRY_AFTER_SECONDS)
    held = True

    def release() -> None:
        nonlocal held
        if held:
            held = False
            gate.leave_user(user.id)
            gate.leave(host)

    async def lines() -> AsyncIterator[dict[str, Any] | None]:
        try:
            async for line in streams.event_stream(live, user.player):
                yield line
        finally:
            release()

    response = _stream(lines())
    response.background = BackgroundTask(release)  # if the stream never started
    return response


@router.get(
    "/bot/game/stream/{game_id}",
    responses=ERRORS | {200: {"content": {NDJSON: {}}, "description": "NDJSON lines."}},
    response_class=StreamingResponse,
)
async def stream_game(game_id: GameId, user: CallerDep, live: LiveDep) -> StreamingResponse:
    """A `gameFull` line, then a `gameState` line after every move and draw offer and at the
    end (`status` other than `started`, `winner`); the stream ends with the game."""
    await _bot_game(live, user, game_id)
    lines = streams.game_stream(live, user.id, game_id)
    first = await anext(lines)  # refusals (no such game) answer before the stream starts

    async def all_lines() -> AsyncIterator[dict[str, Any] | None]:
        yield first
        async for line in lines:
            yield line

    return _stream(all_lines())


@router.post("/bot/game/{game_id}/move/{move}", responses=ERRORS)
async def move(
    game_id: GameId,
    move: Annotated[str, Path(min_length=1, max_length=120, pattern=r"^[0-9x-]+$")],
    user: CallerDep,
    live: LiveDep,
) -> Ok:
    """Play a move (`11-15`, a capture with its whole path: `15x24x31`); answered once it is
    stored."""
    ply = await _bot_game(live, user, game_id)
    await games.play_move(live, user.id, game_id, move, ply)
    return Ok()


@router.post("/bot/game/{game_id}/resign", responses=ERRORS)
async def resign(game_id: GameId, user: CallerDep, live: LiveDep) -> Ok:
    await _bot_game(live, user, game_id)
    await decisions.resign(live, user.id, game_id)
    return Ok()


@router.post("/bot/game/{game_id}/abort", responses=ERRORS)
async def abort(game_id: GameId, user: CallerDep, live: LiveDep) -> Ok:
    """Abort before your first move."""
    await _bot_game(live, user, game_id)
    await decisions.abort(live, user.id, game_id)
    return Ok()


@router.post("/bot/game/{game_id}/draw/yes", responses=ERRORS)
async def draw_yes(game_id: GameId, user: CallerDep, live: LiveDep) -> Ok:
    """Offer a draw, or agree to the opponent's offer."""
    await _bot_game(live, user, game_id)
    await decisions.offer_draw(live, user.id, game_id)
    return Ok()


@router.post("/bot/game/{game_id}/draw/no", responses=ERRORS)
async def draw_no(game_id: GameId, user: CallerDep, live: LiveDep) -> Ok:
    """Decline the opponent's offer."""
    await _bot_game(live, user, game_id)
    await decisions.answer_draw(live, user.id, game_id, accept=False)
    return Ok()


@router.post("/bot/game/{game_id}/claim-victory", responses=ERRORS)
async def claim_victory(game_id: GameId, user: CallerDep, live: LiveDep) -> Ok:
    """Win against an opponent gone longer than the grace period."""
    await _bot_game(live, user, game_id)
    await decisions.claim_win(live, user.id, game_id)
    return Ok()


@router.post("/bot/game/{game_id}/chat", responses=ERRORS, openapi_extra=body_schema(ChatLine))
async def chat(game_id: GameId, request: Request, user: CallerDep, live: LiveDep) -> Ok:
    """Say something in the game's chat (the table's, as a player says it over the
    websocket); bad input is 400, as lichess."""
    await _bot_game(live, user, game_id)
    line = await read(request, ChatLine)
    game = await games.snapshot(live, game_id)
    await table_chat.chat(live, user.player, game["table"], line.text)
    return Ok()


@router.get(
    "/bot/online",
    responses={200: {"content": {NDJSON: {}}, "description": "NDJSON lines."}},
    response_class=StreamingResponse,
)
async def online_bots(
    live: LiveDep,
    nb: Annotated[int, Query(ge=1, le=300, description="At most this many.")] = 50,
) -> StreamingResponse:
    """The bots online (an event stream open lately, or a websocket), one account a line as
    `GET /api/account` shows it; lichess's `GET /api/bot/online`."""
    found = await bots.online(live, nb)

    async def lines() -> AsyncIterator[dict[str, Any] | None]:
        for user in found:
            yield AccountPublic.of(user).model_dump(mode="json", by_alias=True)

    return _stream(lines())
