"""The bot API driven by a real lichess client, berserk (the version the `dev` extra pins), with
its own calls only: who the bot is, challenges in lichess's fields, the two streams in timed
and untimed games, moves, chat, resigning and aborting, the online bots; bot against bot and
bot against a person playing over the websocket. berserk blocks (requests), so its calls run
in threads while the server runs in the test's event loop. Every test runs on SQLite and on
PostgreSQL."""

from __future__ import annotations

import asyncio
import contextlib
import random
import socket
import threading
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

import berserk
import pytest
import requests
from berserk.exceptions import ResponseError

from app.bots import streams
from tests.support.server import Served
from tests.support.ws import Client, connect
from tests.support.ws import member_token as register

WAIT_SECONDS = 10.0
END = object()


@pytest.fixture
async def server(real_server: Served) -> Served:
    """A real server: berserk is lichess's client, calling through the network with requests."""
    return real_server


@dataclass
class Bot:
    api: berserk.Client
    token: str


async def call(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    return await asyncio.to_thread(fn, *args, **kwargs)


async def new_bot(server: Served, name: str) -> Bot:
    """A registered account (lichess has no registration call) made a bot through berserk."""
    token = await register(server.url, name)
    api = berserk.Client(session=berserk.TokenSession(token), base_url=server.url)
    await call(api.account.upgrade_to_bot)
    return Bot(api, token)


class Stream:
    """A berserk stream read in a thread of its own (on a client of its own), its items handed
    to the test's loop; `close` shuts the connection's socket, which ends the read."""

    def __init__(
        self, server: Served, token: str, open_: Callable[[berserk.Client], Iterator[Any]]
    ):
        self.loop = asyncio.get_running_loop()
        self.items: asyncio.Queue[Any] = asyncio.Queue()
        self.responses: list[requests.Response] = []
        session = berserk.TokenSession(token)
        session.hooks["response"].append(lambda response, **_: self.responses.append(response))
        client = berserk.Client(session=session, base_url=server.url)
        self.thread = threading.Thread(target=self._read, args=(open_, client), daemon=True)
        self.thread.start()

    def _read(self, open_: Callable[[berserk.Client], Iterator[Any]], client: Any) -> None:
        try:
            for item in open_(client):
                self.loop.call_soon_threadsafe(self.items.put_nowait, item)
        except Exception as exc:  # handed to the test, which raises it
            self.loop.call_soon_threadsafe(self.items.put_nowait, exc)
        self.loop.call_soon_threadsafe(self.items.put_nowait, END)

    async def next(self, kind: str | None = None) -> Any:
        """The next item (of type `kind`); END when the stream ended."""
        while True:
            item = await asyncio.wait_for(self.items.get(), WAIT_SECONDS)
            if isinstance(item, Exception):
                raise item
            if item is END or kind is None or item.get("type") == kind:
                return item

    async def close(self) -> None:
        for response in self.responses:
            connection = getattr(response.raw, "connection", None)
            sock = getattr(connection, "sock", None)
            if sock is not None:
                with contextlib.suppress(OSError):
                    sock.shutdown(socket.SHUT_RDWR)
        await asyncio.to_thread(self.thread.join, WAIT_SECONDS)


@contextlib.asynccontextmanager
async def following(
    server: Served, bot: Bot, open_: Callable[[berserk.Client], Iterator[Any]]
) -> AsyncIterator[Stream]:
    stream = Stream(server, bot.token, open_)
    try:
        yield stream
    finally:
        await stream.close()


def events(server: Served, bot: Bot) -> contextlib.AbstractAsyncContextManager[Stream]:
    return following(server, bot, lambda api: api.bots.stream_incoming_events())


async def play(
    server: Served, bot: Bot, game_id: int, colour: str, seed: int, resign_at: int | None = None
) -> list[dict[str, Any]]:
    """A bot's game through berserk alone, as a bot runner plays it: random legal moves from
    `stream_game_state` with `make_move`, until the game ends (or it resigns at ply
    `resign_at`). Every line the stream sent."""
    lines: list[dict[str, Any]] = []
    rng = random.Random(seed)
    async with following(server, bot, lambda api: api.bots.stream_game_state(game_id)) as game:
        while (line := await game.next()) is not END:
            lines.append(line)
            state = line.get("state", line)
            if state["status"] != "started":
                break
            if state["turn"] != colour:
                continue
            if resign_at is not None and len(state["moves"].split()) >= resign_at:
                await call(bot.api.bots.post_message, game_id, "good game")
                await call(bot.api.bots.resign_game, game_id)
                continue
            await call(bot.api.bots.make_move, game_id, rng.choice(state["legal_moves"]))
    return lines


def check_game_start(start: dict[str, Any], colour: str, opponent: str, timed: bool) -> None:
    """What lichess's `gameStart` gives a bot runner, in lichess's form, beside ours."""
    game = start["game"]
    assert game["gameId"] == game["id"] and game["fullId"] == str(game["id"])
    assert game["color"] == colour and isinstance(game["fen"], str)
    assert game["isMyTurn"] is (colour == "black") and game["lastMove"] == ""
    assert game["opponent"]["username"] == game["opponent"]["name"] == opponent
    assert "rating" in game["opponent"] and game["rated"] is False
    assert game["variant"] == {"key": "english", "name": "English draughts"}
    if timed:
        assert (game["speed"], game["secondsLeft"]) == ("blitz", 180)
    else:
        assert game["speed"] == "correspondence" and "secondsLeft" not in game


def check_game_lines(lines: list[dict[str, Any]], black: str, white: str, timed: bool) -> None:
    """`gameFull` and `gameState` as berserk parsed them: numbers where lichess has numbers."""
    full = lines[0]
    assert full["type"] == "gameFull" and isinstance(full["createdAt"], datetime)
    assert (full["black"]["name"], full["white"]["name"]) == (black, white)
    assert "rating" in full["black"] and full["initialFen"] == "startpos"
    for state in lines[1:]:
        assert state["type"] == "gameState"
        for key in ("wtime", "btime", "winc", "binc"):
            assert isinstance(state[key], timedelta), (key, state)
        if timed:
            assert state["winc"] == timedelta(seconds=2)
        else:
            assert state["winc"] == timedelta(0)
    assert lines[-1]["status"] != "started"


CLOCKS = {"timed": {"clock_limit": 180, "clock_increment": 2}, "untimed": {}}


@pytest.mark.parametrize("timing", CLOCKS)
async def test_two_bots_play_a_whole_game_through_berserk(server: Served, timing: str) -> None:
    timed = timing == "timed"
    one, two = await new_bot(server, "bkone"), await new_bot(server, "bktwo")
    me = await call(one.api.account.get)
    assert (me["username"], me["title"]) == ("bkone", "BOT")
    assert isinstance(me["createdAt"], datetime)
    async with events(server, one) as one_events, events(server, two) as two_events:
        made = await call(
            one.api.challenges.create,
            "bktwo",
            rated=False,
            color="black",
            variant="english",
            **CLOCKS[timing],
        )
        told = await two_events.next("challenge")
        assert told["challenge"]["id"] == made["id"] and told["challenge"]["color"] == "black"
        await call(two.api.bots.accept_challenge, made["id"])
        start_one = await one_events.next("gameStart")
        start_two = await two_events.next("gameStart")
        check_game_start(start_one, "black", "bktwo", timed)
        check_game_start(start_two, "white", "bkone", timed)
        game_id = start_one["game"]["gameId"]
        async with asyncio.TaskGroup() as players:  # one fails: the other stops
            black = players.create_task(
                play(server, one, game_id, "black", 1, resign_at=None if timed else 6)
            )
            white = players.create_task(play(server, two, game_id, "white", 2))
        black_lines, white_lines = black.result(), white.result()
        finish = await one_events.next("gameFinish")
    for lines in (black_lines, white_lines):
        check_game_lines(lines, "bkone", "bktwo", timed)
    assert finish["game"]["gameId"] == game_id
    assert finish["game"]["status"] == black_lines[-1]["status"]
    if not timed:
        assert (finish["game"]["status"], finish["game"]["winner"]) == ("resignation", "white")
    async with server.http() as http:
        archived = (await http.get(f"/api/games/{game_id}")).json()
    assert archived["status"] == "finished" and archived["black"] == "bkone"


async def person_plays(person: Client, started: dict[str, Any], seed: int) -> dict[str, Any]:
    """A person over the websocket: watches the game's table and plays random legal moves
    in turn until the game ends; its `game_ended`."""
    rng = random.Random(seed)
    await person.send(type="watch", table=started["table"])
    game = (await person.expect("table"))["game"]
    ply, turn, legal = game["ply"], game["turn"], game["legal_moves"]
    while True:
        if turn == started["colour"] and legal:  # none: the game ended, `game_ended` follows
            await person.send(type="move", game=game["id"], move=rng.choice(legal), ply=ply)
        message = await person.recv()
        if message["type"] == "game_ended":
            return message
        if message["type"] == "move" and message.get("game") == game["id"]:
            ply, turn, legal = message["ply"], message["turn"], message["legal_moves"]


@pytest.mark.parametrize("timing", CLOCKS)
async def test_a_bot_plays_a_person_through_berserk(server: Served, timing: str) -> None:
    """Timed, the bot challenges the person; untimed, the person challenges the bot."""
    timed = timing == "timed"
    bot = await new_bot(server, "bkbot")
    async with (
        connect(server.url, await register(server.url, "person")) as person,
        events(server, bot) as bot_events,
    ):
        if timed:
            made = await call(
                bot.api.challenges.create,
                "person",
                rated=False,
                color="white",
                variant="english",
                **CLOCKS[timing],
            )
            told = (await person.expect("challenge"))["challenge"]
            assert told["id"] == made["id"]
            await person.send(type="challenge_accept", challenge=made["id"])
        else:
            await person.send(type="challenge", user="bkbot", colour="black")
            told = (await bot_events.next("challenge"))["challenge"]
            assert told["timeControl"] == {"type": "unlimited"}
            await call(bot.api.bots.accept_challenge, told["id"])
        started = await person.expect("your_game")
        assert started["colour"] == "black"
        start = await bot_events.next("gameStart")
        check_game_start(start, "white", "person", timed)
        async with asyncio.TaskGroup() as players:
            playing = players.create_task(play(server, bot, start["game"]["gameId"], "white", 3))
            ending = players.create_task(person_plays(person, started, 4))
        lines, ended = playing.result(), ending.result()
        finish = await bot_events.next("gameFinish")
    check_game_lines(lines, "person", "bkbot", timed)
    assert finish["game"]["status"] == lines[-1]["status"] == ended["termination"]


async def test_challenges_declined_cancelled_and_aborted_through_berserk(
    server: Served, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(streams, "KEEP_ALIVE_SECONDS", 0.2)
    one, two = await new_bot(server, "bkthree"), await new_bot(server, "bkfour")
    async with events(server, one) as one_events:
        made = await call(two.api.challenges.create, "bkthree", rated=False)
        await one_events.next("challenge")
        await call(one.api.challenges.decline, made["id"], reason="tooFast")
        mine = await call(one.api.challenges.create, "bkfour", rated=False)
        await call(one.api.challenges.cancel, mine["id"])
        waiting = await call(two.api.challenges.get_mine)
        assert waiting == {"in": [], "out": []}
        # Form-encoded, as lichess takes it too.
        async with server.http() as http:
            form = await http.post(
                "/api/challenge/bkthree",
                data={"clock.limit": "60", "clock.increment": "0", "color": "white"},
                headers={"Authorization": f"Bearer {two.token}"},
            )
        assert form.status_code == 200, form.text
        assert form.json()["timeControl"] == {
            "type": "clock",
            "limit": 60,
            "increment": 0,
            "show": "1+0",
        }
        await call(one.api.challenges.accept, form.json()["id"])
        start = await one_events.next("gameStart")
        assert (start["game"]["color"], start["game"]["speed"]) == ("black", "bullet")
        await call(one.api.bots.abort_game, start["game"]["gameId"])
        finish = await one_events.next("gameFinish")
        assert finish["game"]["status"] == "aborted"
        # Both were seen when they registered; a minute later, only the one with a stream.
        server.clock.advance(60)
        await asyncio.sleep(0.5)
        online = await call(lambda: list(two.api.bots.get_online_bots()))
        assert [bot["username"] for bot in online] == ["bkthree"]  # bkfour has no stream open
        assert online[0]["title"] == "BOT" and isinstance(online[0]["seenAt"], datetime)


async def test_a_game_from_a_position_through_berserk(server: Served) -> None:
    one, two = await new_bot(server, "bkfive"), await new_bot(server, "bksix")
    fen = "W:W21,22:B9,10"
    async with events(server, two) as two_events:
        made = await call(
            one.api.challenges.create, "bksix", rated=False, color="black", position=fen
        )
        assert made["start_fen"] is not None
        await call(two.api.challenges.accept, made["id"])
        start = await two_events.next("gameStart")
        assert start["game"]["isMyTurn"] is True  # White moves first in that position
    game_id = start["game"]["gameId"]
    async with following(server, two, lambda api: api.bots.stream_game_state(game_id)) as game:
        full = await game.next()
    assert full["initialFen"] == made["start_fen"]
    assert full["state"]["legal_moves"] == ["21-17", "22-17", "22-18"]


async def test_a_correspondence_game_through_berserk(server: Served) -> None:
    """Lichess's `days`: the challenge, the game's start and its stream read as lichess's
    correspondence games do (`daysPerTurn`, no clock)."""
    one, two = await new_bot(server, "bkcorr1"), await new_bot(server, "bkcorr2")
    async with events(server, two) as two_events:
        made = await call(one.api.challenges.create, "bkcorr2", rated=False, days=3)
        control = made["timeControl"]
        assert (control["type"], control["daysPerTurn"]) == ("correspondence", 3)
        assert made["speed"] == "correspondence"
        assert made["clock"] == {"base": 3 * 86_400, "increment": 0, "days": 3}
        await call(two.api.challenges.accept, made["id"])
        start = await two_events.next("gameStart")
        assert start["game"]["speed"] == "correspondence"
    game_id = start["game"]["gameId"]
    async with following(server, two, lambda api: api.bots.stream_game_state(game_id)) as game:
        full = await game.next()
    assert full["clock"] is None and full["daysPerTurn"] == 3
    assert full["speed"] == "correspondence"


BAD_CHALLENGES = {
    "unknown variant": {"variant": "standard"},
    "clock past its bounds": {"clock_limit": 99_999, "clock_increment": 0},
    "negative increment": {"clock_limit": 60, "clock_increment": -1},
    "half a clock": {"clock_limit": 60},
    "not a position": {"position": "not a position"},
    "days per move not offered": {"days": 4},
    "days and a clock": {"days": 3, "clock_limit": 60, "clock_increment": 0},
    "rated from a position": {"position": "W:W21,22:B9,10", "rated": True},
}


@pytest.mark.parametrize("bad", BAD_CHALLENGES)
async def test_bad_challenges_get_lichess_kind_of_answer_and_store_nothing(
    server: Served, bad: str
) -> None:
    one, two = await new_bot(server, "bkseven"), await new_bot(server, "bkeight")
    fields = {"rated": False} | BAD_CHALLENGES[bad]
    with pytest.raises(ResponseError) as refused:
        await call(one.api.challenges.create, "bkeight", **fields)
    assert refused.value.status_code == 400
    assert isinstance(refused.value.cause["error"], str), refused.value.cause
    assert await call(two.api.challenges.get_mine) == {"in": [], "out": []}


async def test_an_untimed_game_stream_reads_in_berserk(server: Served) -> None:
    """The game made in our own shape; berserk reads its stream: times are numbers (lichess's
    unlimited), not null, which its converter cannot read."""
    one, two = await new_bot(server, "bknine"), await new_bot(server, "bkten")
    async with server.http() as http:
        made = await http.post(
            "/api/challenge/bkten",
            json={"colour": "black", "clock": None},
            headers={"Authorization": f"Bearer {one.token}"},
        )
        accepted = await http.post(
            f"/api/challenge/{made.json()['id']}/accept",
            headers={"Authorization": f"Bearer {two.token}"},
        )
    game_id = accepted.json()["challenge"]["game"]
    async with following(server, one, lambda api: api.bots.stream_game_state(game_id)) as game:
        full = await game.next()
        assert full["clock"] is None and full["state"]["wtime"] == 2**31 - 1
        await call(one.api.bots.make_move, game_id, "9-14")
        state = await game.next()
    assert state["moves"] == "9-14"
    assert (state["btime"], state["binc"]) == (timedelta(milliseconds=2**31 - 1), timedelta(0))
