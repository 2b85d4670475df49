"""Two server processes behind one Redis and one database serve the same table: each player is
connected to a different one, and every move and ending reaches both, once."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import UTC, datetime

import pytest
from prometheus_client import REGISTRY

from app.db.models import Game as GameRow
from app.live.liveplay import table_channel
from app.live.log_store import StoredEvent
from app.play.players import read_table
from app.play.state import stored_clock
from app.realtime.feeds import GAP_WAIT_SECONDS
from app.realtime.hub import Hub
from tests.conftest import PrivateRedis, make_settings
from tests.support.server import Served, attending, cluster, serve
from tests.support.ws import Client, connect, guest, guest_token, start_game


async def test_players_on_two_servers_play_one_game(two_servers: list[Served]) -> None:
    one, two = two_servers
    async with guest(one.url) as a, guest(two.url) as b, guest(two.url) as watcher:
        match = await start_game(a, b)
        await watcher.send(type="watch", table=match.table["id"])
        await watcher.expect("table")
        await match.play("11-15", "22-18", "15x22", "25x18")
        assert (await watcher.expect("move", ply=4))["move"] == "25x18"
        await b.send(type="move", game=match.id, move="18-14", ply=4)
        assert (await b.error())["code"] == "not_your_turn"
        await a.send(type="resign", game=match.id)
        for client in (a, b, watcher):
            assert (await client.expect("game_ended"))["termination"] == "resignation"


async def test_a_player_is_told_of_their_game_on_another_server(
    two_servers: list[Served],
) -> None:
    one, two = two_servers
    token = await guest_token(two.url)
    async with (
        guest(one.url) as a,
        connect(two.url, token) as b,
        connect(one.url, token) as b_elsewhere,  # another page, on the other server
    ):
        match = await start_game(a, b)
        told = await b_elsewhere.expect("your_game")
        assert (told["game"], told["colour"], told["opponent"]["id"]) == (
            match.id,
            "white",
            a.user_id,
        )


async def test_a_flag_falls_once_across_servers(two_servers: list[Served]) -> None:
    one, two = two_servers
    async with guest(one.url) as a, guest(two.url) as b:
        match = await start_game(a, b, clock={"base": 1, "increment": 0})
        await match.play("11-15", "22-18")  # the clocks run from here
        assert (await a.expect("game_ended"))["termination"] == "timeout"
        await b.expect("game_ended")
        for client in (a, b):
            await client.send(type="ping")
            await client.expect("pong")
            assert sum(m["type"] == "game_ended" for m in client.seen) == 1


async def test_offers_and_absences_cross_servers(two_servers: list[Served]) -> None:
    one, two = two_servers
    async with guest(one.url) as a:
        async with guest(two.url) as b:
            match = await start_game(a, b)
            await b.send(type="draw_offer", game=match.id)
            await a.expect("draw_offered")
            await a.send(type="draw_decline", game=match.id)
            await b.expect("draw_declined")
            await match.play("11-15")
        away = await a.expect("player_away")  # b's server saw b go
        one.clock.advance_past(away["claim_after"] / 1000)  # the cluster's one clock
        await a.send(type="claim_win", game=match.id)
        ended = await a.expect("game_ended")
        assert (ended["result"], ended["termination"]) == ("1-0", "abandoned")


async def test_a_move_made_while_redis_is_down_is_acknowledged_and_kept(
    db_url: str, private_redis: PrivateRedis
) -> None:
    settings = make_settings(database_url=db_url, redis_url=private_redis.url)
    async with serve(settings) as server, guest(server.url) as a, guest(server.url) as b:
        match = await start_game(a, b)
        await private_redis.stop()
        await a.send(type="move", game=match.id, move="11-15", ply=0)
        # This process's clients are told at once: the broker only rings the others.
        assert (await a.expect("move", ply=1))["move"] == "11-15"
        assert (await b.expect("move", ply=1))["move"] == "11-15"
        await private_redis.start()
        await b.send(type="watch", table=match.table["id"])
        game = (await b.expect("table"))["game"]
        assert game["moves"] == ["11-15"] and game["turn"] == "white"


async def test_a_host_keeps_the_table_when_coming_back_through_another_server(
    db_url: str, private_redis: PrivateRedis
) -> None:
    grace = 1.0
    settings = make_settings(
        database_url=db_url, redis_url=private_redis.url, disconnect_grace_seconds=grace
    )
    async with cluster(settings) as (one, two), connect(two.url) as lobby:
        token = await guest_token(one.url)
        async with connect(one.url, token) as host:
            await host.send(type="open", room="english-casual")
            first = (await host.expect("table"))["table"]["id"]
            await host.send(type="open", room="english-casual")
            second = (await host.expect("table"))["table"]["id"]
        # The page reloads, the balancer sends it to the other server, and it watches the
        # host's tables again.
        async with connect(two.url, token) as back:
            for table_id in (first, second):
                await back.send(type="watch", table=table_id)
                await back.expect("table")
            await attending(two, back.user_id, first, second)
            one.clock.advance(grace * 1.5)  # the cluster's one clock
            # Still connected to the other server while leaving this one: seats stay too.
            async with connect(one.url, token):
                pass
            one.clock.advance(grace * 1.5)
            await lobby.send(type="subscribe_lobby")
            rooms = (await lobby.expect("lobby"))["rooms"]
            tables = {t["id"]: t for r in rooms for t in r["tables"]}
            assert {first, second} <= set(tables)
            assert all(len(tables[t]["players"]) == 1 for t in (first, second))
        # Gone from both servers: the tables close once the grace period is over.
        removed = {
            (await lobby.expect_advancing(one.clock, grace, "lobby_table_removed"))["table"]
            for _ in range(2)
        }
        assert removed == {first, second}


async def test_a_server_keeps_its_copy_of_a_game_current_from_the_other_servers_moves(
    two_servers: list[Served],
) -> None:
    """Each move reaches the other process's copy of the game with the ring, so the answer
    played there needs no reading of storage first; its clocks are the stored ones."""
    one, two = two_servers
    async with guest(one.url) as a, guest(two.url) as b:
        match = await start_game(a, b, clock={"base": 300, "increment": 2})
        served_by = {id(a): one, id(b): two}
        for ply, (mover, other, move) in enumerate(
            [(a, b, "11-15"), (b, a, "22-18"), (a, b, "15x22"), (b, a, "25x18")], start=1
        ):
            await mover.send(type="move", game=match.id, move=move, ply=ply - 1)
            await other.expect("move", ply=ply)
            live = served_by[id(other)].app.state.live
            cached = live.games.get(match.id)
            assert cached is not None and cached.game.ply == ply
            async with live.db.session() as session:
                row = await session.get(GameRow, match.id)
            assert row is not None
            stored = stored_clock(row)
            assert cached.clock is not None and stored is not None
            assert (cached.clock.black_ms, cached.clock.white_ms) == (
                stored.black_ms,
                stored.white_ms,
            )
            assert cached.clock.turn_started == pytest.approx(stored.turn_started, abs=1e-3)


async def test_a_move_rung_while_the_copy_is_busy_is_applied_once_it_is_free(
    two_servers: list[Served],
) -> None:
    """A ring may arrive while this process still holds the game's lock (announcing its own
    last move): the copy takes the move as soon as the lock is free, not at the next query."""
    one, two = two_servers
    async with guest(one.url) as a, guest(two.url) as b:
        match = await start_game(a, b)
        await match.play("11-15", "22-18")
        live = two.app.state.live
        async with live.game_lock(match.id):
            await a.send(type="move", game=match.id, move="15x22", ply=2)
            await b.expect("move", ply=3)
            assert live.games[match.id].game.ply == 2  # busy: not yet
        for _ in range(100):
            if live.games[match.id].game.ply == 3:
                break
            await asyncio.sleep(0.01)
        assert live.games[match.id].game.ply == 3


async def _stored_elsewhere(served: Served, table_id: int, count: int) -> list[StoredEvent]:
    """`count` events stored at the table as another process would store them (their rings
    are for the test to send)."""
    live = served.app.state.live
    async with live.db.session() as session:
        table = await read_table(session, table_id)
        assert table is not None
        stored = await live.record(
            session, table_id, [live.table_update(table)] * count, datetime.now(UTC)
        )
        await session.commit()
    return stored


async def _ring(served: Served, event: StoredEvent) -> None:
    await served.app.state.live.broker.publish(table_channel(event.table_id), event.ring)


@asynccontextmanager
async def _watched_game(server: Served) -> AsyncIterator[tuple[int, Client, int]]:
    """A game's table, a spectator watching it, and the number of its last event."""
    async with guest(server.url) as a, guest(server.url) as b, guest(server.url) as watcher:
        match = await start_game(a, b)
        await watcher.send(type="watch", table=match.table["id"])
        version = (await watcher.expect("table"))["v"]
        yield match.table["id"], watcher, version


