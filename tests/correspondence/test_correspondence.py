"""Correspondence games (days per move), played over faked days: the allowance is full again
after every move and a move overdue loses on time; first moves have a day; nobody is away from
such a game and its waiting table keeps its host; a player has many at once; the pools pair a
seek whose player has gone; such games are rated in their own category."""

from __future__ import annotations

from tests.support.server import Served
from tests.support.ws import connect, guest, guest_token, member_token, start_game

DAY = 86_400
DAY_MS = DAY * 1000


async def test_a_game_over_several_days_ends_on_time(server: Served) -> None:
    async with guest(server.url) as a, guest(server.url) as b, guest(server.url) as watcher:
        match = await start_game(a, b, clock={"days": 3})
        assert match.table["clock"] == {"base": 3 * DAY, "increment": 0, "days": 3}
        game = match.game
        assert game["clocks"] == {"black": 3 * DAY_MS, "white": 3 * DAY_MS}
        # Not 30 seconds: a day for each side's first move.
        due_in = game["first_move_deadline"] - server.clock.time() * 1000
        assert DAY_MS - 60_000 < due_in <= DAY_MS
        server.clock.advance(DAY - 60)
        first = await match.play("11-15")
        assert abs(first["first_move_deadline"] - first["at"] - DAY_MS) < 1000
        server.clock.advance(DAY - 60)
        await match.play("22-18")
        # Two days and a half on Black's move, then the move: Black's three days are whole
        # again (they do not add up), White's run from their full allowance.
        server.clock.advance(2 * DAY + DAY // 2)
        moved = await match.play("15x22")
        assert moved["clocks"] == {"black": 3 * DAY_MS, "white": 3 * DAY_MS}
        await watcher.send(type="watch", table=match.table["id"])
        shown = (await watcher.expect("table"))["game"]
        assert shown["clock_running"] is True and shown["turn"] == "white"
        # White lets the three days go by: lost on time, recorded at once.
        server.clock.advance(3 * DAY - 1)
        server.clock.advance(2)
        for client in (a, b):
            ended = await client.expect("game_ended", game=match.id)
            assert (ended["result"], ended["termination"]) == ("1-0", "timeout")
        async with server.http() as http:
            archived = (await http.get(f"/api/games/{match.id}")).json()
        assert (archived["result"], archived["termination"]) == ("1-0", "timeout")
        assert archived["clock"]["base_s"] == 3 * DAY


async def test_a_game_over_several_days_ends_on_the_board(server: Served) -> None:
    async with guest(server.url) as a, guest(server.url) as b:
        match = await start_game(a, b, clock={"days": 1}, start_fen="B:W18:B14")
        server.clock.advance(DAY - 1)  # the first move, just in time
        await a.send(type="move", game=match.id, move="14x23", ply=0)
        ended = await b.expect("game_ended", game=match.id)
        assert (ended["result"], ended["termination"], ended["winner"]) == (
            "1-0",
            "no_moves",
            "black",
        )


async def test_a_first_move_a_day_late_aborts_the_game(server: Served) -> None:
    async with guest(server.url) as a, guest(server.url) as b:
        match = await start_game(a, b, clock={"days": 7})
        server.clock.advance(DAY + 1)
        ended = await b.expect("game_ended", game=match.id)
        assert (ended["result"], ended["termination"]) == ("*", "aborted")


async def test_nobody_is_away_from_a_correspondence_game_nor_stood_up_from_its_table(
    server: Served,
) -> None:
    """The players leave (the grace period is half a second here): no absence is noted, so
    nothing can be claimed; the game waits. A correspondence table waiting for an opponent
    keeps its host, who has gone, as a live one would not."""
    token = await guest_token(server.url)
    async with connect(server.url, token) as a, guest(server.url) as b:
        match = await start_game(a, b, clock={"days": 2})
        await match.play("11-15", "22-18")
    async with guest(server.url) as host:
        await host.send(type="open", room="english-casual", clock={"days": 5})
        waiting = (await host.expect("table"))["table"]["id"]
    server.clock.advance(DAY)
    async with connect(server.url) as lobby, guest(server.url) as c:
        await lobby.send(type="subscribe_lobby")
        rooms = (await lobby.expect("lobby"))["rooms"]
        tables = {t["id"]: t for room in rooms for t in room["tables"]}
        assert waiting in tables and tables[waiting]["clock"]["days"] == 5
        # Someone sits down days later: the game starts, and its host has a day to move.
        await c.send(type="sit", table=waiting)
        started = (await c.expect("game_started"))["game"]
        assert started["away"] == {} and started["claim_after"] is None
    async with connect(server.url, token) as a:
        await a.send(type="watch", table=match.table["id"])
        game = (await a.expect("table"))["game"]
        assert game["status"] == "playing" and game["away"] == {}
        assert game["claim_after"] is None


async def test_a_player_has_many_correspondence_games_at_once(server: Served) -> None:
    """Past the three tables one may host, correspondence games in progress do not count."""
    async with guest(server.url) as host:
        for _ in range(5):
            async with guest(server.url) as other:
                await start_game(host, other, clock={"days": 3})
        await host.send(type="open", room="english-casual", clock={"base": 300, "increment": 3})
        assert (await host.expect("table"))["table"]["clock"] == {"base": 300, "increment": 3}


async def test_a_correspondence_seek_waits_while_its_player_is_away(server: Served) -> None:
    async with server.http() as http:
        pools = {p["id"]: p for p in (await http.get("/api/pools")).json()}
    assert pools["english-3d"]["clock"] == {"base": 3 * DAY, "increment": 0, "days": 3}
    assert pools["english-3d"]["category"] == "correspondence"
    token = await guest_token(server.url)
    async with connect(server.url, token) as first:
        await first.send(type="seek", pool="english-3d")
        await first.expect("seeking")
    async with server.http() as http:
        pools = {p["id"]: p for p in (await http.get("/api/pools")).json()}
    assert pools["english-3d"]["waiting"] == 1  # gone, and still waiting
    async with guest(server.url) as second:
        await second.send(type="seek", pool="english-3d")
        notice = await second.expect("your_game")
    async with connect(server.url, token) as first:
        await first.send(type="watch", table=notice["table"])
        game = (await first.expect("table"))["game"]
        assert game["status"] == "playing" and first.user_id in (
            game["black"]["id"],
            game["white"]["id"],
        )


async def test_correspondence_games_are_rated_in_their_own_category(server: Served) -> None:
    tokens = [await member_token(server.url, name) for name in ("postal1", "postal2")]
    async with connect(server.url, tokens[0]) as a, connect(server.url, tokens[1]) as b:
        match = await start_game(a, b, clock={"days": 1}, rated=True)
        await match.play("11-15", "22-18")
        await a.send(type="resign", game=match.id)
        await b.expect("game_ended", game=match.id)
    async with server.http() as http:
        shown = (await http.get("/api/players/postal2")).json()
    categories = {(r["variant"], r["category"]) for r in shown["ratings"]}
    assert ("english", "correspondence") in categories
    assert not any(category != "correspondence" for _, category in categories)
