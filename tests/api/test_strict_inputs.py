"""Booleans and numbers in REST bodies are strict (docs/security.md, issue 45): in JSON a
boolean is `true` or `false` and a number is a number, never text that looks like one. The
lichess-shaped routes also take form-encoded bodies, whose fields are text by nature: there a
boolean is exactly `true` or `false` (as lichess reads it) and a number plain decimal digits, so
lichess's clients' forms work (`days=3`, `clock.limit=180`) and `rated=yes` does not. Refusals
are the route's usual: 400 `bad_request` on a lichess-shaped route, 422 elsewhere."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from app.config import Settings
from tests.conftest import make_settings
from tests.support.server import Served
from tests.support.ws import member_token

FORM = {"Content-Type": "application/x-www-form-urlencoded"}
TOURNAMENT = {
    "kind": "arena",
    "name": "Strict",
    "minutes": 30,
    "clock": {"base": 180, "increment": 2},
}


@pytest.fixture
def settings(db_url: str) -> Settings:
    return make_settings(database_url=db_url, challenges_per_pair=1000)


async def challenge(http: httpx.AsyncClient, **body: Any) -> httpx.Response:
    """Challenge lena with a JSON body (or `form=` text); a challenge made is cancelled again,
    so that they never pile up."""
    form = body.pop("form", None)
    if form is not None:
        answer = await http.post("/api/challenge/lena", content=form, headers=FORM)
    else:
        answer = await http.post("/api/challenge/lena", json=body)
    if answer.status_code == 200:
        await http.post(f"/api/challenge/{answer.json()['id']}/cancel")
    return answer


def refused(answer: httpx.Response, status: int, field: str) -> None:
    assert (answer.status_code, answer.json()["error"]) == (status, "bad_request"), answer.text
    assert field in answer.json()["message"], answer.text


async def test_json_booleans_are_true_or_false(server: Served) -> None:
    await member_token(server.url, "lena")
    token = await member_token(server.url, "kurt")
    async with server.http(headers={"Authorization": f"Bearer {token}"}) as http:
        for wrong in ("true", "yes", 1, 0, "1"):
            refused(await challenge(http, rated=wrong), 400, "rated")
            body = TOURNAMENT | {"rated": wrong}
            refused(await http.post("/api/tournaments", json=body), 422, "rated")
        double = await http.post("/api/tournaments", json=TOURNAMENT | {"double": "yes"})
        refused(double, 422, "double")
        refused(await challenge(http, days="3"), 400, "days")
        refused(await challenge(http, **{"clock.limit": "180", "clock.increment": 2}), 400, "clock")
        made = await challenge(http, rated=True, **{"clock.limit": 180, "clock.increment": 2})
        assert made.status_code == 200, made.text
        assert made.json()["rated"] is True and made.json()["timeControl"]["show"] == "3+2"
        assert (await challenge(http, rated=False, days=3)).json()["rated"] is False
        created = await http.post("/api/tournaments", json=TOURNAMENT | {"rated": True})
        assert created.status_code == 201, created.text


async def test_form_fields_are_read_as_lichess_reads_them(server: Served) -> None:
    await member_token(server.url, "lena")
    token = await member_token(server.url, "kurt")
    async with server.http(headers={"Authorization": f"Bearer {token}"}) as http:
        for wrong in ("yes", "True", "1", "on", ""):
            refused(await challenge(http, form=f"rated={wrong}"), 400, "rated")
        for wrong in ("4", "three", "3.0", "-3"):
            refused(await challenge(http, form=f"days={wrong}"), 400, "days")
        refused(await challenge(http, form="clock.limit=3m&clock.increment=2"), 400, "clock")
        rated = await challenge(http, form="rated=true&clock.limit=180&clock.increment=2")
        assert rated.status_code == 200, rated.text
        assert rated.json()["rated"] is True
        assert rated.json()["clock"] == {"base": 180, "increment": 2}
        # Days per move, form-encoded as lichess's clients send them.
        days = await challenge(http, form="rated=false&days=3&color=white")
        assert days.status_code == 200, days.text
        shown = days.json()
        assert (shown["rated"], shown["colour"]) == (False, "white")
        control = shown["timeControl"]
        assert (control["type"], control["daysPerTurn"]) == ("correspondence", 3)
