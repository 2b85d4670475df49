"""Game analysis served in-process (docs/analysis.md), over REST, on SQLite and PostgreSQL: a
finished game asked for by its player is queued, made by the server's analysis process and
served to everyone; its labels; asking again; the refusals (no token, a game in progress, a
private game of others, one at a time, the day's limit); and a lease run out takes an
analysis up again."""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncIterator
from datetime import timedelta
from typing import Any

import httpx
import pytest

from app.analysis import store as stored
from app.config import Settings
from app.db.engine import Database
from app.rules.pdn import read_games
from tests.conftest import make_settings
from tests.support.inproc import served_here
from tests.support.server import Served
from tests.support.ws import Client, connect, member_token, start_game
from tests.tables.test_private_tables import start_private

WAIT_SECONDS = 60.0
NODES = 2_000  # a few milliseconds a position: the test is about the service, not the search


@pytest.fixture
def settings(db_url: str) -> Settings:
    # The analysis processes in the idle class, as served (checked below).
    return make_settings(
        database_url=db_url, analysis_nodes=NODES, analyses_per_day=3, analysis_idle=True
    )


@pytest.fixture
async def server(settings: Settings) -> AsyncIterator[Served]:
    async with served_here(settings) as served:
        yield served


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


async def finished_game(a: Client, b: Client, *moves: str, private: bool = False) -> int:
    """A game between `a` (Black) and `b` (at a private table if asked), `moves` played, then
    resigned by the side to move."""
    match = await (start_private(a, b) if private else start_game(a, b))
    await match.play(*moves)
    await match.mover().send(type="resign", game=match.id)
    await a.expect("game_ended", game=match.id)
    return match.id


async def until_done(http: httpx.AsyncClient, game_id: int) -> dict[str, Any]:
    give_up = asyncio.get_running_loop().time() + WAIT_SECONDS
    while True:
        shown = (await http.get(f"/api/games/{game_id}/analysis")).json()
        if shown["status"] in ("done", "failed"):
            return shown
        assert asyncio.get_running_loop().time() < give_up, shown
        await asyncio.sleep(0.2)


async def test_a_game_is_analysed_once_and_shown_to_everyone(server: Served) -> None:
    ann, ben = [await member_token(server.url, name) for name in ("ann", "ben")]
    async with connect(server.url, ann) as a, connect(server.url, ben) as b:
        game = await finished_game(a, b, "11-15", "23-19", "8-11", "22-17", "12-16", "19x12")
    async with server.http() as http:
        assert (await http.get(f"/api/games/{game}/analysis")).status_code == 404  # not asked
        asked = await http.post(f"/api/games/{game}/analysis", headers=bearer(ann))
        assert asked.status_code == 202, asked.text
        queued = asked.json()
        assert queued["status"] in ("queued", "running") and queued["progress"]["total"] == 7
        done = await until_done(http, game)  # read without a token: a public game
        assert done["status"] == "done" and done["nodes"] == NODES
        plies = done["plies"]
        assert [p["move"] for p in plies] == ["11-15", "23-19", "8-11", "22-17", "12-16", "19x12"]
        assert plies[4]["label"] == "blunder" and plies[4]["best"] != "12-16"
        assert plies[4]["eval"]["cp"] < 0 and plies[4]["eval"]["text"].startswith("-")
        assert all(sum(p["wdl"]) == 1000 for p in plies)
        assert 0 <= done["accuracy"]["black"] < done["accuracy"]["white"] <= 100
        # It ran in a process of the idle scheduling class: live play never waits for it.
        pool = server.app.state.analyses.pool
        pids = list(pool._processes)  # noqa: SLF001  (the executor's own processes)
        assert pids and all(os.sched_getscheduler(pid) == os.SCHED_IDLE for pid in pids)
        # The PDN export carries it on request, and reads back as the same game.
        plain = (await http.get(f"/api/games/{game}.pdn")).text
        annotated = (await http.get(f"/api/games/{game}.pdn", params={"evals": "true"})).text
        assert "[%eval" not in plain
        assert (
            f"12-16 {{[%eval {plies[4]['eval']['text']}] Blunder. {plies[4]['best']} was best.}}"
            in annotated.replace("\n", " ")
        )
        (record,) = read_games(annotated)
        assert record.moves == [p["move"] for p in plies] and record.error is None
        # Asked again, by anyone: shown as it is, not made again.
        again = await http.post(f"/api/games/{game}/analysis", headers=bearer(ben))
        assert again.status_code == 200 and again.json()["plies"] == plies


