"""Generated frames against a real server, with hypothesis.

Two players play at a table while a third user (and the players themselves) send generated
frames: JSON of any shape, messages with a field of the wrong type, well-formed messages for
other games and tables, moves out of turn, illegal, or with a stale ply, and, on a second socket,
frames the server closes (too big, binary, invalid UTF-8). Every frame must be answered: a reply,
the event it causes, or a documented error (`bad_message` where the frame is no valid message),
or, on the second socket, the documented close code; never silence, never a server error, never
an unexpected close. Afterwards the database must be consistent: each game's stored moves,
replayed by the rules engine, give its stored ply and ending and the position the server shows,
and each table's event log is numbered 1, 2, 3… without a gap.

Hypothesis runs in a worker thread and hands each example to the test's event loop, where the
server runs; the examples are derandomized, so CI always runs the same ones.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import pytest
from hypothesis import HealthCheck, Phase, given
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st
from sqlalchemy import select
from websockets.exceptions import ConnectionClosed

from app.config import Settings
from app.db.models import MAX_ID, GameTable, TableEvent
from app.db.models import Game as GameRow
from app.db.models import Move as MoveRow
from app.rules import Color, Game, RulesError
from tests.conftest import make_settings
from tests.support.logs import failures, server_log
from tests.support.server import Served
from tests.support.ws import Client, Match, connect, guest_token, start_game

pytestmark = pytest.mark.thorough  # generated inputs: seconds of CPU

EXAMPLES = 40
EXAMPLE_SECONDS = 60.0

# What docs/protocol.md lists: the server's message types and error codes.
SERVER_TYPES = {
    "welcome", "pong", "error", "kicked", "lobby", "lobby_table", "lobby_table_removed",
    "room_closed", "table", "table_update", "game_started", "move", "draw_offered",
    "draw_declined", "player_away", "player_back", "game_ended", "rematch_offered", "chat",
    "table_closed", "synced", "your_game", "chat_withheld",
}  # fmt: skip
ERROR_CODES = {
    "bad_message", "unauthorized", "not_found", "not_a_player", "not_your_turn", "stale_ply",
    "invalid_move", "illegal_move", "capture_required", "ambiguous_move", "game_over",
    "invalid_fen", "seat_taken", "room_closed", "game_in_progress", "no_draw_offer",
    "draw_offer_limit", "too_early", "rate_limited", "too_many_tables", "too_many_ai_games",
}  # fmt: skip
# Accepted messages that need not answer: their effect is that something stops.
SILENT = {"unwatch", "unsubscribe_lobby"}

# The client messages, with the kind of each field a generated message may get wrong.
FIELDS: dict[str, dict[str, str]] = {
    "ping": {"t": "number", "ref": "ref"},
    "subscribe_lobby": {"ref": "ref"},
    "unsubscribe_lobby": {"ref": "ref"},
    "open": {
        "room": "room",
        "variant": "choice",
        "clock": "clock",
        "colour": "choice",
        "private": "bool",
        "start_fen": "text",
    },
    "sit": {"table": "id", "invite": "text"},
    "leave": {"table": "id"},
    "watch": {"table": "id", "since": "count", "epoch": "text", "invite": "text"},
    "unwatch": {"table": "id"},
    "rematch": {"table": "id"},
    "chat": {"table": "id", "text": "text"},
    "move": {"game": "id", "move": "text", "ply": "count"},
    **{
        kind: {"game": "id", "ref": "ref"}
        for kind in ["resign", "draw_offer", "draw_accept", "draw_decline", "abort", "claim_win"]
    },
}
TYPES = sorted(FIELDS)

whole_floats = st.integers(-3, 100).map(float)
numeric_strings = st.integers(-3, 100).map(str)
containers = st.sampled_from([[], [1], {}, {"id": 1}])
# Values of the wrong JSON type for each kind of field (null only where the field needs a value).
WRONG: dict[str, st.SearchStrategy[Any]] = {
    "id": st.one_of(st.booleans(), numeric_strings, whole_floats, st.none(), containers),
    "count": st.one_of(st.booleans(), numeric_strings, whole_floats, containers),
    "number": st.one_of(st.booleans(), numeric_strings, containers),
    "ref": st.one_of(st.booleans(), whole_floats, containers),
    "text": st.one_of(st.booleans(), st.integers(), whole_floats, containers),
    "choice": st.one_of(st.booleans(), st.integers(), containers),
    "bool": st.one_of(st.integers(0, 1), st.sampled_from(["true", "false", ""]), st.none()),
    "room": st.one_of(st.booleans(), whole_floats, st.none(), containers),
    "clock": st.one_of(
        numeric_strings,
        st.booleans(),
        st.integers(),
        st.fixed_dictionaries({"base": st.one_of(st.booleans(), numeric_strings, whole_floats)}),
        st.fixed_dictionaries(
            {"base": st.just(60), "increment": st.one_of(st.booleans(), whole_floats)}
        ),
    ),
}

keys = st.sampled_from(["type", "game", "table", "ply", "ref"]) | st.text(max_size=6)
json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=12)
    | st.sampled_from(TYPES),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(keys, inner, max_size=4),
    max_leaves=10,
)

senders = st.sampled_from(["black", "white", "third"])
# How a generated id relates to the current game's or table's: the same, a neighbour (another
# example's, or none yet), or the largest there can be.
id_offsets = st.sampled_from([0, 0, 0, 1, -1, -2, 7, MAX_ID])
move_texts = st.one_of(
    st.from_regex(r"\A[1-9][0-9]?([-x][1-9][0-9]?){1,3}\Z"),
    st.sampled_from(["11-15", "9-14", "22-18", "23-19", "11x18", "15x22"]),
    st.text(max_size=8),
)
too_big = st.integers(4097, 6000).map(lambda n: ("text", ("x" * n).encode()))
# (how the frame is sent, its bytes) for a second socket the server must close: code expected.
not_utf8 = st.sampled_from([b"\xff", b'{"type": "ping", "ref": "\xc3"}'])
CLOSING: list[tuple[st.SearchStrategy[tuple[str, bytes]], int]] = [
    (too_big, 1009),
    (st.binary(max_size=30).map(lambda b: ("binary", b)), 1003),
    (not_utf8.map(lambda b: ("text", b)), 1007),
]

# One step of a script: (action, sender, parameters); resolved against the live game when run.
actions = st.one_of(
    st.tuples(st.just("legal"), st.just("mover"), st.integers(0, 40)),
    st.tuples(st.just("legal"), st.just("mover"), st.integers(0, 40)),
    st.tuples(st.just("legal"), st.just("mover"), st.integers(0, 40)),
    st.tuples(st.just("json"), senders, json_values),
    st.tuples(st.just("text"), senders, st.text(max_size=40)),
    st.tuples(
        st.just("wrong_type"),
        senders,
        st.sampled_from([(t, f) for t in TYPES for f in FIELDS[t]]).flatmap(
            lambda tf: st.tuples(st.just(tf), WRONG[FIELDS[tf[0]][tf[1]]])
        ),
    ),
    st.tuples(st.just("valid"), senders, st.tuples(st.sampled_from(TYPES), id_offsets)),
    st.tuples(
        st.just("move"), senders, st.tuples(move_texts, st.sampled_from([0, 0, 1, -1, 2, 99]))
    ),
    st.tuples(
        st.just("close"),
        senders,
        st.sampled_from(range(len(CLOSING))).flatmap(
            lambda i: st.tuples(st.just(CLOSING[i][1]), CLOSING[i][0])
        ),
    ),
)
scripts = st.lists(actions, min_size=1, max_size=25)


@pytest.fixture
def settings(db_url: str) -> Settings:
    # Many messages per second: the rate limit has a test of its own.
    return make_settings(
        database_url=db_url, disconnect_grace_seconds=0.5, ws_messages_per_second=1000.0
    )


@dataclass
class Table:
    """One example's game, as the test follows it: the users, and the moves it saw accepted."""

    match: Match
    third: Client
    tokens: dict[str, str]
    game: Game = field(default_factory=lambda: Game("english"))
    marker: int = -(10**15)

    def client(self, who: str) -> Client:
        if who == "mover":
            who = "black" if self.game.position.turn is Color.BLACK else "white"
        return {"black": self.match.black, "white": self.match.white, "third": self.third}[who]

    def who(self, client: Client) -> str:
        return next(w for w in ("black", "white", "third") if self.client(w) is client)

    def id_of(self, kind: str, offset: int) -> int:
        base = self.match.id if kind == "game" else self.match.table["id"]
        return offset if offset == MAX_ID else max(1, base + offset)

    def message(self, kind: str, offset: int = 0) -> dict[str, Any]:
        """A well-formed message of `kind` about this table or game (or a neighbour's)."""
        message: dict[str, Any] = {"type": kind}
        names = FIELDS[kind]
        if "game" in names:
            message["game"] = self.id_of("game", offset)
        if "table" in names:
            message["table"] = self.id_of("table", offset)
        extra: dict[str, dict[str, Any]] = {
            "ping": {"t": 1.5},
            "open": {"room": "english-casual"},
            "chat": {"text": "hello"},
            "move": {"move": "11-15", "ply": self.game.ply},
        }
        return message | extra.get(kind, {})