async def test_rings_that_cross_are_put_in_order_without_reading_the_log(server: Served) -> None:
    async with _watched_game(server) as (table_id, watcher, version):
        reads = REGISTRY.get_sample_value("checkers_event_log_reads_total")
        assert reads is not None
        first, second = await _stored_elsewhere(server, table_id, 2)
        await _ring(server, second)  # it overtook the first on its way
        await _ring(server, first)
        assert (await watcher.expect("table_update"))["v"] == version + 1
        assert (await watcher.expect("table_update"))["v"] == version + 2
        assert REGISTRY.get_sample_value("checkers_event_log_reads_total") == reads


async def test_an_event_whose_ring_is_lost_is_read_from_the_log(server: Served) -> None:
    async with _watched_game(server) as (table_id, watcher, version):
        reads = REGISTRY.get_sample_value("checkers_event_log_reads_total") or 0.0
        _, second = await _stored_elsewhere(server, table_id, 2)
        await _ring(server, second)  # the first's ring never comes
        assert (await watcher.expect("table_update"))["v"] == version + 1
        assert (await watcher.expect("table_update"))["v"] == version + 2
        assert (REGISTRY.get_sample_value("checkers_event_log_reads_total") or 0.0) > reads


async def test_a_comparison_with_the_log_waits_for_rings_on_their_way(server: Served) -> None:
    hub: Hub = server.app.state.hub
    async with _watched_game(server) as (table_id, watcher, version):
        reads = REGISTRY.get_sample_value("checkers_event_log_reads_total")
        assert reads is not None
        (stored,) = await _stored_elsewhere(server, table_id, 1)
        await hub.feeds.compare_heads()  # the periodic comparison finds the table one behind
        await _ring(server, stored)  # and then its ring comes
        assert (await watcher.expect("table_update"))["v"] == version + 1
        server.clock.advance(GAP_WAIT_SECONDS * 3)
        await asyncio.sleep(0.1)  # what fell due runs (a read of the log, if it were behind)
        assert REGISTRY.get_sample_value("checkers_event_log_reads_total") == reads
