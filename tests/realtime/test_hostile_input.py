"""Hostile frames on `/ws` against a real server: each gets the documented error (and the
connection stays usable) or the documented close code; games stay as they were; the server's
log holds no error or traceback.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from logging import LogRecord
from typing import Any

import pytest
import websockets
from websockets.exceptions import ConnectionClosed

from app.config import Settings
from app.db.models import MAX_ID
from tests.conftest import make_settings
from tests.support.logs import failures, server_log
from tests.support.server import Served, serve
from tests.support.ws import Client, connect, guest, start_game, subprotocols, ws_url

# A message (or raw frame text) and the error code it must get (None: no error).
Case = tuple[dict[str, Any] | str, str | None]
# What a game looks like to a newcomer: none of it may change through a refused message.
GAME_STATE = ("fen", "ply", "moves", "turn", "status", "result", "termination", "legal_moves")


@pytest.fixture
def settings(db_url: str) -> Settings:
    # Many messages per test: the rate limit has a test of its own.
    return make_settings(
        database_url=db_url, disconnect_grace_seconds=0.5, ws_messages_per_second=1000.0
    )


@pytest.fixture
def log(server: Served) -> Iterator[list[LogRecord]]:
    with server_log() as records:
        yield records


async def answers(client: Client, frame: str) -> list[dict[str, Any]]:
    """Everything the server sends after `frame` until a ping sent behind it is answered, which
    also shows that the connection is still usable."""
    await client.ws.send(frame)
    marker = -len(client.seen) - 1  # not the `t` of any earlier ping
    await client.send(type="ping", t=marker)
    replies = []
    while True:
        reply = await client.recv()
        if reply["type"] == "pong" and reply["t"] == marker:
            return replies
        replies.append(reply)


def error_code(replies: list[dict[str, Any]]) -> str | None:
    codes = [r["code"] for r in replies if r["type"] == "error"]
    assert len(codes) <= 1, replies
    return codes[0] if codes else None


async def check(client: Client, cases: list[Case]) -> None:
    """Send each case (a message, or raw frame text); its error code must be the expected one."""
    wrong = []
    for message, expected in cases:
        frame = message if isinstance(message, str) else json.dumps(message)
        got = error_code(await answers(client, frame))
        if got != expected:
            wrong.append((frame[:100], expected, got))
    assert wrong == []


async def game_state(served: Served, table: int) -> dict[str, Any]:
    async with connect(served.url) as newcomer:
        await newcomer.send(type="watch", table=table)
        game: dict[str, Any] = (await newcomer.expect("table"))["game"]
        return {key: game[key] for key in GAME_STATE}


BAD_IDS: list[Any] = [-1, 0, MAX_ID + 1, 2**64, "abc", "1e3", 1.5, None, [1], {"id": 1}]
# Values pydantic's lax mode would read as the id 1 (or 0, or 67): no coercion, each is refused.
COERCIBLE_IDS: list[Any] = [True, False, "1", "67", 1.0, 67.0]
TABLE_KINDS = ["sit", "leave", "watch", "unwatch", "rematch", "chat"]
GAME_KINDS = ["move", "resign", "draw_offer", "draw_accept", "draw_decline", "abort", "claim_win"]

FRAMES: dict[str, list[Case]] = {
    "not a message": [
        ("not json", "bad_message"),
        ("[]", "bad_message"),
        ("null", "bad_message"),
        ('"ping"', "bad_message"),
        ("{}", "bad_message"),
        ('{"type": null}', "bad_message"),
        ('{"type": ["move"]}', "bad_message"),
        ('{"type": "teleport"}', "bad_message"),
        ('\ufeff{"type": "ping"}', "bad_message"),
        ('{"type": "ping"} {"type": "ping"}', "bad_message"),
        ('{"type": "chat", "table": 1, "text": "\\ud800"}', "bad_message"),
        ('{"type": "ping", "type": "teleport"}', "bad_message"),
        ({"type": "ping", "extra": {"nested": [1, 2]}, "\u0000": 1}, None),
    ],
    "nested too deep": [
        ("[" * 2000 + "]" * 2000, "bad_message"),
        ('{"a":' * 600 + "1" + "}" * 600, "bad_message"),
        ('{"type": "ping", "ref": ' + "[" * 1500 + "]" * 1500 + "}", "bad_message"),
    ],
    "numbers that are not JSON's": [
        ('{"type": "ping", "t": 1e999}', "bad_message"),
        ('{"type": "ping", "t": -1e999}', "bad_message"),
        ('{"type": "ping", "t": NaN}', "bad_message"),
        ('{"type": "ping", "t": Infinity}', "bad_message"),
        ('{"type": "ping", "t": ' + "9" * 400 + "}", "bad_message"),
        ('{"type": "ping", "ref": 1e300}', "bad_message"),
    ],
    "absurd ids": [
        *(
            ({"type": kind, "table": bad, "text": "hi"}, "bad_message")
            for kind in TABLE_KINDS
            for bad in BAD_IDS + COERCIBLE_IDS
        ),
        *(
            ({"type": kind, "game": bad, "move": "11-15", "ply": 0}, "bad_message")
            for kind in GAME_KINDS
            for bad in BAD_IDS + COERCIBLE_IDS
        ),
        *(
            ({"type": kind, "table": MAX_ID, "text": "hi"}, "not_found")
            for kind in TABLE_KINDS
            if kind != "unwatch"
        ),
        ({"type": "unwatch", "table": MAX_ID}, None),
        *(
            ({"type": kind, "game": MAX_ID, "move": "11-15", "ply": 0}, "not_found")
            for kind in GAME_KINDS
        ),
        ({"type": "open", "room": MAX_ID}, "not_found"),
        ({"type": "open", "room": MAX_ID + 1}, "bad_message"),
        ({"type": "watch", "table": MAX_ID, "since": 2**70, "epoch": "x"}, "not_found"),
    ],
    "ill-typed fields": [
        *(
            ({"type": "move", "game": MAX_ID, "move": "11-15", "ply": ply}, "bad_message")
            for ply in [True, False, "0", "1", 0.0, 1.0]
        ),
        *(
            ({"type": "move", "game": MAX_ID, "move": move, "ply": 0}, "bad_message")
            for move in [1115, True, {"from": 11}]
        ),
        *(
            ({"type": "watch", "table": MAX_ID, "since": s}, "bad_message")
            for s in [True, "1", 1.0]
        ),
        *(({"type": "watch", "table": MAX_ID, "epoch": e}, "bad_message") for e in [1, True, []]),
        *(({"type": "sit", "table": MAX_ID, "invite": i}, "bad_message") for i in [1, False]),
        *(({"type": "chat", "table": MAX_ID, "text": t}, "bad_message") for t in [1, True, ["hi"]]),
        *(({"type": "ping", "t": t}, "bad_message") for t in [True, False, "1", [1], {"t": 1}]),
        *(({"type": "ping", "ref": ref}, "bad_message") for ref in [True, False, 1.0, [1], {}]),
        *(({"type": "open", "room": room}, "bad_message") for room in [True, False, 1.0, 2.0]),
        *(
            ({"type": "open", "room": "english-casual", "clock": clock}, "bad_message")
            for clock in [
                {"base": "300"},
                {"base": 300.0},
                {"base": True},
                {"base": 300, "increment": False},
                {"base": 300, "increment": "3"},
                {"base": 300, "increment": 3.0},
            ]
        ),
        *(
            ({"type": "open", "room": "english-casual", key: value}, "bad_message")
            for key, value in [
                ("private", 1),
                ("private", 0),
                ("private", "true"),
                ("variant", True),
                ("colour", 1),
                ("start_fen", True),
            ]
        ),
    ],
    "numbers where a number is meant": [
        ({"type": "ping", "t": 5}, None),
        ({"type": "ping", "t": -5.25}, None),
        ({"type": "ping", "t": 0, "ref": 7}, None),
        ({"type": "ping", "ref": "r-7"}, None),
        ({"type": "watch", "table": MAX_ID, "since": 0}, "not_found"),
    ],
    "unprintable text": [
        ({"type": "open", "room": "english-casual\u0000"}, "bad_message"),
        ({"type": "open", "room": "\u0000"}, "bad_message"),
        ({"type": "open", "room": "\u202eenglish-casual"}, "not_found"),
        ({"type": "open", "room": ""}, "not_found"),
        ({"type": "sit", "table": MAX_ID, "invite": "\u0000"}, "bad_message"),
        ({"type": "watch", "table": MAX_ID, "epoch": "\u0000", "since": 1}, "bad_message"),
        ({"type": "chat", "table": MAX_ID, "text": "\u001b[2J"}, "bad_message"),
        ({"type": "chat", "table": MAX_ID, "text": "a\u0000b"}, "bad_message"),
        ({"type": "chat", "table": MAX_ID, "text": "x" * 2001}, "bad_message"),
    ],
}


@pytest.mark.parametrize("group", FRAMES)
async def test_malformed_frames_get_bad_message_and_the_connection_stays_usable(
    server: Served, log: list[LogRecord], group: str
) -> None:
    async with guest(server.url) as client:
        await check(client, FRAMES[group])
    assert failures(log) == []


async def test_an_error_echoes_the_ref_when_it_can_be_read(
    server: Served, log: list[LogRecord]
) -> None:
    async with guest(server.url) as client:
        bad = {"type": "move", "game": "one", "move": "11-15", "ply": 0, "ref": "r-1"}
        assert (await answers(client, json.dumps(bad)))[0]["ref"] == "r-1"
        deep = '{"type": "move", "ref": 7, "game": ' + "[" * 1500 + "]" * 1500 + "}"
        assert "ref" not in (await answers(client, deep))[0]  # not readable: not echoed
    assert failures(log) == []


async def test_ill_typed_ids_and_plies_never_act(server: Served, log: list[LogRecord]) -> None:
    """Booleans, strings and whole floats would name game 1 and ply 0 if read leniently."""
    async with guest(server.url) as a, guest(server.url) as b:
        match = await start_game(a, b)
        assert match.id == 1 and match.ply == 0  # so that each coercion would hit this game
        table = match.table["id"]
        before = await game_state(server, table)
        move = {"type": "move", "game": 1, "move": "11-15", "ply": 0}
        await check(
            a,
            [
                *(({"type": "resign", "game": game}, "bad_message") for game in [True, "1", 1.0]),
                *(({"type": "abort", "game": game}, "bad_message") for game in [True, "1", 1.0]),
                *((move | {"game": game}, "bad_message") for game in [True, "1", 1.0]),
                *((move | {"ply": ply}, "bad_message") for ply in [False, "0", 0.0]),
                ({"type": "draw_offer", "game": True}, "bad_message"),
                ({"type": "leave", "table": float(table)}, "bad_message"),
            ],
        )
        assert await game_state(server, table) == before
        await match.play("11-15")  # the same move, well typed, is played
    assert failures(log) == []


@pytest.mark.parametrize("since", [2**31 - 1, 2**31, 2**53, MAX_ID, 2**70])
async def test_a_resume_from_beyond_any_event_number_gets_the_snapshot(
    server: Served, log: list[LogRecord], since: int
) -> None:
    """Event numbers are 32-bit in storage, while JSON and the protocol allow any integer: a
    `since` no table can reach is ahead of the log (a snapshot), never a server error."""
    async with guest(server.url) as a, guest(server.url) as b, connect(server.url) as spectator:
        match = await start_game(a, b)
        table = match.table["id"]
        replies = await answers(
            spectator, json.dumps({"type": "watch", "table": table, "since": since, "epoch": "log"})
        )
        assert [r["type"] for r in replies] == ["table"], replies
        assert replies[0]["v"] < 2**31
        await match.play("11-15")
        assert (await spectator.expect("move"))["ply"] == 1
    assert failures(log) == []


FEN_30_PIECES = "W:W" + ",".join(map(str, range(1, 16))) + ":B" + ",".join(map(str, range(18, 33)))


@pytest.mark.parametrize("room", ["english-casual", "pool"])
async def test_bad_table_settings_are_refused_and_open_nothing(
    server: Served, log: list[LogRecord], room: str
) -> None:
    cases: list[tuple[dict[str, Any], str]] = [
        ({"room": "no-such-room"}, "not_found"),
        ({"room": 0}, "bad_message"),
        ({"room": None}, "bad_message"),
        ({"room": ["pool"]}, "bad_message"),
        *(
            ({"clock": clock}, "bad_message")
            for clock in [
                {"base": -1},
                {"base": 0},
                {"base": 10801},
                {"base": MAX_ID + 1},
                {"base": 1.5},
                {"base": None},
                {"base": 300, "increment": -1},
                {"base": 300, "increment": 181},
                {"base": 300, "extra": 1},
                [],
                "300",
                300,
            ]
        ),
        *(({"colour": colour}, "bad_message") for colour in ["green", "", None, 1, "BLACK"]),
        *(({"variant": variant}, "bad_message") for variant in ["chess", "international", 1]),
        *(({"private": private}, "bad_message") for private in [2, None, [True]]),
        *(({"start_fen": fen}, "bad_message") for fen in [5, ["B:W1:B2"], "B:W1:B" + "2," * 100]),
        *(
            ({"start_fen": fen}, "invalid_fen")
            for fen in [
                "",
                "B",
                "X:W1:B2",
                "B:W50:B1",  # a square of the international board
                "B:W0:B1",
                "B:W33:B1",
                "B:W1:B1",
                "B:W1.5:B2",
                "B:W\u0000:B1",
                "B:W1:B\u202e2",
                "B:W:B",  # no pieces at all
                "B:W1,2:B",  # the side to move has no pieces
                "B:W29,30,31,32:B28",  # the side to move is blocked
                FEN_30_PIECES,  # every square full but two: 30 pieces and nobody can move
                "B:W" + ",".join(map(str, range(1, 17))) + ":B" + ",".join(map(str, range(17, 33))),
            ]
        ),
    ]
    async with guest(server.url) as host:
        await check(host, [({"type": "open", "room": room} | c, code) for c, code in cases])
        await host.send(type="subscribe_lobby")
        lobby = await host.expect("lobby")
        hosted = [t for r in lobby["rooms"] for t in r["tables"] if t["players"]]
        assert hosted == []
    assert failures(log) == []


async def test_hostile_moves_leave_the_game_as_it_was(server: Served, log: list[LogRecord]) -> None:
    async with (
        guest(server.url) as a,
        guest(server.url) as b,
        guest(server.url) as c,
        guest(server.url) as d,
        connect(server.url) as anonymous,
    ):
        match = await start_game(a, b)
        other = await start_game(c, d)
        await match.play("11-15")
        game, table = match.id, match.table["id"]
        before = await game_state(server, table)

        def move(text: Any = "23-19", ply: Any = 1, **extra: Any) -> dict[str, Any]:
            return {"type": "move", "game": game, "move": text, "ply": ply} | extra

        await check(
            a, [(move(), "not_your_turn"), ({"type": "draw_accept", "game": game}, "no_draw_offer")]
        )
        await check(
            b,
            [
                *((move(ply=ply), "stale_ply") for ply in [0, 2, 10**6, 2**64]),
                *((move(ply=ply), "bad_message") for ply in [-1, "one", 1.5, None, [1]]),
                *(
                    (move(text), "invalid_move")
                    for text in [
                        "99-100",
                        "\u0000",
                        "23\u202e-19",
                        "２３-１９",
                        "x",
                        "1-" + "9" * 100,
                    ]
                ),
                (move("11-15"), "illegal_move"),
                (move("28-24"), "illegal_move"),
                *((move(text), "bad_message") for text in ["", None, 23, ["23-19"], "x" * 121]),
                (move(game=other.id), "not_a_player"),
                ({"type": "resign", "game": other.id}, "not_a_player"),
                ({"type": "claim_win", "game": game}, "too_early"),
                ({"type": "leave", "table": table}, "game_in_progress"),
                ({"type": "rematch", "table": table}, "too_early"),
                ({"type": "sit", "table": table}, "seat_taken"),
            ],
        )
        await check(
            c, [(move(), "not_a_player"), ({"type": "abort", "game": game}, "not_a_player")]
        )
        await check(
            anonymous,
            [(move(), "unauthorized"), ({"type": "resign", "game": game}, "unauthorized")],
        )
        assert await game_state(server, table) == before

        await a.send(type="resign", game=game)
        await b.expect("game_ended", game=game)
        over = await game_state(server, table)
        finished = [
            (move(ply=over["ply"]), "game_over"),
            *(
                ({"type": kind, "game": game}, "game_over")
                for kind in ["resign", "abort", "draw_offer", "claim_win"]
            ),
        ]
        await check(b, finished)
        assert await game_state(server, table) == over
    assert failures(log) == []


async def test_chat_refuses_control_characters_and_passes_other_text_verbatim(
    server: Served, log: list[LogRecord], settings: Settings
) -> None:
    async with guest(server.url) as a, guest(server.url) as b, connect(server.url) as watcher:
        match = await start_game(a, b)
        table = match.table["id"]
        await watcher.send(type="watch", table=table)
        await watcher.expect("table")
        limit = settings.chat_max_length
        await check(
            a,
            [
                ({"type": "chat", "table": table, "text": text}, "bad_message")
                for text in [
                    "\u0007",
                    "red \u001b[31m",
                    "two\nlines",
                    "nul\u0000",
                    "\u0085",
                    " ",
                    "x" * (limit + 1),
                ]
            ],
        )
        said = ["\u202eevil\u202c", "שלום", "\U0001f600" * limit]
        await check(a, [({"type": "chat", "table": table, "text": text}, None) for text in said])
        assert [(await watcher.expect("chat"))["text"] for _ in said] == said
    assert failures(log) == []


async def closed_with(client: Client) -> int | None:
    """Read until the server closes the socket; its close code."""
    with pytest.raises(ConnectionClosed) as closed:
        while True:
            await client.recv()
    return closed.value.rcvd.code if closed.value.rcvd is not None else None


@pytest.mark.parametrize(
    ("frame", "code"),
    [
        (b"\x00\x01", 1003),
        (b'{"type": "ping"}', 1003),  # JSON, but in a binary frame
        (json.dumps({"type": "chat", "table": 1, "text": "\u00e9" * 2100}), 1009),  # > 4096 bytes
        ("x" * 5000, 1009),
    ],
)
async def test_frames_beyond_the_limits_close_with_the_documented_code(
    server: Served, log: list[LogRecord], frame: str | bytes, code: int
) -> None:
    async with guest(server.url) as client:
        await client.ws.send(frame)
        assert await closed_with(client) == code
    assert failures(log) == []


async def test_a_frame_at_the_limit_is_read(server: Served, log: list[LogRecord]) -> None:
    async with guest(server.url) as client:
        frame = '{"type": "ping", "t": 1, "pad": "' + "\u00e9" * 2000
        frame += "x" * (4096 - len((frame + '"}').encode())) + '"}'
        assert len(frame.encode()) == 4096
        assert error_code(await answers(client, frame)) is None
    assert failures(log) == []


async def test_a_flood_is_rate_limited_then_closed(db_url: str) -> None:
    async with serve(make_settings(database_url=db_url)) as served:
        with server_log() as log:
            async with guest(served.url) as client:
                for n in range(400):
                    try:
                        await client.send(type="ping", t=n)
                    except ConnectionClosed:
                        break
                codes: set[str] = set()
                with pytest.raises(ConnectionClosed) as closed:
                    while True:
                        reply = await client.recv()
                        if reply["type"] == "error":
                            codes.add(reply["code"])
                assert codes == {"rate_limited"}
                assert closed.value.rcvd is not None and closed.value.rcvd.code == 1008
            assert failures(log) == []


@pytest.mark.parametrize(
    "payload",
    [
        b"\xff\xfe",
        b'{"type": "ping", "t": 1, "ref": "\xc3"}',  # a sequence cut short
        b'{"type": "chat", "table": 1, "text": "\xc0\xaf"}',  # an overlong "/"
        b'{"type": "ping", "ref": "\xed\xa0\x80"}',  # a UTF-16 surrogate, encoded
    ],
)
async def test_invalid_utf8_in_a_text_frame_closes_with_1007_quietly(
    server: Served, log: list[LogRecord], payload: bytes
) -> None:
    async with guest(server.url) as client:
        await client.ws.send(payload, text=True)
        assert await closed_with(client) == 1007
    async with guest(server.url) as client:  # the server is as it was
        await client.send(type="ping", t=1)
        await client.expect("pong", t=1)
    assert failures(log) == []
    noted = [(r.levelname, r.getMessage()) for r in log if "UTF-8" in r.getMessage()]
    assert len(noted) == 1 and noted[0][0] == "WARNING" and "1007" in noted[0][1], noted


@pytest.mark.parametrize("token", ["forged", "", "%00", "x" * 3000, "%E2%80%AE", "a.b", "_-"])
async def test_a_forged_token_is_refused_with_1008(
    server: Served, log: list[LogRecord], token: str
) -> None:
    async with websockets.connect(ws_url(server.url), subprotocols=subprotocols(token)) as ws:
        client = Client(ws)
        assert (await client.recv())["code"] == "unauthorized"
        assert await closed_with(client) == 1008
    assert failures(log) == []
