"""Playing the computer over /ws: a game played to its end, the AI's moves stored and replayed
legally, its draw answers and resignations, rematches, and bad `play_ai` requests."""

from __future__ import annotations

import random
from typing import Any

import pytest

from app.computer import search as ai_search
from app.computer import service as ai
from app.config import Settings
from app.rules import Game, get_variant
from tests.support.inproc import served_here
from tests.support.server import Served
from tests.support.ws import Client, guest, start_game


async def start_ai_game(client: Client, **options: Any) -> dict[str, Any]:
    """Send `play_ai`; the table's snapshot (with its game) once the game has started."""
    await client.send(type="play_ai", **options)
    snapshot = await client.expect("table")
    assert snapshot["game"] is not None
    return snapshot


async def first_move(client: Client, snapshot: dict[str, Any]) -> dict[str, Any]:
    """The game after the computer's first move (as Black): a weak level answers within
    milliseconds, so its move may be in the snapshot already, else it comes as a `move`."""
    game: dict[str, Any] = snapshot["game"]
    if game["ply"] == 0:
        moved = await client.expect("move", game=game["id"], ply=1)
        return {"ply": moved["ply"], "turn": moved["turn"], "move": moved["move"]}
    return {"ply": game["ply"], "turn": game["turn"], "move": game["moves"][0]}


async def play_until_the_end(
    client: Client, game: dict[str, Any], colour: str, rng: random.Random
) -> dict[str, Any]:
    """Play random legal moves for `colour` until the game ends; its `game_ended` event."""
    state = {"ply": game["ply"], "turn": game["turn"], "legal": game["legal_moves"]}
    while True:
        if state["turn"] == colour and state["legal"]:
            await client.send(
                type="move", game=game["id"], move=rng.choice(state["legal"]), ply=state["ply"]
            )
        while True:
            event = await client.recv()
            if event["type"] == "game_ended":
                return event
            if event["type"] == "error":
                raise AssertionError(event)
            if event["type"] == "move" and event["ply"] > state["ply"]:
                state = {"ply": event["ply"], "turn": event["turn"], "legal": event["legal_moves"]}
                break


async def test_a_game_against_the_computer_is_played_to_the_end(server: Served) -> None:
    async with guest(server.url) as human:
        snapshot = await start_ai_game(human, level=1, variant="english", colour="black")
        game = snapshot["game"]
        assert game["white"]["name"] == "AI level 1"
        assert game["black"]["id"] == human.user_id
        assert snapshot["table"]["rated"] is False
        ended = await play_until_the_end(human, game, "black", random.Random(7))
    assert ended["result"] in ("1-0", "0-1", "1/2-1/2")
    async with server.http() as rest:
        stored = (await rest.get(f"/api/games/{game['id']}")).json()
        found = (await rest.get("/api/games", params={"player": "AI level 1"})).json()
        against_ai = (await rest.get("/api/games", params={"ai": "true"})).json()
        not_against_ai = (await rest.get("/api/games", params={"ai": "false"})).json()
        bad = await rest.get("/api/games", params={"ai": "yes"})
    # The AI's moves went through the rules: the stored game replays legally to its result.
    replayed = Game.replay(get_variant("english"), [m["move"] for m in stored["moves"]])
    assert replayed.ply == len(stored["moves"]) == ended_ply(human)
    assert stored["white"] == "AI level 1" and stored["rated"] is False
    assert game["id"] in [g["id"] for g in found["data"]]
    assert [g["id"] for g in against_ai["data"]] == [game["id"]]
    assert game["id"] not in [g["id"] for g in not_against_ai["data"]]
    assert bad.status_code == 422


async def test_the_search_processes_start_with_the_first_strong_game_against_the_computer(
    server: Served,
) -> None:
    """A server whose players play each other never starts the computer's processes, nor do
    the weak levels (their searches run in the server's thread); the first game at a strong
    level does, and its first move comes from them."""
    computer = server.app.state.ai
    async with guest(server.url) as a, guest(server.url) as b:
        match = await start_game(a, b, clock=None)
        await match.play("11-15", "23-19")
    assert computer.pool is None
    async with guest(server.url) as human:
        snapshot = await start_ai_game(human, level=4, variant="english", colour="white")
        moved = await first_move(human, snapshot)
        assert moved["ply"] == 1 and moved["turn"] == "white"  # the computer, Black, moved
        assert computer.pool is None
        snapshot = await start_ai_game(human, level=5, variant="english", colour="white")
        moved = await first_move(human, snapshot)
    assert moved["ply"] == 1 and moved["turn"] == "white"
    assert computer.pool is not None


