"""Fair tables: clocks wait for both first moves, seats follow the people who watch them,
players are told of their games wherever they are, spectators' chat waits for the game's end,
and refused moves are explained in plain words."""

from __future__ import annotations

from tests.support.server import Served
from tests.support.ws import guest, start_game


async def test_no_clock_runs_before_both_first_moves(server: Served) -> None:
    async with guest(server.url) as a, guest(server.url) as b, guest(server.url) as watcher:
        assert a.welcome["limits"]["first_move_seconds"] == 30
        match = await start_game(a, b, clock={"base": 60, "increment": 5})
        started = match.game
        assert started["clock_running"] is False
        assert started["clocks"] == {"black": 60_000, "white": 60_000}
        assert started["first_move_deadline"] > 0

        first = await match.play("11-15")
        assert first["clocks"] == {"black": 60_000, "white": 60_000}  # no increment either
        assert first["first_move_deadline"] > first["at"]
        await watcher.send(type="watch", table=match.table["id"])
        game = (await watcher.expect("table"))["game"]
        assert game["clock_running"] is False
        assert game["clocks"] == {"black": 60_000, "white": 60_000}
        assert game["first_move_deadline"] == first["first_move_deadline"]

        second = await match.play("22-18")
        assert second["first_move_deadline"] is None
        assert second["clocks"] == {"black": 60_000, "white": 60_000}
        await watcher.send(type="watch", table=match.table["id"])
        game = (await watcher.expect("table"))["game"]
        assert game["clock_running"] is True and game["first_move_deadline"] is None
