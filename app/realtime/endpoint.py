"""The `/ws` route: check the handshake's origin and token (`handshake`), then read, check and
dispatch client messages.

Messages of one connection are handled one after the other, in the order they arrive; replies
and table events go out at once, or queue while the client's socket is full (see
`connections`).
"""

from __future__ import annotations

import json
import logging
from typing import Any

from fastapi import WebSocket
from starlette.types import Receive, Scope, Send

from app.accounts import service as accounts
from app.errors import Code
from app.live.liveplay import LivePlay
from app.matchmaking import pools as pairing
from app.play import games
from app.play.players import PlayerRef
from app.realtime import handlers, handshake
from app.realtime.connections import (
    CLOSE_POLICY,
    CLOSE_SERVER_ERROR,
    CLOSE_TRY_AGAIN,
    Connection,
    ConnectionState,
)
from app.realtime.frames import Frames
from app.realtime.hub import Hub
from app.realtime.limits import TooManyConnections
from app.tables import presence

logger = logging.getLogger(__name__)


async def _note_address(live: LivePlay, user_id: int, address: str) -> None:
    try:
        async with live.db.session() as session:
            await accounts.note_address(session, user_id, address, live.clock.now())
            await session.commit()
    except Exception:  # noted at the next connection
        logger.warning("cannot note the address of user %d", user_id, exc_info=True)


async def _authenticate(websocket: WebSocket, token: str | None) -> tuple[bool, Any]:
    """(ok, user): no token is an anonymous spectator; a bad token is refused."""
    if token is None:
        return True, None
    async with websocket.app.state.db.session() as session:
        user = await accounts.user_for_token(session, token)
    return user is not None, user


async def _refuse(websocket: WebSocket, message: str) -> None:
    await websocket.send_text(
        json.dumps({"type": "error", "code": Code.UNAUTHORIZED.text, "message": message})
    )
    await websocket.close(CLOSE_POLICY, message[:120])


async def serve(scope: Scope, receive: Receive, send: Send) -> None:
    """The ASGI application of `/ws`, called by the app for that path ahead of its middleware
    and routing (see `app.main.CheckersApp`)."""
    await websocket_endpoint(WebSocket(scope, receive=receive, send=send))


async def websocket_endpoint(websocket: WebSocket) -> None:
    hub: Hub = websocket.app.state.hub
    settings = websocket.app.state.settings
    if not handshake.origin_allowed(websocket, settings.allowed_origin_set):
        # Closing before accepting answers the upgrade with 403.
        await websocket.close(CLOSE_POLICY, "origin not allowed")
        return
    offered = handshake.credentials(websocket)
    await websocket.accept(subprotocol=offered.subprotocol)
    if offered.refusal is not None:
        await _refuse(websocket, offered.refusal)
        return
    try:
        ok, user = await _authenticate(websocket, offered.token)
    except Exception:
        logger.warning("cannot authenticate a websocket: database unavailable", exc_info=True)
        await websocket.close(CLOSE_TRY_AGAIN, "the database is unavailable; try again later")
        return
    if not ok:
        await _refuse(websocket, "invalid, expired or banned token")
        return
    player = PlayerRef(user.id, user.name) if user is not None else None
    token_hash = accounts.hash_token(offered.token) if offered.token is not None else None
    conn = Connection(websocket, player, settings.ws_messages_per_second, token_hash)
    host = websocket.client.host if websocket.client is not None else ""
    budget = websocket.app.state.budgets.enter(host)
    if user is not None and user.kind == "registered" and host:
        # Where registered accounts play from (fair play: rated games between accounts that
        # shared an address are casual), noted off the connection's path.
        hub.live.spawn(_note_address(hub.live, user.id, host))
    frames: Frames | None = None
    gate = websocket.app.state.ws_gate
    counted: int | None = None  # the user whose place this socket holds
    try:
        try:
            if player is not None:
                refused = gate.enter_user(player.id)
                if refused is not None:
                    raise TooManyConnections(refused)
                counted = player.id
            if hub.connect(conn) and player is not None:
                await presence.connected(hub.live, player.id)
            playing = await games.playing_for(hub.live, user.id) if user is not None else []
        except TooManyConnections as exc:  # WS_MAX_PER_USER, event streams included
            conn.error(Code.TOO_MANY_CONNECTIONS, str(exc))
            conn.close(CLOSE_TRY_AGAIN, str(exc))
            return
        except Exception:
            logger.warning("cannot serve a websocket: database unavailable", exc_info=True)
            conn.close(CLOSE_TRY_AGAIN, "the database is unavailable; try again later")
            return
        conn.send(
            {
                "type": "welcome",
                "user": (
                    {"id": user.id, "name": user.name, "kind": user.kind}
                    if user is not None
                    else None
                ),
                "server_time": int(hub.live.clock.time() * 1000),
                "playing": playing,
                "limits": {
                    "max_message_bytes": settings.ws_max_message_bytes,
                    "chat_max_length": settings.chat_max_length,
                    "messages_per_second": settings.ws_messages_per_second,
                    "burst": conn.messages.burst,
                    "first_move_seconds": settings.first_move_seconds,
                },
            }
        )
        frames = Frames(websocket, conn, settings.ws_max_message_bytes)
        # A connection being closed (flooding, not reading, kicked, banned) is not listened to.
        while conn.state is ConnectionState.OPEN and not frames.gone:
            text = await frames.next()
            if text is not None:
                await handlers.handle(hub, conn, text, budget, frames)
    except Exception:  # a bug: the client learns it from the close code, not a dropped socket
        logger.exception("websocket connection failed")
        conn.close(CLOSE_SERVER_ERROR, "unexpected server error")
    finally:
        if counted is not None:
            gate.leave_user(counted)
        if frames is not None:
            frames.stop()
        websocket.app.state.budgets.leave(host)
        if await hub.disconnect(conn) and player is not None:
            await presence.disconnected(hub.live, player.id)
            # Nobody is paired with an absent player (but by correspondence).
            await pairing.cancel(hub.live, player.id, gone=True)
