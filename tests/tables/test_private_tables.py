"""Private tables over `/ws`, against a real server: their snapshot, events, resumes and chat
reach only their players and the holders of the invite code, the lobby never lists them, and
the invite code is shown to the table's players only."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import pytest

from app.realtime.hub import Hub
from tests.support.server import Served
from tests.support.ws import Client, Match, connect, guest, guest_token, start_game


@dataclass
class PrivateGame:
    match: Match
    invite: str
    black_token: str

    @property
    def table(self) -> int:
        table_id: int = self.match.table["id"]
        return table_id


@pytest.fixture
async def private(server: Served) -> AsyncIterator[PrivateGame]:
    """A game at a private table between two guests: one move and one chat line in its log."""
    token = await guest_token(server.url)
    async with connect(server.url, token) as a, guest(server.url) as b:
        match = await start_private(a, b)
        invite = match.table["invite"]
        assert invite
        await match.play("11-15")
        await a.send(type="chat", table=match.table["id"], text="just us")
        await a.expect("chat")
        await b.expect("chat")
        yield PrivateGame(match, invite, token)


async def start_private(a: Client, b: Client) -> Match:
    """`a` opens a private table as Black, `b` sits down with its invite code."""
    await a.send(type="open", room="english-casual", colour="black", private=True)
    table = (await a.expect("table"))["table"]
    await b.send(type="sit", table=table["id"], invite=table["invite"])
    game = (await a.expect("game_started"))["game"]
    await b.expect("game_started")
    return Match(table, game, black=a, white=b, ply=game["ply"], turn=game["turn"])


async def replies(client: Client, **message: Any) -> list[dict[str, Any]]:
    """What the server sends after `message`, up to the answer to a ping sent behind it."""
    await client.send(**message)
    marker = -len(client.seen) - 1
    await client.send(type="ping", t=marker)
    answers = []
    while True:
        reply = await client.recv()
        if reply["type"] == "pong" and reply["t"] == marker:
            return answers
        answers.append(reply)


def follows(served: Served, client: Client, table: int) -> bool:
    """Whether the server counts `client`'s connection among the table's watchers."""
    hub: Hub = served.app.state.hub
    user_id = client.welcome["user"]["id"] if client.welcome["user"] else None
    feed = hub.feeds.get(table)
    for conn in hub.connections:
        if conn.user_id != user_id:
            continue
        if table in conn.tables or (feed is not None and conn in feed.watchers):
            return True
    return False


async def something_happens(game: PrivateGame, text: str) -> None:
    """A chat line at the table, seen by both players (so delivered to every watcher)."""
    await game.match.black.send(type="chat", table=game.table, text=text)
    await game.match.black.expect("chat", text=text)
    await game.match.white.expect("chat", text=text)


RESUMES = [
    {"since": 0, "epoch": "log"},
    {"since": 1, "epoch": "log"},
    {"since": 3, "epoch": "log"},
    {"since": 10**6, "epoch": "log"},
    {"since": 0, "epoch": "0"},
    {"since": 2, "epoch": "guessed"},
    {"since": 0},
    {},
    {"since": 0, "epoch": "log", "invite": "guessed"},
]


@pytest.mark.parametrize("resume", RESUMES)
async def test_strangers_cannot_watch_or_resume_a_private_table(
    server: Served, private: PrivateGame, resume: dict[str, Any]
) -> None:
    async with connect(server.url) as anonymous, guest(server.url) as stranger:
        for client in (anonymous, stranger):
            answers = await replies(client, type="watch", table=private.table, ref=9, **resume)
            assert [(m["type"], m.get("code"), m.get("ref")) for m in answers] == [
                ("error", "not_found", 9)
            ]
            assert answers[0]["message"] == f"no table {private.table}"
            assert not follows(server, client, private.table)
        await something_happens(private, "still just us")
        for client in (anonymous, stranger):
            assert [m["type"] for m in await replies(client, type="ping")] == ["pong"]
            assert [m["type"] for m in client.seen if m.get("table") == private.table] == []


async def test_an_invited_spectator_may_watch_and_resume(
    server: Served, private: PrivateGame
) -> None:
    async with connect(server.url) as spectator:
        await spectator.send(type="watch", table=private.table, invite=private.invite)
        snapshot = await spectator.expect("table")
        assert snapshot["game"]["moves"] == ["11-15"]
        since, epoch = snapshot["v"], snapshot["epoch"]
    await private.match.play("22-18")
    await something_happens(private, "while you were away")
    async with connect(server.url) as spectator:
        refused = await replies(
            spectator, type="watch", table=private.table, since=since, epoch=epoch
        )
        assert [m.get("code") for m in refused] == ["not_found"]
        spectator.seen.clear()
        await spectator.send(
            type="watch", table=private.table, since=since, epoch=epoch, invite=private.invite
        )
        synced = await spectator.expect("synced")
        missed = spectator.seen[:-1]
        assert [m["type"] for m in missed] == ["move", "chat"]
        assert synced["v"] == since + 2
        await something_happens(private, "welcome back")
        assert (await spectator.expect("chat"))["text"] == "welcome back"


async def test_chat_needs_a_seat_or_a_granted_watch(server: Served, private: PrivateGame) -> None:
    match = private.match
    async with guest(server.url) as stranger, guest(server.url) as c, guest(server.url) as d:
        # Never watched.
        refused = await replies(stranger, type="chat", table=private.table, text="hello?")
        assert [m.get("code") for m in refused] == ["not_found"]
        # Watch refused first.
        await replies(stranger, type="watch", table=private.table, since=0, epoch="log")
        refused = await replies(stranger, type="chat", table=private.table, text="let me in")
        assert [m.get("code") for m in refused] == ["not_found"]
        # A public table it does not watch.
        await c.send(type="open", room="english-casual")
        public = (await c.expect("table"))["table"]["id"]
        refused = await replies(stranger, type="chat", table=public, text="hi there")
        assert [m.get("code") for m in refused] == ["not_found"]
        assert await replies(d, type="watch", table=public)  # the snapshot
        assert [m["type"] for m in await replies(d, type="chat", table=public, text="hi")] == [
            "chat"
        ]
        # Nothing reached the players of either table.
        for player in (match.black, match.white, c):
            said = [m for m in await replies(player, type="ping") if m["type"] == "chat"]
            assert [m["text"] for m in said] == (["hi"] if player is c else [])


async def test_a_player_chats_from_a_socket_that_does_not_watch(
    server: Served, private: PrivateGame
) -> None:
    """A seat is enough: a player's second tab need not watch the table to speak there."""
    async with connect(server.url, private.black_token) as second_tab:
        said = await replies(second_tab, type="chat", table=private.table, text="from my phone")
        assert said == []  # it does not watch, so it is not sent the line
        assert (await private.match.white.expect("chat"))["text"] == "from my phone"


