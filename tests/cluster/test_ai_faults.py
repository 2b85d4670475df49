"""Games against the computer survive their server's crash: after a restart, or on another
process, the AI's search starts again and it moves."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.cluster.test_faults import process_settings, processes
from tests.conftest import PrivateRedis, make_settings
from tests.support.ws import Client, connect, guest_token

pytestmark = pytest.mark.outage  # servers killed, Redis stopped: real time


async def human_moves_then(client: Client, game: dict[str, object]) -> int:
    """Play Black's first legal move; the ply at which the AI is to move."""
    await client.send(type="move", game=game["id"], move="11-15", ply=0)
    await client.expect("move", ply=1)
    return 1


async def test_an_ai_game_continues_after_its_server_is_killed_and_restarted(
    db_url: str, tmp_path: Path
) -> None:
    settings = process_settings(db_url)
    async with processes(settings, tmp_path, 1) as (server,):
        token = await guest_token(server.url)
        async with connect(server.url, token) as human:
            # Level 8 thinks for a second: the server dies while the AI is thinking.
            await human.send(type="play_ai", level=8, colour="black")
            snapshot = await human.expect("table")
            game = snapshot["game"]
            await human_moves_then(human, game)
            await server.kill()
        await server.start()
        async with connect(server.url, token) as human:
            await human.send(type="watch", table=snapshot["table"]["id"])
            back = await human.expect("table")
            if back["game"]["ply"] < 2:  # not moved yet: the AI's search started again
                await human.expect("move", game=game["id"], ply=2)
            await human.send(type="watch", table=snapshot["table"]["id"])
            now = (await human.expect("table"))["game"]
    assert now["ply"] == 2 and now["status"] == "playing" and now["turn"] == "black"


async def test_another_server_takes_over_the_ai_games_of_one_that_crashed(
    db_url: str, private_redis: PrivateRedis, tmp_path: Path
) -> None:
    settings = process_settings(db_url, redis_url=private_redis.url)
    async with processes(settings, tmp_path, 2) as (one, two):
        token = await guest_token(one.url)
        async with connect(one.url, token) as human:
            await human.send(type="play_ai", level=8, colour="black")
            snapshot = await human.expect("table")
            game = snapshot["game"]
            await human_moves_then(human, game)
            await one.kill()  # the process playing the AI's moves
        async with connect(two.url, token) as human:
            await human.send(type="watch", table=snapshot["table"]["id"])
            back = await human.expect("table")
            if back["game"]["ply"] < 2:
                await human.expect("move", game=game["id"], ply=2)
            # And it goes on answering, from this process now.
            await human.send(type="watch", table=snapshot["table"]["id"])
            now = (await human.expect("table"))["game"]
            await human.send(type="move", game=game["id"], move=now["legal_moves"][0], ply=2)
            await human.expect("move", game=game["id"], ply=4)


async def test_a_move_made_through_another_server_wakes_the_computer_at_once(
    db_url: str, private_redis: PrivateRedis, tmp_path: Path
) -> None:
    # The sweep is too slow to answer within the test's wait: only the ring can.
    settings = make_settings(
        database_url=db_url, redis_url=private_redis.url, heartbeat_seconds=0.5, sweep_seconds=60
    )
    async with processes(settings, tmp_path, 2) as (one, two):
        token = await guest_token(one.url)
        async with connect(one.url, token) as human:  # the game is played from process one
            await human.send(type="play_ai", level=1, colour="black")
            snapshot = await human.expect("table")
        async with connect(two.url, token) as human:
            await human.send(type="watch", table=snapshot["table"]["id"])
            await human.expect("table")
            await human_moves_then(human, snapshot["game"])
            reply = await human.expect("move", ply=2)
    assert reply["turn"] == "black"
