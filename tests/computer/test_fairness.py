"""Fair shares of the computer: a user and an address play only so many games against it at
once (`too_many_ai_games`, over /ws and REST, rematches included), a weak level's reply never
waits for the search processes, and the searches waiting for them are taken in turn per player.

The search processes are replaced by a `GatedPool` that holds every search until the test lets
it run, so the pool is busy exactly as long as the test says: no timing is measured."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from concurrent.futures import Executor, Future
from typing import Any

from app.config import Settings
from app.engine import Limits
from app.play import store as stored_games
from tests.computer.test_play import start_ai_game
from tests.support.inproc import served_here
from tests.support.server import Served
from tests.support.ws import Client, connect, guest, guest_token


class GatedPool(Executor):
    """Stands in for the computer's search processes: keeps each search submitted, in order,
    until `run` carries it out (here, in the test's thread)."""

    def __init__(self) -> None:
        self.submitted: list[tuple[Future[Any], Callable[..., Any], tuple[Any, ...]]] = []

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Future[Any]:
        future: Future[Any] = Future()
        self.submitted.append((future, fn, args))
        return future

    def limits(self, index: int) -> Limits:
        limits: Limits = self.submitted[index][2][2]  # search(fen, variant, limits, history)
        return limits

    def run(self, index: int) -> None:
        future, fn, args = self.submitted[index]
        future.set_result(fn(*args))

    async def wait_for(self, count: int) -> None:
        """Until `count` searches have been submitted (10 s at most)."""
        await until(lambda: len(self.submitted) >= count, f"{count} searches submitted")

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        for future, _, _ in self.submitted:
            future.cancel()


async def until(condition: Callable[[], bool], what: str) -> None:
    for _ in range(1000):  # 10 s at most
        if condition():
            return
        await asyncio.sleep(0.01)
    raise AssertionError(f"never true: {what}")


def asked(served: Served, pool: GatedPool) -> int:
    """Searches asked for: given to the pool, or waiting for it (a queue of the server's)."""
    queue = getattr(served.app.state.ai, "queue", None)
    return len(pool.submitted) + (queue.waiting if queue is not None else 0)


def gated(served: Served) -> GatedPool:
    pool = GatedPool()
    served.app.state.ai.pool = pool
    return pool


async def resign(client: Client, game_id: int) -> None:
    await client.send(type="resign", game=game_id)
    await client.expect("game_ended", game=game_id)


# --- how many games at once -------------------------------------------------------------------


async def test_a_user_plays_at_most_ai_games_per_user_at_once(server: Served) -> None:
    """AI_GAMES_PER_USER: 2 by default."""
    async with guest(server.url) as human:
        first = await start_ai_game(human, level=1, colour="black")
        await start_ai_game(human, level=2, colour="black")
        await human.send(type="play_ai", ref="third", level=3, colour="black")
        refused = await human.error()
        assert refused["code"] == "too_many_ai_games" and refused["ref"] == "third"
        assert "computer" in refused["message"]
        # A game that ended no longer counts.
        await resign(human, first["game"]["id"])
        await start_ai_game(human, level=3, colour="black")


async def test_the_rest_face_refuses_the_same_way(server: Served) -> None:
    async with server.http() as rest:
        token = (await rest.post("/api/auth/guest")).json()["access_token"]
        headers = {"Authorization": f"Bearer {token}"}
        body = {"level": 1, "colour": "black"}
        for _ in range(2):
            assert (await rest.post("/api/ai/games", json=body, headers=headers)).status_code == 201
        refused = await rest.post("/api/ai/games", json=body, headers=headers)
    assert refused.status_code == 409
    assert refused.json()["error"] == "too_many_ai_games"


async def test_an_address_plays_at_most_ai_games_per_address_at_once(server: Served) -> None:
    """Guests are cheap: from one address, however many, only AI_GAMES_PER_ADDRESS games; from
    another address a player is not refused. AI_GAMES_PER_ADDRESS: 4 by default."""
    tokens = [await guest_token(server.url) for _ in range(3)]
    async with (
        connect(server.url, tokens[0], source="127.0.0.3") as a,
        connect(server.url, tokens[1], source="127.0.0.3") as b,
        connect(server.url, tokens[2], source="127.0.0.3") as c,
    ):
        for client in (a, a, b, b):
            await start_ai_game(client, level=1, colour="black")
        await c.send(type="play_ai", level=1, colour="black")
        refused = await c.error()
        assert refused["code"] == "too_many_ai_games" and "address" in refused["message"]
        async with guest(server.url, source="127.0.0.4") as elsewhere:
            await start_ai_game(elsewhere, level=1, colour="black")


async def test_an_address_is_kept_only_while_its_game_is_in_progress(server: Served) -> None:
    """The address that started a game against the computer is stored to be counted, and
    cleared by a later start once that game has ended."""
    live = server.app.state.live

    async def address_of(game_id: int) -> str | None:
        async with live.db.session() as session:
            row = await stored_games.get(session, game_id)
            assert row is not None
            return row.ai_address

    async with guest(server.url, source="127.0.0.5") as human:
        first = (await start_ai_game(human, level=1, colour="black"))["game"]["id"]
        assert await address_of(first) == "127.0.0.5"
        await resign(human, first)
        second = (await start_ai_game(human, level=1, colour="black"))["game"]["id"]
        assert await address_of(first) is None
        assert await address_of(second) == "127.0.0.5"


async def test_a_rematch_against_the_computer_counts_as_a_new_game(server: Served) -> None:
    """Else a player would finish games and ask rematches at all of their tables at once."""
    async with guest(server.url) as human:
        first = await start_ai_game(human, level=1, colour="black")
        await start_ai_game(human, level=1, colour="black")
        await resign(human, first["game"]["id"])
        await start_ai_game(human, level=1, colour="black")  # two in progress again
        await human.send(type="rematch", ref="again", table=first["table"]["id"])
        refused = await human.error()
    assert refused["code"] == "too_many_ai_games" and refused["ref"] == "again"


# --- whose search runs when -------------------------------------------------------------------


async def test_a_weak_level_reply_does_not_wait_for_busy_search_processes(
    settings: Settings,
) -> None:
    """While a level-8 search holds the only search process, a level-1 game still gets its
    reply: its search never enters the pool."""
    async with served_here(settings.model_copy(update={"ai_workers": 1})) as served:
        pool = gated(served)
        async with guest(served.url) as strong, guest(served.url, source="127.0.0.2") as weak:
            await start_ai_game(strong, level=8, colour="white")  # the computer moves first
            await pool.wait_for(1)
            snapshot = await start_ai_game(weak, level=1, colour="white")
            if snapshot["game"]["ply"] == 0:  # else its reply is in the snapshot already
                moved = await weak.expect("move", game=snapshot["game"]["id"], ply=1)
                assert moved["turn"] == "white"
            assert len(pool.submitted) == 1  # the level-8 search alone, still held
            pool.run(0)
            await strong.expect("move", ply=1)


async def test_searches_waiting_for_a_process_are_taken_in_turn_per_player(
    settings: Settings,
) -> None:
    """One search process, busy with the first of a player's two games: another player's
    search, asked for after the second, goes before it (first come, first served would make
    every other player wait for all of one player's searches)."""
    async with served_here(settings.model_copy(update={"ai_workers": 1})) as served:
        pool = gated(served)
        async with guest(served.url) as many, guest(served.url, source="127.0.0.2") as other:
            await start_ai_game(many, level=8, colour="white")
            await pool.wait_for(1)
            await start_ai_game(many, level=8, colour="white")
            await until(lambda: asked(served, pool) == 2, "the second game's search asked for")
            await start_ai_game(other, level=7, colour="white")
            await until(lambda: asked(served, pool) == 3, "the other player's search asked for")
            assert len(pool.submitted) == 1  # the others wait for the process
            pool.run(0)
            await pool.wait_for(2)
            assert pool.limits(1).depth == 10  # level 7's: the other player's
            pool.run(1)
            await pool.wait_for(3)
            assert pool.limits(2).depth is None  # then the first player's second game
            pool.run(2)
            await other.expect("move", ply=1)
            await many.expect("move", ply=1)