async def test_a_refused_watch_ends_the_watch_granted_before(
    server: Served, private: PrivateGame
) -> None:
    async with guest(server.url) as spectator:
        await spectator.send(type="watch", table=private.table, invite=private.invite)
        await spectator.expect("table")
        said = await replies(spectator, type="chat", table=private.table, text="hi")
        assert [m["type"] for m in said] == ["chat"]
        refused = await replies(spectator, type="watch", table=private.table, invite="guessed")
        assert [m.get("code") for m in refused] == ["not_found"]
        assert not follows(server, spectator, private.table)
        refused = await replies(spectator, type="chat", table=private.table, text="still here")
        assert [m.get("code") for m in refused] == ["not_found"]
        await something_happens(private, "gone?")
        assert [m["type"] for m in await replies(spectator, type="ping")] == ["pong"]


async def test_the_lobby_never_shows_a_private_table_nor_anyone_its_invite(
    server: Served,
) -> None:
    async with (
        guest(server.url) as a,
        guest(server.url) as b,
        connect(server.url) as lobby,
        connect(server.url) as spectator,
    ):
        await lobby.send(type="subscribe_lobby")
        await lobby.expect("lobby")
        match = await start_private(a, b)
        table, invite = match.table["id"], match.table["invite"]
        await b.send(type="watch", table=table)
        seated = await b.expect("table")
        assert seated["table"]["invite"] == invite  # the second player holds it too
        await spectator.send(type="watch", table=table, invite=invite)
        assert (await spectator.expect("table"))["table"]["invite"] is None
        await match.play("11-15")
        await a.send(type="resign", game=match.id)
        await spectator.expect("game_ended")
        await a.send(type="leave", table=table)
        await spectator.expect("table_update", table=table)
        # A public table opened last: the lobby hears of it after anything said before.
        await a.send(type="open", room="english-casual")
        public = (await a.expect("table"))["table"]["id"]
        await lobby_table_of(lobby, public)
        await lobby.send(type="subscribe_lobby")
        rooms = (await lobby.expect("lobby"))["rooms"]
        async with server.http() as http:
            listed = (await http.get("/api/rooms")).json()
        welcome = spectator.welcome
    for room in (*rooms, *listed):
        assert table not in [t["id"] for t in room["tables"]]
    assert all(
        m.get("table") not in (table, {"id": table})
        and not (isinstance(m.get("table"), dict) and m["table"].get("id") == table)
        for m in lobby.seen
    )
    assert invite not in json.dumps(lobby.seen) + json.dumps(spectator.seen) + json.dumps(welcome)
    table_events = [m for m in b.seen if m["type"] == "table_update"]
    assert table_events and all(m["state"]["invite"] is None for m in table_events)