async def test_a_server_may_start_the_search_processes_with_itself(settings: Settings) -> None:
    """AI_WORKERS_AT_START (for production, where the first game should not wait for them)."""
    async with served_here(settings.model_copy(update={"ai_workers_at_start": True})) as served:
        assert served.app.state.ai.pool is not None


def ended_ply(client: Client) -> int:
    return max(m["ply"] for m in client.seen if m["type"] == "move")


async def test_the_computer_plays_black_and_moves_first(server: Served) -> None:
    async with guest(server.url) as human:
        snapshot = await start_ai_game(human, level=2, variant="pool", colour="white")
        game = snapshot["game"]
        assert game["black"]["name"] == "AI level 2" and game["variant"] == "pool"
        first = await first_move(human, snapshot)
        assert first["turn"] == "white"
        assert first["move"] in Game(get_variant("pool")).legal_move_texts()


async def test_the_computer_always_accepts_a_rematch(server: Served) -> None:
    async with guest(server.url) as human:
        snapshot = await start_ai_game(human, level=1, colour="black")
        game = snapshot["game"]
        await human.send(type="resign", game=game["id"])
        await human.expect("game_ended", game=game["id"])
        await human.send(type="rematch", table=snapshot["table"]["id"])
        started = await human.expect("game_started")
        # Colours swap: the AI is Black now and makes its first move.
        assert started["game"]["black"]["name"] == "AI level 1"
        await human.expect("move", game=started["game"]["id"], ply=1)


@pytest.mark.parametrize(
    ("message", "words"),
    [
        ({"level": 0}, "level"),
        ({"level": 9}, "level"),
        ({"level": "3"}, "level"),
        ({}, "level"),
        ({"level": 3, "colour": "green"}, "colour"),
        ({"level": 3, "variant": "chess"}, "variant"),
        ({"level": 3, "clock": {"base": 0, "increment": 0}}, "clock"),
        ({"level": 3, "start_fen": "W:W99:B1"}, "fen"),
        ({"level": 3, "room": "no-such-room"}, "room"),
    ],
)
async def test_bad_play_ai_requests_get_a_clear_error(
    server: Served, message: dict[str, Any], words: str
) -> None:
    async with guest(server.url) as human:
        await human.send(type="play_ai", ref="r1", **message)
        error = await human.error()
    assert error["ref"] == "r1"
    assert error["code"] in ("bad_message", "invalid_fen", "not_found")
    assert words in error["message"].lower()


async def test_play_ai_needs_a_user(server: Served) -> None:
    from tests.support.ws import connect

    async with connect(server.url) as anonymous:
        await anonymous.send(type="play_ai", level=1)
        error = await anonymous.error()
    assert error["code"] == "unauthorized"


async def test_a_game_against_the_computer_over_rest(server: Served) -> None:
    async with server.http() as rest:
        token = (await rest.post("/api/auth/guest")).json()["access_token"]
        headers = {"Authorization": f"Bearer {token}"}
        made = await rest.post(
            "/api/ai/games", json={"level": 4, "colour": "white", "clock": None}, headers=headers
        )
        assert made.status_code == 201, made.text
        table = made.json()
        assert [p["name"] for p in table["players"]][1:] == ["AI level 4"] or any(
            p["name"] == "AI level 4" for p in table["players"]
        )
        bad = await rest.post("/api/ai/games", json={"level": 12}, headers=headers)
        assert bad.status_code == 422 and "level" in bad.json()["message"]
        extra = await rest.post("/api/ai/games", json={"level": 2, "x": 1}, headers=headers)
        assert extra.status_code == 422
        anonymous = await rest.post("/api/ai/games", json={"level": 2})
        assert anonymous.status_code == 401


async def offer_and_answer(human: Client, game: dict[str, Any]) -> dict[str, Any]:
    """Offer a draw on the human's turn; the AI's answer (`draw_declined` or `game_ended`)."""
    await human.send(type="draw_offer", game=game["id"])
    await human.expect("draw_offered", game=game["id"])
    while True:
        event = await human.recv()
        if event["type"] in ("draw_declined", "game_ended"):
            return event


async def test_the_computer_declines_a_draw_before_move_40(server: Served) -> None:
    async with guest(server.url) as human:
        # Level ground (a king each), but only the game's first move.
        snapshot = await start_ai_game(human, level=5, colour="black", start_fen="B:WK32:BK1")
        answer = await offer_and_answer(human, snapshot["game"])
    assert answer["type"] == "draw_declined" and answer["by"] == "white"


