"""Coming back: a client that reconnects gets what it missed; a server killed with SIGKILL comes
back with every game in progress, no accepted move lost and no clock charged for the downtime
(while the time spent before it stays charged); a server joining a running cluster leaves the
running clocks alone."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

import pytest

from app.config import Settings
from tests.conftest import make_settings
from tests.support.server import Served, ServerProcess
from tests.support.ws import connect, guest, guest_token, start_game

pytestmark = pytest.mark.outage  # servers killed, Redis stopped: real time


def last_version(messages: list[dict[str, Any]]) -> tuple[int, str]:
    """The table version and epoch a client last saw."""
    epoch = next(m["epoch"] for m in reversed(messages) if m["type"] == "table")
    version = max(m["v"] for m in messages if "v" in m)
    return version, epoch


async def test_a_reconnecting_player_receives_the_missed_events(server: Served) -> None:
    token = await guest_token(server.url)
    async with guest(server.url) as b:
        async with connect(server.url, token) as a:
            match = await start_game(a, b)
            await match.play("11-15")
            since, epoch = last_version(a.seen)
        assert (await b.expect("player_away"))["colour"] == "black"
        await b.send(type="move", game=match.id, move="22-18", ply=1)
        await b.expect("move", ply=2)
        await b.send(type="chat", table=match.table["id"], text="still there?")
        await b.expect("chat")

        async with connect(server.url, token) as a:
            assert a.welcome["playing"] == [{"table": match.table["id"], "game": match.id}]
            await a.send(type="watch", table=match.table["id"], since=since, epoch=epoch)
            synced = await a.expect("synced")
            replay = a.seen[:-1]
            assert [m["v"] for m in replay] == list(range(since + 1, synced["v"] + 1))
            assert [m["type"] for m in replay] == ["player_away", "move", "chat", "player_back"]
            assert replay[1]["move"] == "22-18" and replay[2]["text"] == "still there?"
            assert (await b.expect("player_back"))["colour"] == "black"
            match.black, match.ply, match.turn = a, 2, "black"
            await match.play("15x22")


async def test_an_unknown_version_gets_the_full_state(server: Served) -> None:
    async with guest(server.url) as a, guest(server.url) as b:
        match = await start_game(a, b)
        await match.play("11-15")
        await a.send(type="watch", table=match.table["id"], since=1, epoch="gone")
        snapshot = await a.expect("table")
        assert snapshot["game"]["moves"] == ["11-15"]
        assert snapshot["game"]["turn"] == "white"


async def test_a_game_survives_a_killed_server(settings: Settings, tmp_path: Path) -> None:
    process = ServerProcess(settings, tmp_path)
    await process.start()
    try:
        token_a, token_b = await guest_token(process.url), await guest_token(process.url)
        async with connect(process.url, token_a) as a, connect(process.url, token_b) as b:
            match = await start_game(a, b, clock={"base": 120, "increment": 0})
            before = await match.play("11-15", "22-18", "15x22")
            await process.kill()
        await asyncio.sleep(3)  # the downtime must not be charged to White, who is to move
        await process.start()

        async with connect(process.url, token_a) as a, connect(process.url, token_b) as b:
            assert b.welcome["playing"] == [{"table": match.table["id"], "game": match.id}]
            for client in (a, b):
                await client.send(type="watch", table=match.table["id"])
            game = (await b.expect("table"))["game"]
            await a.expect("table")
            assert game["moves"] == ["11-15", "22-18", "15x22"] and game["ply"] == 3
            assert game["clocks"]["black"] == before["clocks"]["black"]
            assert game["clocks"]["white"] > before["clocks"]["white"] - 2000
            match.black, match.white = a, b
            await match.play("25x18")
            await a.send(type="resign", game=match.id)
            ended = await b.expect("game_ended")
            assert (ended["result"], ended["termination"]) == ("0-1", "resignation")
    finally:
        await process.stop()


async def test_time_spent_before_a_crash_stays_charged(settings: Settings, tmp_path: Path) -> None:
    process = ServerProcess(settings, tmp_path)
    await process.start()
    try:
        token_a, token_b = await guest_token(process.url), await guest_token(process.url)
        async with connect(process.url, token_a) as a, connect(process.url, token_b) as b:
            match = await start_game(a, b, clock={"base": 120, "increment": 0})
            before = await match.play("11-15", "22-18", "15x22")
            turn_began = time.monotonic()
            await asyncio.sleep(2)  # White, to move, thinks
            await process.kill()
            spent = time.monotonic() - turn_began
        await asyncio.sleep(3)  # the downtime
        await process.start()

        async with connect(process.url, token_b) as b:
            await b.send(type="watch", table=match.table["id"])
            game = (await b.expect("table"))["game"]
        charged = before["clocks"]["white"] - game["clocks"]["white"]
        # Give or take a heartbeat interval and the time to reconnect; the downtime (3 seconds
        # and the start-up) would push it well past the upper bound.
        assert spent * 1000 - 1000 < charged < spent * 1000 + 1000
        assert game["clocks"]["black"] == before["clocks"]["black"]
    finally:
        await process.stop()


async def test_a_crash_restarted_within_a_heartbeat_is_not_charged(
    db_url: str, tmp_path: Path
) -> None:
    """The crashed process's last beats are still fresh when it comes back, but the lock it
    held (PostgreSQL's advisory lock, SQLite's file lock) went with it: the downtime is made up
    for all the same."""
    settings = make_settings(database_url=db_url, heartbeat_seconds=30.0)
    process = ServerProcess(settings, tmp_path)
    await process.start()
    try:
        token_a, token_b = await guest_token(process.url), await guest_token(process.url)
        async with connect(process.url, token_a) as a, connect(process.url, token_b) as b:
            match = await start_game(a, b, clock={"base": 120, "increment": 0})
            before = await match.play("11-15", "22-18", "15x22")
            turn_began = time.monotonic()
            await process.kill()
        await asyncio.sleep(3)  # the downtime, well within one beat
        await process.start()

        async with connect(process.url, token_b) as b:
            await b.send(type="watch", table=match.table["id"])
            game = (await b.expect("table"))["game"]
            elapsed = time.monotonic() - turn_began
        charged = before["clocks"]["white"] - game["clocks"]["white"]
        # The downtime (3 seconds and the start-up) would be charged in full otherwise.
        assert charged < (elapsed - 3) * 1000
    finally:
        await process.stop()


async def test_a_server_joining_a_cluster_keeps_the_running_clocks(
    db_url: str, tmp_path: Path
) -> None:
    settings = make_settings(database_url=db_url, heartbeat_seconds=1.0)
    first, second = ServerProcess(settings, tmp_path), ServerProcess(settings, tmp_path)
    await first.start()
    try:
        async with guest(first.url) as a, guest(first.url) as b:
            match = await start_game(a, b, clock={"base": 120, "increment": 0})
            before = await match.play("11-15", "22-18", "15x22")
            turn_began = time.monotonic()
            await asyncio.sleep(2)  # White, to move, thinks while the second server starts
            await second.start()
            async with guest(second.url) as watcher:
                await watcher.send(type="watch", table=match.table["id"])
                game = (await watcher.expect("table"))["game"]
            spent = time.monotonic() - turn_began
            charged = before["clocks"]["white"] - game["clocks"]["white"]
            assert spent * 1000 - 1000 < charged < spent * 1000 + 1000
            # On the first server the turn runs on too: White's move is charged the whole turn.
            await match.play("25x18")
            spent = time.monotonic() - turn_began
            await b.send(type="watch", table=match.table["id"])
            game = (await b.expect("table"))["game"]
            assert game["clocks"]["white"] < before["clocks"]["white"] - spent * 1000 + 1000
    finally:
        await second.stop()
        await first.stop()