async def lobby_table_of(lobby: Client, table: int) -> dict[str, Any]:
    while True:
        message = await lobby.expect("lobby_table")
        if message["table"]["id"] == table:
            state: dict[str, Any] = message["table"]
            return state


async def test_a_game_played_at_a_private_table_is_left_out_of_the_public_archive(
    server: Served, private: PrivateGame
) -> None:
    """The game carries its table's privacy from its start: the search, the player's page and
    the export leave it out for anyone else, while its players list it."""
    game_id = private.match.game["id"]
    black = private.match.black.welcome["user"]["name"]
    async with server.http() as http:
        mine = {"Authorization": f"Bearer {private.black_token}"}
        for path in ("/api/games", f"/api/players/{black}/games"):
            public = (await http.get(path, params={"status": "playing"})).json()
            assert game_id not in [g["id"] for g in public["data"]], path
            assert public["count"] == 0, path
            own = (await http.get(path, params={"status": "playing"}, headers=mine)).json()
            assert game_id in [g["id"] for g in own["data"]], path
        export = await http.get("/api/games/export", headers={"Accept": "application/x-ndjson"})
        assert export.status_code == 200 and str(game_id) not in export.text
        assert (await http.get(f"/api/games/{game_id}")).status_code == 404


GAME_ACTIONS = ["move", "resign", "draw_offer", "draw_accept", "draw_decline", "abort", "claim_win"]
TABLE_ACTIONS = ["leave", "rematch"]


def action(kind: str, target: int) -> dict[str, Any]:
    if kind in TABLE_ACTIONS:
        return {"type": kind, "table": target}
    extra = {"move": "22-18", "ply": 1} if kind == "move" else {}
    return {"type": kind, "game": target, **extra}


def answer(answers: list[dict[str, Any]], target: int) -> tuple[str, str]:
    """The one error among `answers`, its message with the id written as N."""
    assert len(answers) == 1 and answers[0]["type"] == "error", answers
    return answers[0]["code"], answers[0]["message"].replace(str(target), "N")


@pytest.mark.parametrize("kind", GAME_ACTIONS + TABLE_ACTIONS)
async def test_a_stranger_s_action_on_a_private_game_is_answered_as_for_none(
    server: Served, private: PrivateGame, kind: str
) -> None:
    """Nobody confirms a private game's or table's id by acting on it: a stranger (or an
    invited spectator, who holds no seat) gets the answer, word for word, of an id that does
    not exist. A public game one does not play may say so (`not_a_player`): it is listed."""
    own = private.table if kind in TABLE_ACTIONS else private.match.id
    missing = own + 1000
    async with guest(server.url) as stranger, guest(server.url) as c, guest(server.url) as d:
        shown = answer(await replies(stranger, **action(kind, own)), own)
        assert shown == answer(await replies(stranger, **action(kind, missing)), missing)
        assert shown[0] == "not_found"
        await stranger.send(type="watch", table=private.table, invite=private.invite)
        await stranger.expect("table")
        assert answer(await replies(stranger, **action(kind, own)), own) == shown
        public = await start_game(c, d)
        target = public.table["id"] if kind in TABLE_ACTIONS else public.id
        assert answer(await replies(stranger, **action(kind, target)), target)[0] == (
            "not_a_player"
        )
    # The game went on untouched.
    await private.match.play("22-18")