async def test_the_computer_accepts_a_draw_when_level_late_in_a_game(
    server: Served, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(ai_search, "DRAW_FROM_PLY", 0)  # as if move 40 were past
    async with guest(server.url) as human:
        snapshot = await start_ai_game(human, level=5, colour="black", start_fen="B:WK32:BK1")
        answer = await offer_and_answer(human, snapshot["game"])
    assert answer["type"] == "game_ended"
    assert (answer["result"], answer["termination"]) == ("1/2-1/2", "agreement")


async def test_the_computer_declines_a_draw_when_it_is_winning(
    server: Served, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(ai_search, "DRAW_FROM_PLY", 0)
    async with guest(server.url) as human:
        # The AI (White) has three kings against a lone man.
        snapshot = await start_ai_game(
            human, level=5, colour="black", start_fen="B:WK18,K22,K27:B1"
        )
        answer = await offer_and_answer(human, snapshot["game"])
    assert answer["type"] == "draw_declined"


# White (the AI) has four men at home against twelve kings.
HOPELESS = "B:W29,30,31,32:BK1,K2,K3,K4,K5,K6,K7,K8,K9,K10,K11,K12"


async def play_moves(client: Client, game: dict[str, Any], count: int, rng: random.Random) -> Any:
    """Play up to `count` random moves as Black; the `game_ended` event if the game ended."""
    state = {"ply": game["ply"], "turn": game["turn"], "legal": game["legal_moves"]}
    played = 0
    while True:
        if state["turn"] == "black" and state["legal"]:
            if played == count:
                return None
            await client.send(
                type="move", game=game["id"], move=rng.choice(state["legal"]), ply=state["ply"]
            )
            played += 1
        while True:
            event = await client.recv()
            if event["type"] == "game_ended":
                return event
            if event["type"] == "move" and event["ply"] > state["ply"]:
                state = {"ply": event["ply"], "turn": event["turn"], "legal": event["legal_moves"]}
                break


async def test_the_top_levels_resign_a_hopeless_position(server: Served) -> None:
    async with guest(server.url) as human:
        snapshot = await start_ai_game(human, level=6, colour="black", start_fen=HOPELESS)
        ended = await play_moves(human, snapshot["game"], 10, random.Random(3))
    assert ended is not None
    assert (ended["result"], ended["termination"]) == ("1-0", "resignation")
    # It played on for a while first: it resigns after RESIGN_AFTER hopeless searches.
    moves = [m for m in human.seen if m["type"] == "move"]
    assert len(moves) >= 2 * ai.RESIGN_AFTER - 1


async def test_the_lower_levels_never_resign(server: Served) -> None:
    async with guest(server.url) as human:
        snapshot = await start_ai_game(human, level=5, colour="black", start_fen=HOPELESS)
        ended = await play_moves(human, snapshot["game"], 2 * ai.RESIGN_AFTER, random.Random(3))
    assert ended is None or ended["termination"] != "resignation"


def test_the_thinking_time_follows_the_level_and_the_clock() -> None:
    assert ai_search.movetime_ms(1, None) == 50
    assert ai_search.movetime_ms(8, None) == 1000
    assert ai_search.movetime_ms(8, 60_000) == 1000
    assert ai_search.movetime_ms(8, 4_000) == 200  # a twentieth of what is left
    assert ai_search.movetime_ms(8, 0) == ai_search.MIN_MOVETIME_MS


def test_the_draw_rule() -> None:
    assert not ai_search.accepts_draw(79, -300)
    assert ai_search.accepts_draw(80, 0) and ai_search.accepts_draw(80, -300)
    assert not ai_search.accepts_draw(120, 100)
    # A search that finished no depth in its time (a starved machine) knows nothing: declined.
    assert not ai_search.accepts_draw(120, None)


async def test_the_computer_cannot_log_in_and_its_names_cannot_be_taken(server: Served) -> None:
    async with server.http() as rest:
        login = await rest.post(
            "/api/auth/login", json={"name": "AI level 6", "password": "whatever-it-is"}
        )
        assert login.status_code in (401, 422)
        for name in ("AI_level_6", "ai-level", "computer"):
            taken = await rest.post(
                "/api/auth/register", json={"name": name, "password": "a-long-passphrase"}
            )
            assert taken.status_code == 422 and "reserved" in taken.json()["message"], name
