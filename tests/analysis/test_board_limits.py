"""The analysis board under load (issue 45): what one client address and everyone may have in
progress is bounded, and a request beyond a bound is refused at once with 429 and Retry-After
while those in progress are answered later; positions are replayed outside the server's
process (but for short lines, cheaper than the request itself), so the event loop goes on serving
others whatever the lines replayed."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import httpx
import pytest

from app.analysis import board as analysis_board
from app.config import Settings
from app.rules import Game
from tests.conftest import make_settings
from tests.support.server import Served

ANSWER_SECONDS = 10.0  # a refusal comes at once; this only keeps a failing test from hanging
POSITION = "/api/analysis/position"


@pytest.fixture
def settings(db_url: str) -> Settings:
    return make_settings(
        database_url=db_url,
        board_requests_per_address=2,
        board_replays_queued=3,
        board_searches_queued=2,
    )


def long_line(plies: int) -> list[str]:
    """A legal line from the start: the first legal move each time."""
    game = Game("english")
    while game.ply < plies and game.outcome() is None:
        game.play(game.legal_move_texts()[0])
    return [str(move) for move in game.moves]


@pytest.fixture
def held() -> Iterator[threading.Event]:
    """A gate that holds the work queued behind it until set (set at the end in any case)."""
    gate = threading.Event()
    yield gate
    gate.set()


def holding(gate: threading.Event) -> ThreadPoolExecutor:
    """An executor of one thread busy until `gate` is set: what is sent to it waits."""
    executor = ThreadPoolExecutor(1)
    executor.submit(gate.wait)
    return executor


async def until(condition: Any) -> None:
    for _ in range(int(ANSWER_SECONDS / 0.01)):
        if condition():
            return
        await asyncio.sleep(0.01)
    raise AssertionError("never came to pass")


def refused_at_once(answer: httpx.Response) -> None:
    assert (answer.status_code, answer.json()["error"]) == (429, "rate_limited"), answer.text
    assert answer.headers["Retry-After"] == "1"


async def test_requests_beyond_the_bounds_are_refused_at_once(
    server: Served, held: threading.Event
) -> None:
    board = server.app.state.board
    board.pool = holding(held)  # the board's replays wait until the gate opens
    line = ",".join(long_line(60))
    long = {"moves": line}
    async with (
        server.http("127.0.0.2") as a,
        server.http("127.0.0.3") as b,
        server.http("127.0.0.4") as c,
    ):
        waiting = [asyncio.create_task(a.get(POSITION, params=long)) for _ in "ab"]
        await until(lambda: board.asking["127.0.0.2"] == 2)
        # A third from the same address is refused at once, even a short one; another
        # address gets in, up to the replays the server takes in at once; beyond them, no one.
        refused_at_once(await asyncio.wait_for(a.get(POSITION), ANSWER_SECONDS))
        waiting.append(asyncio.create_task(b.get(POSITION, params=long)))
        await until(lambda: board.replays == 3)
        refused_at_once(await asyncio.wait_for(c.get(POSITION, params=long), ANSWER_SECONDS))
        # Meanwhile the server answers everything else at once, a short line of the board too.
        assert (await asyncio.wait_for(c.get("/healthz"), ANSWER_SECONDS)).status_code == 200
        short = await asyncio.wait_for(c.get(POSITION, params={"moves": "11-15"}), ANSWER_SECONDS)
        assert short.status_code == 200
        held.set()
        answers = await asyncio.gather(*waiting)
        assert [r.status_code for r in answers] == [200, 200, 200]
        assert len({r.json()["fen"] for r in answers}) == 1
        assert board.asking == {} and board.replays == 0
        assert (await c.get(POSITION, params=long)).status_code == 200  # room again


async def test_searches_beyond_the_bounds_are_refused_at_once(
    server: Served, held: threading.Event
) -> None:
    board = server.app.state.board
    server.app.state.analyses.pool = holding(held)  # searches wait until the gate opens
    params: dict[str, str | int] = {"moves": "11-15,23-19", "depth": 2}
    async with (
        server.http("127.0.0.2") as a,
        server.http("127.0.0.3") as b,
        server.http("127.0.0.4") as c,
    ):
        waiting = [asyncio.create_task(a.get(POSITION, params=params))]
        await until(lambda: board.searching == {"127.0.0.2"})
        # One search at a time per address; a position alone still comes from it.
        refused_at_once(await asyncio.wait_for(a.get(POSITION, params=params), ANSWER_SECONDS))
        assert (await asyncio.wait_for(a.get(POSITION), ANSWER_SECONDS)).status_code == 200
        waiting.append(asyncio.create_task(b.get(POSITION, params=params)))
        await until(lambda: len(board.searching) == 2)
        # The searches the server queues in all are taken: a third address waits its turn.
        refused_at_once(await asyncio.wait_for(c.get(POSITION, params=params), ANSWER_SECONDS))
        held.set()
        answers = await asyncio.gather(*waiting)
        assert [r.status_code for r in answers] == [200, 200], [r.text for r in answers]
        assert all(r.json()["line"]["depth"] >= 1 for r in answers)
        assert board.searching == set() and board.asking == {}


async def test_a_search_is_waited_for_a_bounded_time(
    server: Served, held: threading.Event, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(analysis_board, "SEARCH_WAIT_S", 0.2)  # 30 s as served
    board = server.app.state.board
    server.app.state.analyses.pool = holding(held)  # the engine never gets to it
    async with server.http("127.0.0.2") as a:
        given_up = await asyncio.wait_for(a.get(POSITION, params={"depth": 2}), ANSWER_SECONDS)
        refused_at_once(given_up)  # (once its wait is over)
        assert board.searching == set() and board.asking == {}


async def test_replays_are_made_outside_the_server_process(
    server: Served, monkeypatch: pytest.MonkeyPatch
) -> None:
    made_here: list[int] = []  # the threads of this process that replayed a line
    replay = analysis_board.board_position

    def spied(*args: Any) -> Any:
        made_here.append(threading.get_ident())
        return replay(*args)

    monkeypatch.setattr(analysis_board, "board_position", spied)
    line = long_line(80)
    expected = Game("english")
    for move in line:
        expected.play(move)
    # (The board's process starts with the first long line: on a busy machine, seconds.)
    async with server.http(timeout=60) as http:
        answers = await asyncio.gather(
            *(http.get(POSITION, params={"moves": ",".join(line[:n])}) for n in (80, 79))
        )
        bad = await http.get(POSITION, params={"moves": ",".join([*line[:40], "1-2"])})
        assert [r.status_code for r in answers] == [200, 200], [r.text for r in answers]
        assert (bad.status_code, bad.json()["error"]) == (400, "bad_request")
        assert bad.json()["message"].startswith("move 41 (1-2)")
        assert made_here == [], "replayed in the server's process"
        # Asked again (as the page does at each depth), a line's position is the one kept:
        # the board's process, busy now, is not asked.
        board, stuck = server.app.state.board, threading.Event()
        board.pool, replaying = holding(stuck), board.pool
        replaying.shutdown()
        try:
            again = await asyncio.wait_for(
                http.get(POSITION, params={"moves": ",".join(line)}), ANSWER_SECONDS
            )
        finally:
            stuck.set()
    assert answers[0].json()["fen"] == expected.fen() == again.json()["fen"]
    assert made_here == []
