"""The bot API's two streams, as lichess's bot API shapes them: a user's events (games that
start and finish, challenges) and one game's state. They yield JSON-ready dicts, and None when
nothing happened for `KEEP_ALIVE_SECONDS` (the face writes an empty line then).

Both read what every process can read: a table's events from its log (`app.live.log_store`),
woken when this process stores one (`LivePlay.table_waiters`) or another rings the broker, and
read again every `POLL_SECONDS` in case a ring was lost; a user's notices from the user's
channel on the broker (`LivePlay.notify`).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncGenerator, AsyncIterator, Mapping
from typing import Any, TypeVar

from app.bots import lichess
from app.broker import BrokerUnavailable, Subscription
from app.errors import Code
from app.live import events
from app.live import log_store as table_log
from app.live.events import unix_ms
from app.live.liveplay import LivePlay, PlayError, no_game, table_channel, user_channel
from app.live.log_store import StoredEvent
from app.matchmaking import challenges
from app.play import games
from app.play import store as stored_games
from app.play.players import PlayerRef
from app.status import GameStatus
from app.tables import presence_store as stored_presence
from app.tables import service as tables
from app.timeutil import as_unix

logger = logging.getLogger(__name__)

KEEP_ALIVE_SECONDS = 7.0
SEEN_EVERY_SECONDS = 7.0  # an open event stream notes its user as seen this often
POLL_SECONDS = 2.0
LOG_BATCH = 500

T = TypeVar("T")


async def _ring(sub: Subscription, wake: asyncio.Event) -> None:
    async for _ in sub:
        wake.set()


async def table_events(
    live: LivePlay, table_id: int, after: int
) -> AsyncGenerator[StoredEvent, None]:
    """The table's events numbered above `after`, in order, as they are stored, forever."""
    wake = asyncio.Event()
    waiters = live.table_waiters.setdefault(table_id, set())
    waiters.add(wake)
    ringing: asyncio.Task[None] | None = None
    try:
        async with contextlib.AsyncExitStack() as stack:
            if live.broker.shared:  # other processes ring the table's channel
                try:
                    sub = await stack.enter_async_context(
                        live.broker.subscribe(table_channel(table_id))
                    )
                    ringing = asyncio.create_task(_ring(sub, wake))
                except BrokerUnavailable:
                    logger.warning("cannot follow table %d's rings; reading its log", table_id)
            while True:
                wake.clear()
                async with live.db.session() as session:
                    got = await table_log.since(session, table_id, after, LOG_BATCH)
                for event in got:
                    after = event.seq
                    yield event
                if len(got) == LOG_BATCH:
                    continue
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(wake.wait(), POLL_SECONDS)
    finally:
        if ringing is not None:
            ringing.cancel()
        waiters.discard(wake)
        if not waiters:
            live.table_waiters.pop(table_id, None)


# --- one game ---------------------------------------------------------------------------------


def _state(game: dict[str, Any], clock: dict[str, int] | None) -> dict[str, Any]:
    """A `gameState` line from a game as `games.game_payload` shows it. Times are numbers in
    milliseconds, as lichess's clients read them: with no clock, lichess's "unlimited"."""
    clocks = game["clocks"]
    increment = clock["increment"] * 1000 if clock is not None else 0
    status = "started" if game["status"] == GameStatus.PLAYING else game["termination"]
    winner = None
    if game["result"] == "1-0":
        winner = "black"
    elif game["result"] == "0-1":
        winner = "white"
    return {
        "type": "gameState",
        "moves": " ".join(game["moves"]),
        "btime": clocks["black"] if clocks else lichess.UNLIMITED_MS,
        "wtime": clocks["white"] if clocks else lichess.UNLIMITED_MS,
        "binc": increment,
        "winc": increment,
        "status": status,
        "winner": winner,
        "turn": game["turn"],
        "legal_moves": game["legal_moves"],
        "bdraw": game["draw_offer"] == "black",
        "wdraw": game["draw_offer"] == "white",
    }


