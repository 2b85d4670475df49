"""Handling one client message: parsed and checked (`protocol`), held to the address's budget,
dispatched to its use case, and a refusal answered as an `error`."""

from __future__ import annotations

import asyncio
import functools
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from prometheus_client import Counter
from pydantic_core import from_json

from app.errors import Code, ServiceError
from app.live import messages
from app.live.liveplay import PlayError
from app.matchmaking import challenges
from app.matchmaking import pools as pairing
from app.metrics import WS_MESSAGES
from app.play import decisions, games, takebacks
from app.play.players import PlayerRef
from app.realtime import budgets
from app.realtime import protocol as p
from app.realtime.connections import (
    CHAT_BURST,
    CHAT_PER_SECOND,
    Connection,
    ConnectionState,
)
from app.realtime.frames import Frames
from app.realtime.hub import Hub
from app.tables import chat as table_chat
from app.tables import leaving, seating
from app.tables import opening as table_opening
from app.tournaments import service as tournaments

logger = logging.getLogger(__name__)


async def handle(
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
        conn.error(Code.BAD_MESSAGE, problem, ref_of(text))
        return
    kind = getattr(message, "type", "?")
    _received(kind).inc()
    handler = _HANDLERS[type(message)]
    try:
        await handler(hub, conn, message)
    except ServiceError as exc:  # every service's refusal, as an `error` message
        conn.error(exc.code, exc.message, message.ref, exc.extra)
    except Exception:
        logger.exception("error handling a %s message", kind)
        conn.error(Code.SERVER_ERROR, "the server failed to handle this message", message.ref)


@functools.cache
def _received(kind: str) -> Counter:
    """The counter of received messages of a (validated, so known) type."""
    return WS_MESSAGES.labels("in", kind)


def ref_of(text: str) -> str | int | None:
    """The `ref` of a message that failed validation, if it can be read at all (by the parser
    `p.parse` uses, with its nesting limit: `json` would raise RecursionError on `[[[[...`)."""
    try:
        ref = from_json(text).get("ref")
    except (ValueError, AttributeError):
        return None
    if isinstance(ref, bool) or not isinstance(ref, int | str):  # a bool is no ref (strict)
        return None
    return ref if len(str(ref)) <= 40 else None


def _user(conn: Connection) -> PlayerRef:
    if conn.user is None:
        raise PlayError(Code.UNAUTHORIZED, "sign in (or get a guest token) to do this")
    return conn.user


async def _ping(hub: Hub, conn: Connection, m: p.Ping) -> None:
    conn.send(messages.pong(m.t, hub.live.clock.time()))


async def _subscribe_lobby(hub: Hub, conn: Connection, m: p.SubscribeLobby) -> None:
    await hub.subscribe_lobby(conn)


async def _unsubscribe_lobby(hub: Hub, conn: Connection, m: p.UnsubscribeLobby) -> None:
    hub.unsubscribe_lobby(conn)


async def _follow_tournament(hub: Hub, conn: Connection, m: p.FollowTournament) -> None:
    if not await tournaments.exists(hub.live, m.tournament):
        raise PlayError(Code.NOT_FOUND, f"no tournament {m.tournament}")
    await hub.tournaments.follow(conn, m.tournament)
    # Followed from now on: read it (again) now.
    conn.send({"type": "tournament", "id": m.tournament, "ref": m.ref})


async def _unfollow_tournament(hub: Hub, conn: Connection, m: p.UnfollowTournament) -> None:
    hub.tournaments.unfollow(conn, m.tournament)


async def _open(hub: Hub, conn: Connection, m: p.Open) -> None:
    user = _user(conn)
    table = await table_opening.open_table(
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
        takebacks=m.takebacks,
    )
    await hub.watch(conn, table["id"])


async def _play_ai(hub: Hub, conn: Connection, m: p.PlayAI) -> None:
    user = _user(conn)
    table = await table_opening.start_ai_game(
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
    await seating.sit(hub.live, user, m.table, m.invite)
    hub.attend(conn, m.table)  # watched as a spectator a moment ago: now as a player


async def _leave(hub: Hub, conn: Connection, m: p.Leave) -> None:
    await seating.leave(hub.live, _user(conn), m.table)


async def _watch(hub: Hub, conn: Connection, m: p.Watch) -> None:
    conn.counts = conn.counts or m.spectators
    await hub.watch(conn, m.table, m.since, m.epoch, m.invite)


async def _unwatch(hub: Hub, conn: Connection, m: p.Unwatch) -> None:
    hub.unwatch(conn, m.table)
    user = conn.user
    if user is not None and not any(m.table in c.tables for c in hub.users.get(user.id, ())):
        await leaving.left_page(hub.live, user, m.table)  # a finished game with the computer


async def _rematch(hub: Hub, conn: Connection, m: p.Rematch) -> None:
    await seating.rematch(hub.live, _user(conn), m.table, conn.address)


async def _chat(hub: Hub, conn: Connection, m: p.Chat) -> None:
    user = _user(conn)
    if not conn.chats.take():
        window = CHAT_BURST / CHAT_PER_SECOND
        raise PlayError(
            Code.RATE_LIMITED, f"at most {CHAT_BURST:.0f} chat messages per {window:.0f} s"
        )
    # Watching here was granted (a private table's invite checked), or chat checks the seat.
    await table_chat.chat(hub.live, user, m.table, m.text, watching=m.table in conn.tables)


async def _move(hub: Hub, conn: Connection, m: p.Move) -> None:
    await games.play_move(hub.live, _user(conn).id, m.game, m.move, m.ply)


async def _resign(hub: Hub, conn: Connection, m: p.Resign) -> None:
    await decisions.resign(hub.live, _user(conn).id, m.game)


async def _berserk(hub: Hub, conn: Connection, m: p.Berserk) -> None:
    await decisions.berserk(hub.live, _user(conn).id, m.game)


async def _draw_offer(hub: Hub, conn: Connection, m: p.DrawOffer) -> None:
    await decisions.offer_draw(hub.live, _user(conn).id, m.game)


async def _draw_accept(hub: Hub, conn: Connection, m: p.DrawAccept) -> None:
    await decisions.answer_draw(hub.live, _user(conn).id, m.game, accept=True)


async def _draw_decline(hub: Hub, conn: Connection, m: p.DrawDecline) -> None:
    await decisions.answer_draw(hub.live, _user(conn).id, m.game, accept=False)


async def _takeback_offer(hub: Hub, conn: Connection, m: p.TakebackOffer) -> None:
    await takebacks.offer(hub.live, _user(conn).id, m.game)


async def _takeback_accept(hub: Hub, conn: Connection, m: p.TakebackAccept) -> None:
    await takebacks.answer(hub.live, _user(conn).id, m.game, accept=True)


async def _takeback_decline(hub: Hub, conn: Connection, m: p.TakebackDecline) -> None:
    await takebacks.answer(hub.live, _user(conn).id, m.game, accept=False)


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
    conn.send(messages.challenge_reply("challenge_sent", made, m.ref))


async def _challenge_accept(hub: Hub, conn: Connection, m: p.ChallengeAccept) -> None:
    await challenges.accept(hub.live, _user(conn), m.challenge)  # then `your_game`


async def _challenge_decline(hub: Hub, conn: Connection, m: p.ChallengeDecline) -> None:
    done = await challenges.decline(hub.live, _user(conn), m.challenge, m.reason)
    conn.send(messages.challenge_reply("challenge_declined", done, m.ref))


async def _challenge_cancel(hub: Hub, conn: Connection, m: p.ChallengeCancel) -> None:
    done = await challenges.cancel(hub.live, _user(conn), m.challenge)
    conn.send(messages.challenge_reply("challenge_canceled", done, m.ref))


async def _seek(hub: Hub, conn: Connection, m: p.Seek) -> None:
    seeking = await pairing.seek(hub.live, _user(conn), m.pool, rated=m.rated)
    seeking["ref"] = m.ref
    conn.send(seeking)
    await pairing.pair(hub.live, m.pool)  # paired now, or by a later step: then `your_game`


async def _cancel_seek(hub: Hub, conn: Connection, m: p.CancelSeek) -> None:
    if not await pairing.cancel(hub.live, _user(conn).id):
        raise PlayError(Code.NOT_FOUND, "you are not waiting in a pool (paired meanwhile?)")
    conn.send(messages.seek_cancelled(m.ref))


_HANDLERS: dict[type[p.Message], Callable[[Hub, Connection, Any], Awaitable[None]]] = {
    p.Ping: _ping,
    p.SubscribeLobby: _subscribe_lobby,
    p.UnsubscribeLobby: _unsubscribe_lobby,
    p.FollowTournament: _follow_tournament,
    p.UnfollowTournament: _unfollow_tournament,
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
    p.Berserk: _berserk,
    p.DrawOffer: _draw_offer,
    p.DrawAccept: _draw_accept,
    p.DrawDecline: _draw_decline,
    p.TakebackOffer: _takeback_offer,
    p.TakebackAccept: _takeback_accept,
    p.TakebackDecline: _takeback_decline,
    p.Abort: _abort,
    p.ClaimWin: _claim_win,
    p.Challenge: _challenge,
    p.ChallengeAccept: _challenge_accept,
    p.ChallengeDecline: _challenge_decline,
    p.ChallengeCancel: _challenge_cancel,
    p.Seek: _seek,
    p.CancelSeek: _cancel_seek,
}
