"""The tournament director under abuse and faults (issue 45), in-process (`server`: the app in
this event loop, on a FakeClock):

- a Swiss round is paired in a thread, with the tournament's row free meanwhile, and a server
  process busy for a while (beating no more, but still holding its liveness lock) is not taken
  for gone: its players are not marked away;
- a tournament nobody joins does not run for hours, idle tournaments are not stepped every
  second, and empty ones do not push a real one off the running list;
- a tournament that cannot start is tried again after growing delays, then cancelled with its
  reason, its creator and players told;
- a tournament's settings are refused, not stored or coerced, when their text holds a control
  character or their types are wrong."""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Awaitable, Callable
from datetime import timedelta
from typing import Any

import httpx
import pytest
from sqlalchemy import select, update

from app.db.models import Room, User
from app.live import heartbeat_store as heartbeats
from app.live.liveplay import LivePlay
from app.tables import presence, seating
from app.tables import presence_store as stored_presence
from app.tournaments import director, swiss
from app.tournaments import store as stored
from tests.support.admin_client import admin_client, ok
from tests.support.server import Served
from tests.support.ws import member_token

WAIT_SECONDS = 10.0
CLUB = {"name": "Club night", "clock": {"base": 60, "increment": 0}}


def live_of(server: Served) -> LivePlay:
    live: LivePlay = server.app.state.live
    return live


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


async def until(check: Callable[[], Awaitable[Any]], what: str) -> Any:
    """`check()`'s first true answer (the director steps every second)."""
    give_up = asyncio.get_running_loop().time() + WAIT_SECONDS
    while not (found := await check()):
        assert asyncio.get_running_loop().time() < give_up, what
        await asyncio.sleep(0.05)
    return found


async def shown(http: httpx.AsyncClient, tournament_id: int) -> dict[str, Any]:
    found: dict[str, Any] = ok(await http.get(f"/api/tournaments/{tournament_id}"))
    return found


async def entered(http: httpx.AsyncClient, tokens: list[str], **fields: Any) -> dict[str, Any]:
    """A tournament created by the first of `tokens`, joined by all, then moved to start now."""
    body = CLUB | fields
    made = ok(
        await http.post(
            "/api/tournaments", json=body | {"starts_in": 600}, headers=bearer(tokens[0])
        )
    )
    for token in tokens:
        ok(await http.post(f"/api/tournaments/{made['id']}/join", headers=bearer(token)))
    path = f"/api/tournaments/{made['id']}"
    ok(await http.put(path, json=body | {"starts_in": 0}, headers=bearer(tokens[0])))
    return dict(made)


async def inbox(http: httpx.AsyncClient, token: str) -> list[dict[str, Any]]:
    notices: list[dict[str, Any]] = ok(await http.get("/api/notifications", headers=bearer(token)))[
        "data"
    ]
    return notices


# --- a large Swiss, and a process busy with it ------------------------------------------------