def _full(game: dict[str, Any], table: dict[str, Any], created_at: float) -> dict[str, Any]:
    clock = table["clock"]
    base, increment = (clock["base"], clock["increment"]) if clock is not None else (None, 0)
    return {
        "type": "gameFull",
        "id": game["id"],
        "table": game["table"],
        "variant": game["variant"],
        "rated": table["rated"],
        "speed": lichess.speed(base, increment),
        "createdAt": unix_ms(created_at),
        "clock": (
            {"initial": clock["base"] * 1000, "increment": clock["increment"] * 1000}
            if clock is not None and "days" not in clock
            else None
        ),
        **({"daysPerTurn": clock["days"]} if clock is not None and "days" in clock else {}),
        "black": lichess.player(game["black"]),
        "white": lichess.player(game["white"]),
        "initialFen": game["start_fen"] or "startpos",
        "state": _state(game, clock),
    }


def _follow(game: dict[str, Any], event: Mapping[str, Any]) -> bool:
    """Apply one table event of the game to its payload; whether the state changed."""
    kind = event.get("type")
    if event.get("game") != game["id"]:
        return False
    if kind == "move" and event["ply"] == game["ply"] + 1:
        game["moves"].append(event["move"])
        game["ply"], game["turn"] = event["ply"], event["turn"]
        game["clocks"], game["legal_moves"] = event["clocks"], event["legal_moves"]
        game["draw_offer"] = None
        return True
    if kind == "game_ended":
        game["status"] = GameStatus.FINISHED
        game["result"], game["termination"] = event["result"], event["termination"]
        game["legal_moves"] = []
        if event["clocks"] is not None:
            game["clocks"] = event["clocks"]
        return True
    if kind == "draw_offered":
        game["draw_offer"] = event["by"]
        return True
    if kind == "draw_declined":
        game["draw_offer"] = None
        return True
    return False


async def game_stream(
    live: LivePlay, user_id: int | None, game_id: int
) -> AsyncIterator[dict[str, Any] | None]:
    """`gameFull`, then a `gameState` after every move, draw offer and the ending (the last
    line); None when idle. A game at a private table is for its players only."""
    found = await games.snapshot(live, game_id)
    try:
        snap = await tables.snapshot(live, found["table"], user_id)
    except PlayError as exc:  # a private table: the game is not for this caller
        if exc.code is Code.NOT_FOUND:
            raise no_game(game_id) from None
        raise
    game = snap["game"] if snap["game"] is not None and snap["game"]["id"] == game_id else found
    _, _, created_at = await _facts(live, game_id)
    yield _full(game, snap["table"], created_at)
    if game["status"] != GameStatus.PLAYING:
        return
    clock = snap["table"]["clock"]
    following = keep_alive(table_events(live, found["table"], snap["v"]))
    async with contextlib.aclosing(following):
        async for event in following:
            if event is None:
                yield None
            elif _follow(game, event.data):
                if game["status"] == GameStatus.PLAYING and not game["legal_moves"]:
                    continue  # the move that ended the game: its ending comes next, one line
                yield _state(game, clock)
                if game["status"] != GameStatus.PLAYING:
                    return


async def _facts(live: LivePlay, game_id: int) -> tuple[int | None, int, float]:
    """The game's clock (base s, None: untimed; increment s) and when it started (Unix s)."""
    async with live.db.session() as session:
        row = await stored_games.get(session, game_id)
    if row is None:
        raise no_game(game_id)
    return row.clock_base_s, row.clock_increment_s, as_unix(row.started_at)


# --- a user's events ----------------------------------------------------------------------------


async def _game_line(
    live: LivePlay, kind: str, game: dict[str, Any], user_id: int
) -> dict[str, Any]:
    """`gameStart` / `gameFinish` for `game` (a `games.game_payload`): our `id`, `table`,
    `color` and `opponent`, and lichess's facts of the game (`lichess.game_for`)."""
    base, increment, _ = await _facts(live, game["id"])
    facts = lichess.game_for(game, user_id, base, increment)
    return {
        "type": kind,
        "game": facts | {"id": game["id"], "table": game["table"]},
    }


_NOTICE_TYPES = {
    "challenge": "challenge",
    "challenge_declined": "challengeDeclined",
    "challenge_canceled": "challengeCanceled",
}


