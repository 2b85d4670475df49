"""Presence never lies: a player with a live connection is never reported away, whatever happens
to the database's connections.

Two server processes (in this process, one database, one Redis) on the production heartbeat
settings (a beat every 5 s, a sweep every second, a 60 s grace period); a player on each. Every
connection the database has is cut (`pg_terminate_backend`, as a failover or a network blip
does) again and again while they play: nobody may be told the other is away, and a claim of an
abandonment win is refused. A server that finds a connected player marked away (as a cut once
made one) sets it right, and a claim checks that the opponent is really gone.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import asyncpg
import pytest
from sqlalchemy import delete, make_url, update

from app.config import Settings
from app.db.models import Game, Presence
from app.timeutil import as_datetime
from tests.conftest import make_settings
from tests.support.server import Served, cluster
from tests.support.ws import Client, Match, connect, member_token, start_game

pytestmark = pytest.mark.outage  # connections cut for real, real time between the cuts

ROUNDS = 20
BETWEEN_CUTS = 0.4
OPENING = ["11-15", "23-19", "8-11", "22-17", "9-13", "17-14", "10-17", "21-14", "15-18"]


def production(db_url: str, redis_url: str) -> Settings:
    """The shipped defaults for the heartbeat, the sweep and the grace period."""
    settings = make_settings(database_url=db_url, redis_url=redis_url)
    assert (settings.heartbeat_seconds, settings.sweep_seconds) == (5.0, 1.0)
    assert settings.disconnect_grace_seconds == 60.0
    return settings


@pytest.fixture
def postgres_url(db_url: str) -> str:
    if not db_url.startswith("postgresql"):
        pytest.skip("connections are cut on PostgreSQL")
    return db_url


async def cut_every_connection(db_url: str) -> int:
    """Terminate every backend connected to the test's database; how many there were."""
    url = make_url(db_url)
    admin = url.set(drivername="postgresql", database="postgres")
    conn = await asyncpg.connect(admin.render_as_string(hide_password=False))
    try:
        cut = await conn.fetchval(
            "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity"
            " WHERE datname = $1 AND pid <> pg_backend_pid()",
            url.database,
        )
        return int(cut)
    finally:
        await conn.close()


@asynccontextmanager
async def rated_game(one: Served, two: Served) -> AsyncIterator[Match]:
    """A rated game between a player on each server."""
    token_a = await member_token(one.url, "alice")
    token_b = await member_token(two.url, "bob")
    async with connect(one.url, token_a) as a, connect(two.url, token_b) as b:
        yield await start_game(a, b, room="english-blitz", rated=True)


def away_events(*clients: Client) -> list[dict[str, object]]:
    return [m for client in clients for m in client.seen if m["type"] == "player_away"]


async def settle(client: Client, seconds: float) -> None:
    """Read whatever the server sends for `seconds` (pings keep the exchange going)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        await client.send(type="ping")
        await client.expect("pong")
        await asyncio.sleep(0.5)


async def test_cut_database_connections_never_make_a_connected_player_away(
    postgres_url: str, redis_url: str
) -> None:
    settings = production(postgres_url, redis_url)
    async with cluster(settings, 2) as (one, two), rated_game(one, two) as match:
        moves = iter(OPENING)
        cuts = 0
        for round_ in range(ROUNDS):
            cuts += await cut_every_connection(postgres_url)
            await asyncio.sleep(BETWEEN_CUTS)
            if round_ % 4 == 3:  # the players go on moving every few seconds
                await play_retrying(match, next(moves))
        assert cuts >= ROUNDS  # each round cut the servers' connections
        # Two heartbeats and a sweep: what a cut could still set off has happened by now.
        await settle(match.black, 2 * settings.heartbeat_seconds + 2 * settings.sweep_seconds)
        await settle(match.white, settings.sweep_seconds)
        assert away_events(match.black, match.white) == []
        # Long past the grace period, neither may claim the other abandoned the game.
        one.clock.advance(settings.disconnect_grace_seconds + 1)
        await match.white.send(type="claim_win", game=match.id)
        refused = await match.white.expect("error")
        assert refused["code"] == "too_early"
        await play_retrying(match, next(moves))  # the game goes on


async def play_retrying(match: Match, move: str) -> None:
    """Play the next move; a cut may refuse it (a retryable error), and a client retries."""
    for _ in range(5):
        mover = match.mover()
        await mover.send(type="move", game=match.id, move=move, ply=match.ply)
        while True:
            reply = await mover.recv()
            if reply["type"] == "move" and reply.get("ply") == match.ply + 1:
                match.ply, match.turn = reply["ply"], reply["turn"]
                return
            if reply["type"] == "error":
                break
        await asyncio.sleep(0.3)
    raise AssertionError(f"{move} was refused five times")


async def test_a_connected_player_marked_away_is_set_right_and_cannot_be_claimed_against(
    postgres_url: str, redis_url: str
) -> None:
    """As a cut once made one: a connected player's game says they are away since long ago,
    and their presence row is gone. Their server sets it right by itself; and a claim made
    while the game still says so is refused, and ends the absence."""
    settings = production(postgres_url, redis_url)
    async with cluster(settings, 2) as (one, two), rated_game(one, two) as match:
        await match.play("11-15")
        black_id = match.black.user_id

        async def mark_black_away(*, forget_presence: bool) -> None:
            since = one.clock.time() - settings.disconnect_grace_seconds - 5
            async with one.app.state.db.session() as session:
                await session.execute(
                    update(Game)
                    .where(Game.id == match.id)
                    .values(black_away_since=as_datetime(since))
                )
                if forget_presence:
                    await session.execute(delete(Presence).where(Presence.user_id == black_id))
                await session.commit()

        await mark_black_away(forget_presence=True)
        # Black's server finds its connected player missing, and brings them back.
        one.clock.advance(settings.heartbeat_seconds)
        back = await match.white.expect("player_back", game=match.id)
        assert back["colour"] == "black"
        await mark_black_away(forget_presence=False)
        match.white.seen.clear()
        await match.white.send(type="claim_win", game=match.id)
        refused = await match.white.expect("error")
        assert (refused["code"], refused["message"]) == ("too_early", "your opponent is connected")
        # The absence ended (announced before the refusal).
        assert [(m["type"], m.get("colour")) for m in match.white.seen[:-1]] == [
            ("player_back", "black")
        ]
        await match.play("22-18")  # the game goes on