async def test_a_swiss_round_is_paired_in_a_thread_while_the_tournament_is_free(
    server: Served, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The pairing of a round (a second or two of CPU for a large field) runs off the event
    loop, and outside the transaction holding the tournament: another process could lock it."""
    live = live_of(server)
    loop = asyncio.get_running_loop()
    seen: list[tuple[bool, bool]] = []  # (on the event loop's thread, the row free)
    pair_round = swiss.pair_round

    async def free(tournament_id: int) -> bool:
        async with live.db.session() as session:
            return await stored.lock(session, tournament_id, wait=False) is not None

    def watched(players: Any, **options: Any) -> swiss.SwissRound:
        on_loop = threading.current_thread() is threading.main_thread()
        unlocked = not on_loop and asyncio.run_coroutine_threadsafe(free(made["id"]), loop).result(
            WAIT_SECONDS
        )
        seen.append((on_loop, unlocked))
        return pair_round(players, **options)

    monkeypatch.setattr(swiss, "pair_round", watched)
    tokens = [await member_token(server.url, f"swiss{n}") for n in range(4)]
    async with server.http() as http:
        made = await entered(http, tokens, kind="swiss", rounds=2)
        await until(lambda: _round_is(http, made["id"], 1), "round 1 paired and its games started")
    assert seen and all(not on_loop and unlocked for on_loop, unlocked in seen), seen


async def _round_is(http: httpx.AsyncClient, tournament_id: int, number: int) -> bool:
    tournament = await shown(http, tournament_id)
    return bool(tournament["round"] == number and len(tournament["playing"]) == 2)


async def test_the_players_of_a_busy_process_are_not_taken_for_gone(
    server: Served, db_url: str
) -> None:
    """A process whose event loop is held up (it beats no more) but which still holds its
    liveness lock is alive: the other processes' sweep leaves its players present. One that
    holds no lock and beats no more is gone, and its players are taken offline."""
    if not db_url.startswith("postgresql"):
        pytest.skip("SQLite: a process's liveness shows only in its beats (no lock per process)")
    live = live_of(server)
    busy, crashed = "b1b1b1b1b1b1b1b1", "c2c2c2c2c2c2c2c2"
    ids = []
    for name in ("busyplayer", "crashedplayer"):
        await member_token(server.url, name)
        async with live.db.session() as session:
            ids.append(await session.scalar(select(User.id).where(User.name == name)))
    silent_since = live.clock.now() - timedelta(minutes=2)  # far past the beats' freshness
    lock_holder = await live.db.engine.connect()
    try:
        lock_holder = await lock_holder.execution_options(isolation_level="AUTOCOMMIT")
        assert await heartbeats.take_lock(lock_holder, busy)
        async with live.db.engine.begin() as conn:
            for instance in (busy, crashed):
                await heartbeats.write(conn, instance, silent_since)
        async with live.db.session() as session:
            for instance, user_id in zip((busy, crashed), ids, strict=True):
                await stored_presence.add(session, instance, user_id, silent_since)
            await session.commit()
        await presence.sweep(live)
        async with live.db.session() as session:
            assert await stored_presence.users_at(session, busy) == {ids[0]}
            assert await stored_presence.users_at(session, crashed) == set()
    finally:
        await lock_holder.close()


# --- empty and idle tournaments ---------------------------------------------------------------


async def test_an_arena_nobody_joins_is_cancelled_and_its_creator_told(server: Served) -> None:
    token = await member_token(server.url, "lonely")
    async with server.http() as http:
        made = ok(
            await http.post(
                "/api/tournaments",
                json=CLUB | {"kind": "arena", "minutes": 24 * 60},
                headers=bearer(token),
            )
        )

        async def started() -> bool:
            return bool((await shown(http, made["id"]))["status"] == "started")

        await until(started, "the arena started")
        server.clock.advance(director.EMPTY.total_seconds())

        async def cancelled() -> dict[str, Any] | None:
            tournament = await shown(http, made["id"])
            return tournament if tournament["status"] == "cancelled" else None

        tournament = await until(cancelled, "the empty arena cancelled")
        assert "fewer than two players" in tournament["cancel_reason"]
        notices = await inbox(http, token)
        assert [
            n["data"]["tournament"] for n in notices if n["kind"] == "tournament_cancelled"
        ] == [made["id"]]


async def test_idle_tournaments_are_not_stepped_every_second(
    server: Served, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An arena in which nobody can be paired waits for something to happen (a join, its end,
    the moment an empty one is cancelled): the director leaves it alone until then."""
    stepped: list[int] = []
    step = director.step

    async def counted(live: LivePlay, tournament_id: int, *args: Any) -> bool:
        stepped.append(tournament_id)
        return await step(live, tournament_id, *args)

    monkeypatch.setattr(director, "step", counted)
    token = await member_token(server.url, "idle")
    async with server.http() as http:
        ids = [
            ok(
                await http.post(
                    "/api/tournaments",
                    json=CLUB | {"kind": "arena", "minutes": 24 * 60},
                    headers=bearer(token),
                )
            )["id"]
            for _ in range(3)
        ]

        async def all_started() -> bool:
            return all([(await shown(http, i))["status"] == "started" for i in ids])

        await until(all_started, "the arenas started")
        await asyncio.sleep(director.DIRECTOR_SECONDS)
        stepped.clear()
        await asyncio.sleep(3 * director.DIRECTOR_SECONDS)
        assert set(ids).isdisjoint(stepped)
        joiner = await member_token(server.url, "joiner")
        ok(await http.post(f"/api/tournaments/{ids[0]}/join", headers=bearer(joiner)))

        async def woken() -> bool:
            return ids[0] in stepped

        await until(woken, "the arena stepped after a join")
        assert set(ids[1:]).isdisjoint(stepped)


async def test_empty_tournaments_do_not_push_a_real_one_off_the_running_list(
    server: Served,
) -> None:
    async with admin_client(server.app, server.url) as admin:
        empty = [
            ok(await admin.post("/api/tournaments", json=CLUB | {"kind": "arena", "minutes": 600}))
            for _ in range(60)
        ]
        tokens = [await member_token(server.url, f"real{n}") for n in range(2)]
        real = await entered(admin, tokens, kind="arena", minutes=600)

        async def running() -> list[int] | None:
            listed = [t["id"] for t in ok(await admin.get("/api/tournaments"))["running"]]
            return listed if len(listed) >= 50 and real["id"] in listed else None

        listed = await until(running, "the real arena among the running ones")
    assert listed[0] == real["id"]  # the most players first
    assert len(empty) == 60


# --- a tournament that cannot start ----------------------------------------------------------


async def test_a_tournament_that_cannot_start_backs_off_then_is_cancelled_and_its_players_told(
    server: Served, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """Its variant's rooms closed by an administrator, a due Swiss cannot seat its games: it is
    tried again after growing delays (one log line each, not a traceback a second), then
    cancelled with the reason, and its creator and players are told."""
    live = live_of(server)
    attempts: list[float] = []
    seat_two = seating.seat_two

    async def counted(*args: Any, **kwargs: Any) -> Any:
        attempts.append(live.clock.time())
        return await seat_two(*args, **kwargs)

    # A try counts once its failure is stored (its next try's time set): the clock is moved on
    # only then, or a failure stored after the move would be given the moved time.
    failed: list[float] = []
    record_failure = director._failed

    async def recorded(*args: Any, **kwargs: Any) -> None:
        await record_failure(*args, **kwargs)
        failed.append(live.clock.time())

    monkeypatch.setattr(seating, "seat_two", counted)
    monkeypatch.setattr(director, "_failed", recorded)
    caplog.set_level(logging.INFO, logger=director.__name__)
    async with live.db.session() as session:
        await session.execute(update(Room).values(is_open=False))
        await session.commit()
    tokens = [await member_token(server.url, f"stuck{n}") for n in range(4)]
    async with server.http() as http:
        made = await entered(http, tokens, kind="swiss", rounds=3)

        async def tried() -> bool:
            return bool(failed)

        await until(tried, "a first try")
        await asyncio.sleep(3 * director.DIRECTOR_SECONDS)
        assert len(attempts) == 1, "tried again at once, not after a delay"

        async def over() -> dict[str, Any] | None:
            tournament = await shown(http, made["id"])
            return tournament if tournament["status"] == "cancelled" else None

        cancelled = None
        for _ in range(director.MAX_FAILURES + 2):
            tried_before = len(failed)
            server.clock.advance(director.RETRY_MAX.total_seconds())

            async def tried_again(before: int = tried_before) -> bool:
                return len(failed) > before or bool(await over())

            await until(tried_again, "another try after the delay")
            if cancelled := await over():
                break
        assert cancelled is not None, "still retried"
        assert len(attempts) == director.MAX_FAILURES
        gaps = [b - a for a, b in zip(attempts, attempts[1:], strict=False)]
        assert gaps[0] >= director.RETRY_FIRST.total_seconds() - 1
        assert "no room is open" in cancelled["cancel_reason"]
        for token in tokens:
            kinds = [n["kind"] for n in await inbox(http, token)]
            assert kinds.count("tournament_cancelled") == 1, kinds
    records = [r for r in caplog.records if r.name == director.__name__]
    assert len(records) <= director.MAX_FAILURES + 1
    assert sum(1 for r in records if r.exc_info) <= 1


# --- settings' text and types ----------------------------------------------------------------


@pytest.mark.parametrize("name", ["Cup\x00", "Cup\nnight", "\x7fCup"])
async def test_a_tournament_name_with_a_control_character_is_refused(
    server: Served, name: str
) -> None:
    token = await member_token(server.url, "namer")
    async with server.http() as http:
        body = CLUB | {"kind": "arena", "minutes": 10, "name": name}
        refused = await http.post("/api/tournaments", json=body, headers=bearer(token))
        assert refused.status_code == 422, refused.text
        assert refused.json()["error"] == "bad_request"
        assert ok(await http.get("/api/tournaments"))["upcoming"] == []


@pytest.mark.parametrize(
    "wrong",
    [
        {"starts_in": True},
        {"starts_in": "60"},
        {"starts_in": 60.0},
        {"minutes": "10"},
        {"rated": 1},
        {"rated": "true"},
        {"max_players": 4.0},
        {"double": 0},
        {"draw_after_move": 30.0},
        {"every_minutes": "60"},
    ],
)
async def test_tournament_settings_take_no_value_of_another_type(
    server: Served, wrong: dict[str, Any]
) -> None:
    token = await member_token(server.url, "typist")
    async with server.http() as http:
        body = CLUB | {"kind": "arena", "minutes": 10} | wrong
        refused = await http.post("/api/tournaments", json=body, headers=bearer(token))
        assert refused.status_code == 422, refused.text
        assert refused.json()["error"] == "bad_request"
