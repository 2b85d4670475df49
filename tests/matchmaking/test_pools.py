"""Quick pairing and who is online, over `/ws` and REST on a real server: two players seeking
the same pool are paired into one game (`your_game`); cancelling and disconnecting leave the
pool; refusals; a room lists its seated, connected players. Every test runs on SQLite and on
PostgreSQL."""

from __future__ import annotations

import asyncio

from app.db.models import Rating
from app.timeutil import utcnow
from tests.support.server import Served
from tests.support.ws import connect, guest


async def waiting(server: Served, pool: str) -> int:
    async with server.http() as http:
        pools = (await http.get("/api/pools")).json()
    count: int = next(p["waiting"] for p in pools if p["id"] == pool)
    return count


async def test_two_seekers_of_a_pool_are_paired_into_one_game(server: Served) -> None:
    async with guest(server.url) as a, guest(server.url) as b, guest(server.url) as c:
        await c.send(type="seek", pool="pool-10+5")  # another pool: not paired with them
        await c.expect("seeking")
        await a.send(type="seek", pool="english-5+3", ref="s")
        seeking = await a.expect("seeking")
        assert (seeking["pool"], seeking["rated"], seeking["ref"]) == ("english-5+3", False, "s")
        assert await waiting(server, "english-5+3") == 1
        await b.send(type="seek", pool="english-5+3")
        told_a, told_b = await a.expect("your_game"), await b.expect("your_game")
        assert told_a["game"] == told_b["game"]
        assert {told_a["colour"], told_b["colour"]} == {"black", "white"}
        assert told_a["opponent"]["id"] == b.user_id
        assert await waiting(server, "english-5+3") == 0
        assert await waiting(server, "pool-10+5") == 1
        await a.send(type="watch", table=told_a["table"])
        table = (await a.expect("table"))["table"]
        assert (table["variant"], table["clock"]) == ("english", {"base": 300, "increment": 3})
        # Playing already: no seeking meanwhile.
        await a.send(type="seek", pool="english-5+3")
        assert (await a.error())["code"] == "game_in_progress"


async def test_cancelling_and_leaving_end_the_wait(server: Served) -> None:
    async with guest(server.url) as a:
        await a.send(type="seek", pool="english-3+2")
        await a.expect("seeking")
        await a.send(type="cancel_seek", ref=1)
        assert (await a.expect("seek_cancelled"))["ref"] == 1
        assert await waiting(server, "english-3+2") == 0
        await a.send(type="cancel_seek")
        assert (await a.error())["code"] == "not_found"
        await a.send(type="seek", pool="english-3+2")
        await a.expect("seeking")
        assert await waiting(server, "english-3+2") == 1
    for _ in range(100):  # the socket's end is handled after the client has closed it
        if await waiting(server, "english-3+2") == 0:
            break
        await asyncio.sleep(0.05)
    assert await waiting(server, "english-3+2") == 0


async def test_bad_seeks_are_refused(server: Served) -> None:
    async with guest(server.url) as a:
        await a.send(type="seek", pool="chess-5+0")
        error = await a.error()
        assert error["code"] == "bad_message" and "english-5+3" in error["message"]
        await a.send(type="seek", pool="english-5+3", rated=True)
        assert (await a.error())["code"] == "rated_needs_account"


async def test_a_room_lists_its_seated_connected_players(server: Served) -> None:
    async with server.http() as http:
        async with guest(server.url) as a, guest(server.url) as b:
            await a.send(type="open", room="english-casual")
            table = (await a.expect("table"))["table"]
            online = (await http.get("/api/rooms/english-casual/online")).json()
            assert online["count"] == 1
            assert online["players"] == [
                {
                    "id": a.user_id,
                    "name": a.welcome["user"]["name"],
                    "rating": None,  # a guest has none
                    "provisional": False,
                    "kind": "guest",
                    "table": table["id"],
                }
            ]
            assert b.user_id not in [p["id"] for p in online["players"]]  # not seated there
            # A registered player: their rating in their table's category, as seats show it.
            response = await http.post(
                "/api/auth/register", json={"name": "kim", "password": "a fine long passphrase"}
            )
            async with connect(server.url, response.json()["access_token"]) as kim:
                async with server.app.state.db.session() as session:
                    for category, rating in (("untimed", 1612.8), ("blitz", 1390.0)):
                        session.add(
                            Rating(
                                user_id=kim.user_id,
                                variant="english",
                                category=category,
                                rating=rating,
                                rd=60.0,
                                volatility=0.06,
                                games=30,
                                last_game_at=utcnow(),
                            )
                        )
                    await session.commit()
                await kim.send(type="open", room="english-casual", clock=None)
                kims = (await kim.expect("table"))["table"]
                online = (await http.get("/api/rooms/english-casual/online")).json()
                assert online["count"] == 2  # by name: guest-… before kim
                assert online["players"][1] == {
                    "id": kim.user_id,
                    "name": "kim",
                    "rating": 1612,  # untimed, as the table's clock
                    "provisional": False,
                    "kind": "registered",
                    "table": kims["id"],
                }
                assert kims["players"][0]["rating"] == 1612
            other = (await http.get("/api/rooms/english-blitz/online")).json()
            assert other["count"] == 0
            # A player at a private table is online, but the table is not shown to others.
            await b.send(type="open", room="english-blitz", private=True)
            await b.expect("table")
            other = (await http.get("/api/rooms/english-blitz/online")).json()
            assert [(p["id"], p["table"]) for p in other["players"]] == [(b.user_id, None)]
        for _ in range(100):
            online = (await http.get("/api/rooms/english-casual/online")).json()
            if online["count"] == 0:
                break
            await asyncio.sleep(0.05)
        assert online["count"] == 0  # gone: no longer online
        missing = await http.get("/api/rooms/no-such-room/online")
        assert (missing.status_code, missing.json()["error"]) == (404, "not_found")