async def exchange(client: Client, table: Table, frame: str) -> list[dict[str, Any]]:
    """What the server sends `client` after `frame`, up to the answer of a ping sent behind it."""
    table.marker -= 1
    await client.ws.send(frame)
    await client.send(type="ping", t=table.marker)
    replies = []
    while True:
        reply = await client.recv()
        if reply["type"] == "pong" and reply["t"] == table.marker:
            return replies
        replies.append(reply)


def check_replies(replies: list[dict[str, Any]], frame: str) -> str | None:
    """Every reply is documented, with at most one error; the error's code, if any."""
    assert {r.get("type") for r in replies} <= SERVER_TYPES, (frame, replies)
    codes = [r["code"] for r in replies if r["type"] == "error"]
    assert len(codes) <= 1 and set(codes) <= ERROR_CODES, (frame, replies)
    return codes[0] if codes else None


async def closes(served: Served, token: str, how: str, data: bytes, code: int) -> None:
    """A second socket of the user, sent `data`, is closed with `code`."""
    async with connect(served.url, token) as extra:
        await extra.ws.send(data, text=how == "text")
        with pytest.raises(ConnectionClosed) as closed:
            while True:
                await extra.recv()
        assert closed.value.rcvd is not None and closed.value.rcvd.code == code, (data[:40], code)


