"""The `/ws` route: check the handshake's origin and token (`handshake`), then read, check and
dispatch client messages.

Messages of one connection are handled one after the other, in the order they arrive; replies
and table events go out at once, or queue while the client's socket is full (see
`connections`).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import gc
import json
import logging
from collections import deque
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any

from fastapi import FastAPI, WebSocket
from prometheus_client import Counter
from pydantic_core import from_json
from starlette.types import Receive, Scope, Send

from app.clock import Clock
from app.lifespan import lifespan_part
from app.metrics import WS_MESSAGES
from app.realtime import budgets, handshake
from app.realtime import protocol as p
from app.realtime.connections import (
    CHAT_BURST,
    CHAT_PER_SECOND,
    CLOSE_POLICY,
    CLOSE_SERVER_ERROR,
    CLOSE_SERVICE_RESTART,
    CLOSE_TOO_BIG,
    CLOSE_TRY_AGAIN,
    CLOSE_UNSUPPORTED,
    FLOOD_LIMIT,
    Connection,
    ConnectionState,
)
from app.realtime.hub import Hub
from app.realtime.limits import TooManyConnections
from app.services import (
    accounts,
    ai,
    challenges,
    decisions,
    fair_play,
    games,
    pairing,
    presence,
    tables,
)
from app.services.errors import ServiceError
from app.services.heartbeat import Heartbeat, Load
from app.services.live import LivePlay, PlayerRef, PlayError

logger = logging.getLogger(__name__)


GC_YOUNG_THRESHOLD = 10_000  # allocations before the youngest generation is collected


@lifespan_part(needs=["settings", "db", "broker"], provides=["live", "hub", "beats", "budgets"])
@asynccontextmanager
async def run_live_play(app: FastAPI) -> AsyncIterator[None]:
    """Lifespan part: recover the games in progress, then beat and serve the hub until shutdown."""
    # `create_app` gives the clock; an app assembled from parts runs on real time.
    clock = getattr(app.state, "clock", None) or Clock()
    live = LivePlay(app.state.db, app.state.broker, app.state.settings, clock)
    await live.start()
    hub = Hub(live, app.state.settings.sweep_seconds)
    await hub.start()

    def load() -> Load:
        return Load(len(hub.connections), len(hub.users), live.moves.last_minute()[0])

    beats = app.state.beats = Heartbeat(
        app.state.db, app.state.settings.heartbeat_seconds, load=load, clock=live.clock
    )
    await beats.hold()
    try:
        recovered = await games.recover(live, beats.instance, alone=beats.alone)
    except BaseException:
        await beats.release()
        raise
    live.instance = beats.instance

    async def reassert() -> None:
        await presence.reassert(live, hub.present_users())

    beats.on_regained = reassert  # others may have taken this process for gone meanwhile
    beats.start()
    if recovered:
        logger.info("recovered %d games in progress", recovered)
    app.state.live, app.state.hub = live, hub
    app.state.budgets = budgets.AddressBudgets(app.state.settings.ws_messages_per_second_per_ip)
    sweeper = asyncio.create_task(_sweep(live, reassert), name="live-sweep")
    pairer = asyncio.create_task(pairing.run(live), name="pairing")
    # What start-up built (modules, schema, caches) lives as long as the server: keep it out of
    # the garbage collector's full passes, whose pauses delay every move in flight (measured in
    # docs/benchmarks.md). Given back on shutdown so that a stopped app can be collected.
    gc.freeze()
    # Moves allocate many short-lived objects, nearly all freed by reference counting: with the
    # default threshold (700) the young generation was collected some 50 times a second under
    # load and a full pass followed every two or three seconds (4-5% of the server's time, see
    # docs/benchmarks.md). Collect less often.
    thresholds = gc.get_threshold()
    gc.set_threshold(GC_YOUNG_THRESHOLD, *thresholds[1:])
    try:
        yield
    finally:
        gc.set_threshold(*thresholds)
        gc.unfreeze()
        for task in (sweeper, pairer):
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
        try:
            # Users connected here stay present until the others' sweep (or this server's
            # next start) finds this process stopped: those who come back elsewhere within
            # `presence.SWITCH_SECONDS` are never away.
            await hub.stop()
            await live.stop()
        finally:
            await beats.stop()


async def _sweep(live: LivePlay, reassert: Callable[[], Awaitable[None]]) -> None:
    """Run `presence.sweep` every `sweep_seconds`, and make sure this process's users are
    noted as connected every `heartbeat_seconds`, whatever fails (it is tried again)."""
    reasserted = live.clock.monotonic()
    while True:
        await live.clock.sleep(live.settings.sweep_seconds)
        try:
            if live.clock.monotonic() - reasserted >= live.settings.heartbeat_seconds:
                reasserted = live.clock.monotonic()
                await reassert()
            await presence.sweep(live)
        except asyncio.CancelledError:
            raise
        except Exception:
            logger.warning("the live-play sweep failed; retrying", exc_info=True)


async def _note_address(live: LivePlay, user_id: int, address: str) -> None:
    try:
        async with live.db.session() as session:
            await fair_play.note_address(session, user_id, address, live.clock.now())
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
        json.dumps({"type": "error", "code": "unauthorized", "message": message})
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
            playing = await hub.connect(conn)
        except TooManyConnections as exc:  # WS_MAX_PER_USER, event streams included
            conn.error("too_many_connections", str(exc))
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
                await _handle(hub, conn, text, budget, frames)
    except Exception:  # a bug: the client learns it from the close code, not a dropped socket
        logger.exception("websocket connection failed")
        conn.close(CLOSE_SERVER_ERROR, "unexpected server error")
    finally:
        if counted is not None:
            gate.leave_user(counted)
        if frames is not None:
            frames.stop()
        websocket.app.state.budgets.leave(host)
        await hub.disconnect(conn)


@functools.cache
def _received(kind: str) -> Counter:
    """The counter of received messages of a (validated, so known) type."""
    return WS_MESSAGES.labels("in", kind)


def _ref_of(text: str) -> str | int | None:
    """The `ref` of a message that failed validation, if it can be read at all (by the parser
    `p.parse` uses, with its nesting limit: `json` would raise RecursionError on `[[[[...`)."""
    try:
        ref = from_json(text).get("ref")
    except (ValueError, AttributeError):
        return None
    if isinstance(ref, bool) or not isinstance(ref, int | str):  # a bool is no ref (strict)
        return None
    return ref if len(str(ref)) <= 40 else None


def _admit(conn: Connection) -> bool:
    """The socket's own message rate: a message past it is answered `rate_limited` and
    dropped, and FLOOD_LIMIT dropped ones close the socket (1008)."""
    if conn.messages.take():
        return True
    _drop(conn)
    return False


def _drop(conn: Connection) -> None:
    """A message dropped for the socket's rate: `rate_limited`, and FLOOD_LIMIT of them close
    the socket (1008)."""
    conn.dropped += 1
    if conn.dropped >= FLOOD_LIMIT:
        conn.close(CLOSE_POLICY, "too many messages")
    else:
        rate = conn.messages.rate
        conn.error("rate_limited", f"at most {rate:g} messages per second")


class Frames:
    """A socket's incoming frames, checked (text, size, the socket's own rate) as they are
    read. While a message waits for its address's budget, the frames behind it go on being
    read and checked, and up to the socket's burst of them kept (those beyond are dropped as
    past its rate): so a socket that floods is closed, and one the client closes is seen gone,
    at once, rather than when the wait is over (its place in the connection caps is given
    back then, app.realtime.limits), however fast the server reads."""

    def __init__(self, websocket: WebSocket, conn: Connection, max_bytes: int) -> None:
        self.websocket = websocket
        self.conn = conn
        self.max_bytes = max_bytes
        self.gone = False  # the client closed the socket, or the server decided to
        self.ahead: deque[str] = deque()  # read and admitted, not yet handled
        self.reading: asyncio.Task[Any] | None = None

    def _check(self, frame: Any) -> str | None:
        """The frame's text if it is a message to handle; else None, with the socket marked
        gone (a disconnect) or closed (a binary or oversized frame), or the message dropped."""
        conn = self.conn
        if frame["type"] == "websocket.disconnect":
            # 1012: this server is restarting (uvicorn closes every socket so on SIGTERM);
            # the client comes back through the balancer, most likely to another process.
            conn.moving = frame.get("code") == CLOSE_SERVICE_RESTART
            self.gone = True
            return None
        text = frame.get("text")
        if text is None:
            conn.close(CLOSE_UNSUPPORTED, "binary frames are not supported")
            self.gone = True
            return None
        if len(text.encode()) > self.max_bytes:
            conn.close(CLOSE_TOO_BIG, "message too big")
            self.gone = True
            return None
        if not _admit(conn):
            return None
        return str(text)

    async def _receive(self) -> Any:
        if self.reading is not None:
            reading, self.reading = self.reading, None
            return await reading
        return await self.websocket.receive()

    async def next(self) -> str | None:
        """The next message to handle (None: none, this time round)."""
        if self.ahead:
            return self.ahead.popleft()
        return self._check(await self._receive())

    async def wait(self, seconds: float) -> None:
        """Wait `seconds` (the address's budget), reading ahead; end early if the socket is
        gone or closing."""
        loop = asyncio.get_running_loop()
        until = loop.time() + seconds
        closing = self.conn.closing_waiter()
        try:
            while not self.gone and self.conn.state is ConnectionState.OPEN:
                left = until - loop.time()
                if left <= 0:
                    return
                if self.reading is None:
                    self.reading = asyncio.ensure_future(self.websocket.receive())
                waits: set[asyncio.Future[Any]] = {closing, self.reading}
                await asyncio.wait(waits, timeout=left, return_when=asyncio.FIRST_COMPLETED)
                if self.reading is not None and self.reading.done():
                    reading, self.reading = self.reading, None
                    text = self._check(reading.result())
                    if text is None:
                        continue
                    if len(self.ahead) < self.conn.messages.burst:
                        self.ahead.append(text)
                    else:  # more than a burst waiting behind the address's budget: flooding
                        _drop(self.conn)
        finally:
            self.conn.closing_done(closing)

    def stop(self) -> None:
        if self.reading is not None:
            self.reading.cancel()
            self.reading = None


async def _handle(
    hub: Hub,
    conn: Connection,
    text: str,
    budget: budgets.Budget = budgets.UNLIMITED,
    frames: Frames | None = None,
) -> None:
    """Handle one message the socket's own rate admitted (`Frames`)."""
    try:
        message: p.Message | None = p.parse(text)
    except p.BadMessage as exc:
        message, problem = None, str(exc)
    # The address's budget (app.realtime.budgets): past it, wait before handling the message.
    wait = budget.reserve(budgets.cost(message))
    if wait > 0:
        if frames is not None:
            await frames.wait(wait)
        else:
            await asyncio.sleep(wait)
    if conn.state is not ConnectionState.OPEN or (frames is not None and frames.gone):
        return  # closed (kicked, banned, flooding) or gone while it waited
    if message is None:
        WS_MESSAGES.labels("in", "invalid").inc()
        conn.error("bad_message", problem, _ref_of(text))
        return
    kind = getattr(message, "type", "?")
    _received(kind).inc()
    handler = _HANDLERS[type(message)]
    try:
        await handler(hub, conn, message)
    except ServiceError as exc:  # every service's refusal, as an `error` message
        conn.error(exc.code, exc.message, message.ref)
    except Exception:
        logger.exception("error handling a %s message", kind)
        conn.error("server_error", "the server failed to handle this message", message.ref)


def _user(conn: Connection) -> PlayerRef:
    if conn.user is None:
        raise PlayError("unauthorized", "sign in (or get a guest token) to do this")
    return conn.user


async def _ping(hub: Hub, conn: Connection, m: p.Ping) -> None:
    conn.send({"type": "pong", "t": m.t, "server_time": int(hub.live.clock.time() * 1000)})


async def _subscribe_lobby(hub: Hub, conn: Connection, m: p.SubscribeLobby) -> None:
    await hub.subscribe_lobby(conn)


async def _unsubscribe_lobby(hub: Hub, conn: Connection, m: p.UnsubscribeLobby) -> None:
    hub.unsubscribe_lobby(conn)


async def _open(hub: Hub, conn: Connection, m: p.Open) -> None:
    user = _user(conn)
    table = await tables.open_table(
        hub.live,
        user,
        m.room,
        variant=m.variant,
        clock=m.clock.model_dump() if m.clock is not None else None,
        room_clock="clock" not in m.model_fields_set,
        colour=m.colour,
        private=m.private,
        start_fen=m.start_fen,
        rated=m.rated,
    )
    await hub.watch(conn, table["id"])


async def _play_ai(hub: Hub, conn: Connection, m: p.PlayAI) -> None:
    user = _user(conn)
    table = await ai.start_game(
        hub.live,
        user,
        level=m.level,
        variant=m.variant,
        colour=m.colour,
        clock=m.clock.model_dump() if m.clock is not None else None,
        room=m.room,
        start_fen=m.start_fen,
        address=conn.address,
    )
    await hub.watch(conn, table["id"])


async def _sit(hub: Hub, conn: Connection, m: p.Sit) -> None:
    user = _user(conn)
    await hub.watch(conn, m.table, invite=m.invite)
    await tables.sit(hub.live, user, m.table, m.invite)
    hub.attend(conn, m.table)  # watched as a spectator a moment ago: now as a player


async def _leave(hub: Hub, conn: Connection, m: p.Leave) -> None:
    await tables.leave(hub.live, _user(conn), m.table)


async def _watch(hub: Hub, conn: Connection, m: p.Watch) -> None:
    await hub.watch(conn, m.table, m.since, m.epoch, m.invite)


async def _unwatch(hub: Hub, conn: Connection, m: p.Unwatch) -> None:
    hub.unwatch(conn, m.table)


async def _rematch(hub: Hub, conn: Connection, m: p.Rematch) -> None:
    await tables.rematch(hub.live, _user(conn), m.table, conn.address)


async def _chat(hub: Hub, conn: Connection, m: p.Chat) -> None:
    user = _user(conn)
    if not conn.chats.take():
        window = CHAT_BURST / CHAT_PER_SECOND
        raise PlayError(
            "rate_limited", f"at most {CHAT_BURST:.0f} chat messages per {window:.0f} s"
        )
    # Watching here was granted (a private table's invite checked), or chat checks the seat.
    await tables.chat(hub.live, user, m.table, m.text, watching=m.table in conn.tables)


async def _move(hub: Hub, conn: Connection, m: p.Move) -> None:
    await games.play_move(hub.live, _user(conn).id, m.game, m.move, m.ply)


async def _resign(hub: Hub, conn: Connection, m: p.Resign) -> None:
    await decisions.resign(hub.live, _user(conn).id, m.game)


async def _draw_offer(hub: Hub, conn: Connection, m: p.DrawOffer) -> None:
    await decisions.offer_draw(hub.live, _user(conn).id, m.game)


async def _draw_accept(hub: Hub, conn: Connection, m: p.DrawAccept) -> None:
    await decisions.answer_draw(hub.live, _user(conn).id, m.game, accept=True)


async def _draw_decline(hub: Hub, conn: Connection, m: p.DrawDecline) -> None:
    await decisions.answer_draw(hub.live, _user(conn).id, m.game, accept=False)


async def _abort(hub: Hub, conn: Connection, m: p.Abort) -> None:
    await decisions.abort(hub.live, _user(conn).id, m.game)


async def _claim_win(hub: Hub, conn: Connection, m: p.ClaimWin) -> None:
    await decisions.claim_win(hub.live, _user(conn).id, m.game)


async def _challenge(hub: Hub, conn: Connection, m: p.Challenge) -> None:
    made = await challenges.make(
        hub.live,
        _user(conn),
        m.user,
        variant=m.variant,
        clock=m.clock.model_dump() if m.clock is not None else None,
        colour=m.colour,
        rated=m.rated,
    )
    conn.send({"type": "challenge_sent", "ref": m.ref, "challenge": made})


async def _challenge_accept(hub: Hub, conn: Connection, m: p.ChallengeAccept) -> None:
    await challenges.accept(hub.live, _user(conn), m.challenge)  # then `your_game`


async def _challenge_decline(hub: Hub, conn: Connection, m: p.ChallengeDecline) -> None:
    done = await challenges.decline(hub.live, _user(conn), m.challenge, m.reason)
    conn.send({"type": "challenge_declined", "ref": m.ref, "challenge": done})


async def _challenge_cancel(hub: Hub, conn: Connection, m: p.ChallengeCancel) -> None:
    done = await challenges.cancel(hub.live, _user(conn), m.challenge)
    conn.send({"type": "challenge_canceled", "ref": m.ref, "challenge": done})


async def _seek(hub: Hub, conn: Connection, m: p.Seek) -> None:
    seeking = await pairing.seek(hub.live, _user(conn), m.pool, rated=m.rated)
    conn.send(seeking | {"ref": m.ref})
    await pairing.pair(hub.live, m.pool)  # paired now, or by a later step: then `your_game`


async def _cancel_seek(hub: Hub, conn: Connection, m: p.CancelSeek) -> None:
    if not await pairing.cancel(hub.live, _user(conn).id):
        raise PlayError("not_found", "you are not waiting in a pool (paired meanwhile?)")
    conn.send({"type": "seek_cancelled", "ref": m.ref})


_HANDLERS: dict[type[p.Message], Callable[[Hub, Connection, Any], Awaitable[None]]] = {
    p.Ping: _ping,
    p.SubscribeLobby: _subscribe_lobby,
    p.UnsubscribeLobby: _unsubscribe_lobby,
    p.Open: _open,
    p.PlayAI: _play_ai,
    p.Sit: _sit,
    p.Leave: _leave,
    p.Watch: _watch,
    p.Unwatch: _unwatch,
    p.Rematch: _rematch,
    p.Chat: _chat,
    p.Move: _move,
    p.Resign: _resign,
    p.DrawOffer: _draw_offer,
    p.DrawAccept: _draw_accept,
    p.DrawDecline: _draw_decline,
    p.Abort: _abort,
    p.ClaimWin: _claim_win,
    p.Challenge: _challenge,
    p.ChallengeAccept: _challenge_accept,
    p.ChallengeDecline: _challenge_decline,
    p.ChallengeCancel: _challenge_cancel,
    p.Seek: _seek,
    p.CancelSeek: _cancel_seek,
}
