"""Puzzles served in-process (docs/puzzles.md), over REST, on SQLite and PostgreSQL: the shipped
puzzles are stored at start (once, whatever the number of processes); one is served near the
player's rating and never twice; solved move by move, the server replying, right or wrong at
once; the first try moves the player's and the puzzle's Glicko-2 ratings, later tries and
guests' move nobody's; and the refusals."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import pytest
from sqlalchemy import text

from app.config import Settings
from app.db.engine import Database
from app.puzzles import service as puzzles
from app.puzzles import shipped
from app.puzzles import store as stored
from app.rules import Game
from tests.conftest import make_settings
from tests.support.inproc import served_here
from tests.support.server import Served
from tests.support.ws import guest_token, member_token


@pytest.fixture
def settings(db_url: str) -> Settings:
    return make_settings(database_url=db_url)


@pytest.fixture
async def server(settings: Settings) -> AsyncIterator[Served]:
    async with served_here(settings) as served:
        yield served


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


async def solution_of(db_url: str, puzzle_id: int) -> list[str]:
    """The solution, read from the database (the server tells it only once a try is over)."""
    db = Database(db_url)
    try:
        async with db.session() as session:
            row = await stored.get(session, puzzle_id)
            assert row is not None
            return list(row.moves)
    finally:
        await db.dispose()


def wrong_move(puzzle: dict[str, Any], solution: list[str]) -> str:
    game = Game(puzzle["variant"], puzzle["fen"])
    right = game.position.parse_move(solution[0])
    return next(m for m in puzzle["legal_moves"] if game.position.parse_move(m) != right)


async def test_the_shipped_puzzles_are_stored_at_start_once(settings: Settings) -> None:
    found = shipped()
    assert {p.variant for p in found} == {"english", "pool"}
    db = Database(settings.database_url)
    try:
        async with db.session() as session:  # (the test databases are made with them)
            await session.execute(text("DELETE FROM puzzles"))
            await session.commit()
            assert await stored.count(session) == 0
        async with served_here(settings), db.session() as session:
            assert await stored.count(session) == len(found)
        # One of them lost, and puzzles of the server's own beside them: the next start puts
        # the lost one back.
        async with db.session() as session:
            await session.execute(text("DELETE FROM puzzles WHERE id = 1"))
            own = [puzzles.row_of(p) | {"key": f"own{n}"} for n, p in enumerate(found[:3])]
            await stored.add_missing(session, own)
            await session.commit()
        async with served_here(settings), db.session() as session:
            assert await stored.count(session) == len(found) + 3
        # A second process starting (or this one again) stores nothing more.
        assert await puzzles.load(db, found) == 0
        async with db.session() as session:
            assert await stored.count(session) == len(found) + 3
    finally:
        await db.dispose()


async def test_a_puzzle_solved_move_by_move_rates_the_player_and_the_puzzle(
    server: Served, settings: Settings
) -> None:
    token = await member_token(server.url, "pia")
    async with server.http(headers=bearer(token)) as http:
        puzzle = (await http.get("/api/puzzles/next", params={"variant": "english"})).json()
        assert puzzle["solution"] is None and puzzle["legal_moves"]
        game = Game("english", puzzle["fen"])
        assert game.position.turn.value == puzzle["turn"]
        solution = await solution_of(settings.database_url, puzzle["id"])
        assert puzzle["solver_moves"] == (len(solution) + 1) // 2
        line: list[str] = []
        while True:
            line.append(solution[len(line)])
            answer = await http.post(f"/api/puzzles/{puzzle['id']}/moves", json={"moves": line})
            assert answer.status_code == 200, answer.text
            verdict = answer.json()
            assert verdict["correct"] is True
            if verdict["done"]:
                break
            # Not over: the server replies with the line's next move, and the position after.
            assert verdict["reply"] == solution[len(line)]
            line.append(verdict["reply"])
            for move in line[len(line) - 2 :]:
                game.play(move)
            assert verdict["fen"] == game.position.fen()
            assert set(verdict["legal_moves"]) == set(game.legal_move_texts())
        assert line == solution and verdict["solution"] == solution
        assert verdict["rated"] is True and verdict["rating"]["diff"] > 0
        mine = (await http.get("/api/puzzles/dashboard")).json()
        assert mine["played"] == 1 and mine["solved"] == 1
        assert mine["rating"] == verdict["rating"]["after"] > 1500
        assert mine["recent"][0]["puzzle"] == puzzle["id"] and mine["recent"][0]["solved"]
        # The puzzle lost to the player: its rating went down; it was played once.
        again = (await http.get(f"/api/puzzles/{puzzle['id']}")).json()
        assert again["rating"] < puzzle["rating"] and again["plays"] == 1
        assert again["solved_share"] == 1.0
        assert again["solution"] == solution  # tried: the solution is shown
        # Another try moves nobody's rating.
        replay = await http.post(
            f"/api/puzzles/{puzzle['id']}/moves", json={"moves": [solution[0]]}
        )
        assert replay.json()["rated"] in (False, None)
        assert (await http.get("/api/puzzles/dashboard")).json()["played"] == 1
        # The next puzzle is another one.
        for _ in range(5):
            other = (await http.get("/api/puzzles/next", params={"variant": "english"})).json()
            assert other["id"] != puzzle["id"]


async def test_a_wrong_move_ends_the_puzzle_and_shows_the_move_wanted(
    server: Served, settings: Settings
) -> None:
    token = await member_token(server.url, "quin")
    async with server.http(headers=bearer(token)) as http:
        puzzle = (await http.get("/api/puzzles/next", params={"variant": "pool"})).json()
        assert puzzle["variant"] == "pool"
        solution = await solution_of(settings.database_url, puzzle["id"])
        verdict = (
            await http.post(
                f"/api/puzzles/{puzzle['id']}/moves",
                json={"moves": [wrong_move(puzzle, solution)]},
            )
        ).json()
        assert verdict["correct"] is False and verdict["done"] is True
        assert verdict["rated"] is True and verdict["rating"]["diff"] < 0
        # Once rated, the line's move there; the solution from the puzzle, now tried.
        assert verdict["solution"] is None and verdict["correct_move"] == solution[0]
        assert (await http.get(f"/api/puzzles/{puzzle['id']}")).json()["solution"] == solution
        mine = (await http.get("/api/puzzles/dashboard")).json()
        assert (mine["played"], mine["solved"]) == (1, 0) and mine["rating"] < 1500
        # Solving it now, after the fact, rates nobody.
        late = await http.post(f"/api/puzzles/{puzzle['id']}/moves", json={"moves": solution[:1]})
        assert late.json()["correct"] is True and late.json()["rated"] in (False, None)
        assert (await http.get("/api/puzzles/dashboard")).json()["rating"] == mine["rating"]


async def test_a_guest_solves_without_a_rating(server: Served, settings: Settings) -> None:
    guest = await guest_token(server.url)
    for headers in ({}, bearer(guest)):  # a visitor, and a guest account
        async with server.http(headers=headers) as http:
            puzzle = (await http.get("/api/puzzles/next")).json()
            solution = await solution_of(settings.database_url, puzzle["id"])
            verdict = (
                await http.post(f"/api/puzzles/{puzzle['id']}/moves", json={"moves": solution[:1]})
            ).json()
            assert verdict["correct"] is True and verdict["rated"] in (False, None)
            assert (await http.get(f"/api/puzzles/{puzzle['id']}")).json()["plays"] == 0
    async with server.http() as http:
        assert (await http.get("/api/puzzles/dashboard")).status_code == 401


async def test_themes_are_counted_and_filter_the_next_puzzle(server: Served) -> None:
    async with server.http() as http:
        themes = (await http.get("/api/puzzles/themes", params={"variant": "english"})).json()
        assert themes and set(themes) <= set(puzzles.THEMES)
        theme = max(themes, key=lambda t: themes[t])
        for _ in range(3):
            found = (await http.get("/api/puzzles/next", params={"theme": theme})).json()
            assert theme in found["themes"]


async def test_bad_attempts_are_refused_and_change_nothing(
    server: Served, settings: Settings
) -> None:
    token = await member_token(server.url, "rex")
    async with server.http(headers=bearer(token)) as http:
        puzzle = (await http.get("/api/puzzles/next")).json()
        solution = await solution_of(settings.database_url, puzzle["id"])
        url = f"/api/puzzles/{puzzle['id']}/moves"
        illegal = await http.post(url, json={"moves": ["1-2"]})
        assert illegal.status_code == 409 and illegal.json()["error"] == "illegal_move"
        even = await http.post(url, json={"moves": [solution[0], "9-13"]})
        assert even.status_code == 400 and even.json()["error"] == "bad_request"
        if len(solution) >= 3:
            off_line = [wrong_move(puzzle, solution), solution[1], solution[2]]
            refused = await http.post(url, json={"moves": off_line})
            assert refused.status_code == 400, refused.text
        for body in ({}, {"moves": []}, {"moves": ["<script>"]}, {"moves": "11-15"}):
            assert (await http.post(url, json=body)).status_code == 422, body
        assert (
            await http.post("/api/puzzles/999999/moves", json={"moves": ["1-5"]})
        ).status_code == 404
        assert (await http.get("/api/puzzles/999999")).status_code == 404
        assert (await http.get("/api/puzzles/0")).status_code == 422
        assert (await http.get("/api/puzzles/next", params={"theme": "nope"})).status_code == 422
        assert (await http.get("/api/puzzles/next", params={"variant": "chess"})).status_code == 422
        # None of it was a try: the rating has not moved.
        mine = (await http.get("/api/puzzles/dashboard")).json()
        assert mine["played"] == 0 and mine["rating"] == 1500


async def test_a_first_try_sent_twice_at_once_is_rated_once(
    server: Served, settings: Settings
) -> None:
    token = await member_token(server.url, "sam")
    async with server.http(headers=bearer(token)) as http:
        puzzle = (await http.get("/api/puzzles/next")).json()
        solution = await solution_of(settings.database_url, puzzle["id"])
        body = {"moves": [wrong_move(puzzle, solution)]}
        url = f"/api/puzzles/{puzzle['id']}/moves"
        answers = await asyncio.gather(*(http.post(url, json=body) for _ in range(4)))
        assert [a.status_code for a in answers] == [200] * 4, [a.text for a in answers]
        assert sum(a.json()["rated"] is True for a in answers) == 1
        mine = (await http.get("/api/puzzles/dashboard")).json()
        assert (mine["played"], mine["solved"]) == (1, 0)
        assert (await http.get(f"/api/puzzles/{puzzle['id']}")).json()["plays"] == 1
