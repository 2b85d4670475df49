"""First moves: no clock runs before both sides have moved, and a side that does not make its
first move within FIRST_MOVE_SECONDS has the game aborted, by the server, even across a
restart."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from app.config import Settings
from tests.conftest import make_settings
from tests.support.server import Served, ServerProcess
from tests.support.ws import connect, guest, guest_token, start_game

FIRST_MOVE_SECONDS = 30.0  # passed by advancing the server's clock, never waited for
OUTAGE_FIRST_MOVE_SECONDS = 3.0  # a server process of its own: real time


@pytest.fixture
def settings(db_url: str) -> Settings:
    return make_settings(
        database_url=db_url,
        disconnect_grace_seconds=60,
        heartbeat_seconds=0.5,
        first_move_seconds=FIRST_MOVE_SECONDS,
    )


async def test_a_game_nobody_starts_is_aborted_with_no_clock_run(server: Served) -> None:
    async with guest(server.url) as a, guest(server.url) as b, guest(server.url) as watcher:
        match = await start_game(a, b, clock={"base": 60, "increment": 0})
        assert a.welcome["limits"]["first_move_seconds"] == FIRST_MOVE_SECONDS
        await watcher.send(type="watch", table=match.table["id"])
        await watcher.expect("table")
        server.clock.advance(FIRST_MOVE_SECONDS)
        for client in (a, b, watcher):
            ended = await client.expect("game_ended", game=match.id)
            assert (ended["result"], ended["termination"], ended["winner"]) == (
                "*",
                "aborted",
                None,
            )
            assert ended["clocks"] == {"black": 60_000, "white": 60_000}
        await a.send(type="move", game=match.id, move="11-15", ply=0)
        assert (await a.error())["code"] == "game_over"
        async with server.http() as http:
            archived = (await http.get(f"/api/games/{match.id}")).json()
        assert (archived["result"], archived["termination"]) == ("*", "aborted")


async def test_a_second_side_that_never_moves_has_the_game_aborted(server: Served) -> None:
    async with guest(server.url) as a, guest(server.url) as b:
        match = await start_game(a, b, clock=None)
        moved = await match.play("11-15")
        assert moved["first_move_deadline"] is not None
        server.clock.advance(FIRST_MOVE_SECONDS)
        ended = await b.expect("game_ended", game=match.id)
        assert (ended["result"], ended["termination"]) == ("*", "aborted")
        assert ended["table"] == match.table["id"]


@pytest.mark.outage
@pytest.mark.server
async def test_a_first_move_deadline_that_passes_while_the_server_is_down(
    settings: Settings, tmp_path: Path
) -> None:
    """The deadline is stored: a game whose first move was due while no server ran is aborted
    after the restart, with nobody sending anything (as a clock's flag, the downtime itself
    is not counted against the player). A process killed for real: real time."""
    settings = settings.model_copy(update={"first_move_seconds": OUTAGE_FIRST_MOVE_SECONDS})
    process = ServerProcess(settings, tmp_path)
    await process.start()
    try:
        token_a, token_b = await guest_token(process.url), await guest_token(process.url)
        async with connect(process.url, token_a) as a, connect(process.url, token_b) as b:
            match = await start_game(a, b, clock=None)
            await process.kill()
        await asyncio.sleep(OUTAGE_FIRST_MOVE_SECONDS + 1)  # the deadline passes while it is down
        await process.start()

        async with connect(process.url, token_a) as a:
            await a.send(type="watch", table=match.table["id"])
            game = (await a.expect("table"))["game"]
            if game["status"] == "playing":
                ended = await a.expect("game_ended", game=match.id)
                result = (ended["result"], ended["termination"])
            else:
                result = (game["result"], game["termination"])
            assert result == ("*", "aborted")
    finally:
        await process.stop()