async def _watch_finish(
    live: LivePlay, user_id: int, game_id: int, table_id: int, out: asyncio.Queue[dict[str, Any]]
) -> None:
    """Put `gameFinish` on `out` when the game ends."""
    async with live.db.session() as session:
        after = await table_log.head(session, table_id)
    game = await games.snapshot(live, game_id)  # read after the head: an ending is in one
    if game["status"] == GameStatus.PLAYING:
        following = table_events(live, table_id, after)
        async with contextlib.aclosing(following):
            async for event in following:
                changed = _follow(game, event.data)
                if changed and game["status"] != GameStatus.PLAYING:
                    break
    line = await _game_line(live, "gameFinish", game, user_id)
    line["game"] |= _end(game)
    await out.put(line)


def _end(game: dict[str, Any]) -> dict[str, Any]:
    state = _state(game, None)
    return {"status": state["status"], "winner": state["winner"], "table": game["table"]}


async def event_stream(live: LivePlay, user: PlayerRef) -> AsyncIterator[dict[str, Any] | None]:
    """The user's games in progress and waiting challenges, then `gameStart`, `gameFinish`,
    `challenge`, `challengeDeclined` and `challengeCanceled` as they happen; None when idle."""
    out: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
    watching: dict[int, asyncio.Task[None]] = {}
    challenged: set[int] = set()  # challenges sent (on connect, or as they came)
    started: set[int] = set()  # games whose start was sent

    def watch(game_id: int, table_id: int) -> None:
        if game_id not in watching:
            watching[game_id] = asyncio.create_task(
                _watch_finish(live, user.id, game_id, table_id, out)
            )

    async def start(game_id: int) -> None:
        if game_id in started:  # told already (on connect, or as it came)
            return
        started.add(game_id)
        game = await games.snapshot(live, game_id)
        await out.put(await _game_line(live, "gameStart", game, user.id))
        watch(game_id, game["table"])

    async def pump(sub: Subscription) -> None:
        async for text in sub:
            notice = events.decode(text)
            kind = notice.get("type")
            if kind == "your_game":
                await start(notice["game"])
            elif kind in _NOTICE_TYPES:
                if kind == "challenge":  # perhaps listed on connect already
                    if notice["challenge"]["id"] in challenged:
                        continue
                    challenged.add(notice["challenge"]["id"])
                shown = lichess.challenge(notice["challenge"])
                await out.put({"type": _NOTICE_TYPES[kind], "challenge": shown})

    async with live.broker.subscribe(user_channel(user.id)) as sub:
        pumping = asyncio.create_task(pump(sub))
        try:
            await _seen(live, user.id)
            seen = live.clock.time()
            for playing in await games.playing_for(live, user.id):
                await start(playing["game"])
            for waiting in await challenges.waiting_for(live, user.id):
                if waiting["id"] not in challenged:
                    challenged.add(waiting["id"])
                    await out.put({"type": "challenge", "challenge": lichess.challenge(waiting)})
            while True:
                if live.clock.time() - seen >= SEEN_EVERY_SECONDS:
                    await _seen(live, user.id)
                    seen = live.clock.time()
                try:
                    line = await asyncio.wait_for(out.get(), KEEP_ALIVE_SECONDS)
                except TimeoutError:
                    yield None
                    continue
                if line["type"] == "gameFinish":
                    watching.pop(line["game"]["id"], None)
                yield line
        finally:
            pumping.cancel()
            for task in watching.values():
                task.cancel()


async def _seen(live: LivePlay, user_id: int) -> None:
    """Note the user as seen now: an account with an event stream open is online (a bot is
    listed by `GET /api/bot/online` while it was seen lately)."""
    async with live.db.session() as session:
        await stored_presence.set_last_seen(session, user_id, live.clock.now())
        await session.commit()


async def _next(items: AsyncIterator[T]) -> T:
    return await anext(items)


async def keep_alive(items: AsyncIterator[T]) -> AsyncGenerator[T | None, None]:
    """`items`, with None whenever none came for `KEEP_ALIVE_SECONDS`."""
    pending: asyncio.Task[T] | None = None
    try:
        while True:
            if pending is None:
                pending = asyncio.create_task(_next(items))
            done, _ = await asyncio.wait({pending}, timeout=KEEP_ALIVE_SECONDS)
            if not done:
                yield None
                continue
            try:
                item = pending.result()
            except StopAsyncIteration:
                return
            pending = None
            yield item
    finally:
        if pending is not None:
            pending.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await pending
        closing = getattr(items, "aclose", None)
        if closing is not None:
            with contextlib.suppress(Exception):
                await closing()
