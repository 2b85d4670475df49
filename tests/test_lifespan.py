"""The lifespan parts: each says what it needs on `app.state` and what it serves, so the order
they are listed in does not matter, and a need nobody meets stops the start with its name."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager

import httpx
import pytest
from fastapi import FastAPI

from app import main
from app.config import Settings
from app.lifespan import LifespanError, LifespanPart, enter, in_order, lifespan_part


async def test_the_server_starts_with_its_parts_listed_in_reverse(
    settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(main, "LIFESPAN_PARTS", tuple(reversed(main.LIFESPAN_PARTS)))
    app = main.create_app(settings)
    transport = httpx.ASGITransport(app=app)
    async with (
        app.router.lifespan_context(app),
        httpx.AsyncClient(transport=transport, base_url="http://t") as client,
    ):
        assert (await client.get("/healthz")).status_code == 200
        assert app.state.beats.load().moves_last_minute == 0
        assert app.state.live.moves.last_minute()[0] == 0


def _part(name: str, needs: list[str], provides: list[str]) -> LifespanPart:
    @asynccontextmanager
    async def run(app: FastAPI) -> AsyncIterator[None]:
        for item in provides:
            setattr(app.state, item, name)
        yield

    run.__name__ = name
    return lifespan_part(needs=needs, provides=provides)(run)


def test_parts_come_after_those_they_need_and_otherwise_keep_their_order() -> None:
    db = _part("db", ["settings"], ["db"])
    live = _part("live", ["db", "broker"], ["live"])
    broker = _part("broker", [], ["broker"])
    logs = _part("logs", [], [])
    ordered = in_order([live, logs, broker, db], given=["settings"])
    assert [part.name for part in ordered] == ["logs", "broker", "db", "live"]


def test_a_need_nobody_serves_is_named_at_start_up() -> None:
    live = _part("live", ["db", "broker"], ["live"])
    with pytest.raises(LifespanError, match=r"live needs app\.state\.broker, app\.state\.db"):
        in_order([live])


def test_parts_that_need_each_other_are_refused() -> None:
    one = _part("one", ["b"], ["a"])
    two = _part("two", ["a"], ["b"])
    with pytest.raises(LifespanError, match="one, two need each other"):
        in_order([one, two])


async def test_a_part_that_does_not_serve_what_it_promised_stops_the_start() -> None:
    @lifespan_part(provides=["db"])
    @asynccontextmanager
    async def forgetful(app: FastAPI) -> AsyncIterator[None]:
        yield

    app = FastAPI()
    with pytest.raises(LifespanError, match=r"forgetful did not set app\.state\.db"):
        async with AsyncExitStack() as stack:
            await enter(stack, app, [forgetful])


async def test_what_the_app_state_already_holds_meets_a_need() -> None:
    app = FastAPI()
    app.state.settings = "given"
    async with AsyncExitStack() as stack:
        await enter(stack, app, [_part("db", ["settings"], ["db"])])
        assert app.state.db == "db"