def is_message(value: Any) -> bool:
    """Whether `value` is a JSON object with a known `type` (it may still lack a field)."""
    return isinstance(value, dict) and value.get("type") in TYPES


async def step(served: Served, table: Table, action: tuple[str, str, Any]) -> None:
    """Send one generated frame and check its answer."""
    name, who, params = action
    client = table.client(who)
    expect_bad = False
    message: Any
    if name == "close":
        code, (how, data) = params
        await closes(served, table.tokens[table.who(client)], how, data, code)
        return
    if name == "legal":
        legal = table.game.legal_move_texts()
        message = table.message("move")
        if legal:
            message["move"] = legal[params % len(legal)]
    elif name == "json":
        message = params
        expect_bad = not is_message(params)
    elif name == "text":
        frame = params
        try:
            parsed = json.loads(params)
        except ValueError:
            parsed = None
        expect_bad = not is_message(parsed)
    elif name == "wrong_type":
        (kind, key), value = params
        message = table.message(kind) | {key: value}
        expect_bad = True
    elif name == "valid":
        kind, offset = params
        message = table.message(kind, offset)
    else:  # a move of this game: any text, a ply that may be stale, from anyone
        text, ply_offset = params
        message = table.message("move") | {"move": text, "ply": table.game.ply + ply_offset}
    if name != "text":
        frame = json.dumps(message)
    replies = await exchange(client, table, frame)
    code = check_replies(replies, frame)
    if expect_bad:
        assert code == "bad_message", (frame, replies)
        return
    if name == "legal" and table.game.legal_move_texts():
        assert code in (None, "game_over"), (frame, replies)
    if code is not None:
        return
    sent = json.loads(frame)
    if (
        sent.get("type") == "move"
        and sent.get("game") == table.match.id
        and client is not table.third
    ):
        table.game.play(sent["move"])  # the server took it: so does the test's copy
    if not replies and sent.get("type") not in SILENT:
        # Accepted without a direct reply: its event (move, draw offer, ending…) must follow.
        reply = await client.recv()
        check_replies([reply], frame)