async def test_what_cannot_be_analysed_or_is_asked_too_often_is_refused(server: Served) -> None:
    cy, di = [await member_token(server.url, name) for name in ("cyd", "dia")]
    eve = await member_token(server.url, "eve")
    async with connect(server.url, cy) as c, connect(server.url, di) as d:
        games = [await finished_game(c, d, "11-15", "23-19") for _ in range(4)]
        private = await finished_game(c, d, "11-15", private=True)
        playing = await start_game(c, d)
    async with server.http() as http:
        path = f"/api/games/{games[0]}/analysis"
        assert (await http.post(path)).status_code == 401
        in_progress = await http.post(f"/api/games/{playing.id}/analysis", headers=bearer(cy))
        assert (in_progress.status_code, in_progress.json()["error"]) == (409, "conflict")
        others = await http.post(f"/api/games/{private}/analysis", headers=bearer(eve))
        assert (others.status_code, others.json()["error"]) == (404, "not_found")
        assert (await http.get(f"/api/games/{private}/analysis")).status_code == 404
        missing = await http.post("/api/games/999999/analysis", headers=bearer(cy))
        assert missing.status_code == 404
        # One at a time: a second while the first waits is refused, then taken once it is done.
        assert (await http.post(path, headers=bearer(cy))).status_code == 202
        second = f"/api/games/{games[1]}/analysis"
        busy = await http.post(second, headers=bearer(cy))
        if busy.status_code != 200:  # not done already
            assert (busy.status_code, busy.json()["error"]) == (429, "rate_limited")
        await until_done(http, games[0])
        for game in games[1:3]:
            assert (
                await http.post(f"/api/games/{game}/analysis", headers=bearer(cy))
            ).status_code == 202
            await until_done(http, game)
        # Three a day (this server's setting): the fourth waits for tomorrow.
        spent = await http.post(f"/api/games/{games[3]}/analysis", headers=bearer(cy))
        assert (spent.status_code, spent.json()["error"]) == (429, "rate_limited")
        assert int(spent.headers["Retry-After"]) > 0
        # The private game's players may have theirs.
        mine = await http.post(f"/api/games/{private}/analysis", headers=bearer(di))
        assert mine.status_code == 202


async def test_an_analysis_whose_process_died_is_taken_up_again(settings: Settings) -> None:
    """A worker's lease that ran out (its process died) lets another worker claim it."""
    db = Database(settings.database_url)
    try:
        async with served_here(settings.model_copy(update={"analysis_workers": 0})) as server:
            fay, gus = [await member_token(server.url, name) for name in ("fay", "gus")]
            async with connect(server.url, fay) as f, connect(server.url, gus) as g:
                game = await finished_game(f, g, "11-15", "23-19", "8-11")
            async with server.http() as http:
                asked = await http.post(f"/api/games/{game}/analysis", headers=bearer(fay))
                assert asked.status_code == 202
            now = server.clock.now()
            async with db.session() as session:
                claimed = await stored.claim(session, "dead-process", now, timedelta(seconds=60))
                assert claimed is not None and claimed[0].game_id == game
                await session.commit()
            async with db.session() as session:  # its lease holds: nobody else takes it
                assert await stored.claim(session, "other", now, timedelta(seconds=60)) is None
            later = now + timedelta(seconds=61)
            async with db.session() as session:
                taken = await stored.claim(session, "other", later, timedelta(seconds=60))
                assert taken is not None and taken[0].worker == "other"
                await session.commit()
            async with db.session() as session:  # the dead worker's word counts no more
                assert not await stored.progress(session, game, "dead-process", 3, later)
    finally:
        await db.dispose()


async def test_the_analysis_board_plays_any_position_and_deepens_its_line(server: Served) -> None:
    async with server.http() as http:
        start = (await http.get("/api/analysis/position")).json()
        assert (start["variant"], start["turn"], start["moves"]) == ("english", "black", [])
        assert "11-15" in start["legal_moves"] and start["line"] is None
        played = await http.get(
            "/api/analysis/position", params={"moves": "11-15,23-19,8-11,22-17,12-16"}
        )
        shown = played.json()
        assert shown["turn"] == "white" and "19x12" in shown["legal_moves"]  # capture required
        assert shown["legal_moves"] == ["19x12"]
        lines = []
        for depth in (1, 2, 4):
            answer = await http.get(
                "/api/analysis/position",
                params={"moves": "11-15,23-19,8-11,22-17,12-16", "depth": depth},
            )
            assert answer.status_code == 200, answer.text
            lines.append(answer.json()["line"])
        assert all(line["best"] == "19x12" and line["pv"][0] == "19x12" for line in lines)
        assert lines[-1]["eval"]["cp"] < -50  # White (to move) wins a man: Black is worse
        # A set-up position of pool, and one where the game is over: no search.
        pool = await http.get(
            "/api/analysis/position", params={"variant": "pool", "fen": "W:WK10:B1,K30"}
        )
        assert pool.status_code == 200 and pool.json()["variant"] == "pool"
        over = (
            await http.get(
                "/api/analysis/position", params={"fen": "B:W9:B5", "moves": "5x14", "depth": 3}
            )
        ).json()
        assert (over["result"], over["legal_moves"], over["line"]) == ("1-0", [], None)
        # One search at a time per address: one asked for while this address's last is still
        # being searched (as the server notes it) is refused; a position alone is not.
        searching = server.app.state.board.searching
        searching.add("127.0.0.1")
        try:
            busy = await http.get("/api/analysis/position", params={"depth": 2})
            assert (busy.status_code, busy.json()["error"]) == (429, "rate_limited")
            assert (await http.get("/api/analysis/position")).status_code == 200
        finally:
            searching.discard("127.0.0.1")
        assert (await http.get("/api/analysis/position", params={"depth": 2})).status_code == 200
        for bad in (
            {"moves": "11-15,11-15"},
            {"fen": "X:nonsense"},
            {"moves": "a-b"},
            {"depth": 99},
            {"variant": "chess"},
        ):
            refused = await http.get("/api/analysis/position", params=bad)
            assert refused.status_code in (400, 422), (bad, refused.text)
            assert refused.json()["error"] == "bad_request"