async def run_script(served: Served, script: list[tuple[str, str, Any]]) -> None:
    tokens = {who: await guest_token(served.url) for who in ("black", "white", "third")}
    async with (
        connect(served.url, tokens["black"]) as black,
        connect(served.url, tokens["white"]) as white,
        connect(served.url, tokens["third"]) as third,
    ):
        table = Table(await start_game(black, white), third, tokens)
        for action in script:
            await step(served, table, action)
        await check_database(served)


async def check_database(served: Served) -> None:
    """Every game replays to what is stored, and every table's events are numbered 1..n."""
    # Read first, then ask the server: an open SQLite transaction here would hold up its writes.
    # One snapshot for every read (a SQLite transaction is one; PostgreSQL's default gives each
    # statement its own, and the server goes on writing: a first move's deadline, the sweep).
    async with served.app.state.db.session() as session:
        if session.bind.dialect.name == "postgresql":
            await session.connection(execution_options={"isolation_level": "REPEATABLE READ"})
        games = (await session.scalars(select(GameRow))).all()
        moves = (await session.scalars(select(MoveRow).order_by(MoveRow.ply))).all()
        tables = (await session.scalars(select(GameTable))).all()
        events = (await session.scalars(select(TableEvent).order_by(TableEvent.seq))).all()
    for row in games:
        texts = [(m.ply, m.move) for m in moves if m.game_id == row.id]
        assert [ply for ply, _ in texts] == list(range(1, row.ply_count + 1)), row.id
        try:
            replay = Game.replay(row.variant, [text for _, text in texts], row.start_fen)
        except RulesError as exc:
            raise AssertionError(f"game {row.id}: a stored move is not legal: {exc}") from exc
        outcome = replay.outcome()
        if outcome is not None:
            assert (row.status, row.termination) == ("finished", outcome.termination.value)
            assert row.result == outcome.result()
        elif row.status == "playing":
            assert row.result == "*" and row.termination is None
        shown = await shown_game(served, row.table_id) if row.status == "playing" else None
        if shown is not None and shown["id"] == row.id:
            assert shown["fen"] == replay.fen() and shown["ply"] == replay.ply, row.id
            if shown["status"] == "playing":
                assert shown["legal_moves"] == replay.legal_move_texts(), row.id
            else:  # ended since the read (a clock or the sweep, on a slow machine): stored so
                # (finished, or aborted: a side that has not made its first move in time)
                async with served.app.state.db.session() as session:
                    again = await session.get(GameRow, row.id)
                assert again is not None, row.id
                assert shown["status"] in ("finished", "aborted"), shown
                assert (again.status, again.ply_count) == (shown["status"], row.ply_count), shown
                assert (again.result, again.termination) == (
                    shown["result"],
                    shown["termination"],
                ), row.id
    for table in tables:
        seqs = [e.seq for e in events if e.table_id == table.id]
        assert seqs == list(range(1, table.event_seq + 1)), table.id


async def shown_game(served: Served, table_id: int | None) -> dict[str, Any] | None:
    """The game a newcomer watching the table is shown (None for a private table)."""
    if table_id is None:
        return None
    async with connect(served.url) as newcomer:
        await newcomer.send(type="watch", table=table_id)
        while True:
            reply = await newcomer.recv()
            if reply["type"] == "error":
                return None
            if reply["type"] == "table":
                game: dict[str, Any] | None = reply["game"]
                return game


async def test_generated_frames_are_answered_and_keep_the_database_consistent(
    server: Served,
) -> None:
    loop = asyncio.get_running_loop()

    def run(script: list[tuple[str, str, Any]]) -> None:
        future = asyncio.run_coroutine_threadsafe(run_script(server, script), loop)
        future.result(EXAMPLE_SECONDS)

    fuzz: Callable[[], None] = hypothesis_settings(
        max_examples=EXAMPLES,
        deadline=None,
        derandomize=True,
        database=None,
        phases=[Phase.explicit, Phase.generate],  # no shrinking: it would outlast the timeout
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )(given(scripts)(run))
    with server_log() as log:
        await asyncio.to_thread(fuzz)
    assert failures(log) == []
