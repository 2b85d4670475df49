"""The OpenAPI components follow one naming scheme: responses are `*Public`, one `Clock`."""

from __future__ import annotations

from fastapi import FastAPI

from app.realtime import protocol


def test_response_schemas_are_named_public_and_the_clock_is_one(app: FastAPI) -> None:
    names = set(app.openapi()["components"]["schemas"])
    assert not {n for n in names if n.endswith("Out")}
    assert {"PlayerPublic", "GamePublic", "AdminRoomPublic", "Clock"} <= names
    assert not {n for n in names if "Clock" in n} - {"Clock"}


def test_the_open_message_takes_the_same_clock_as_the_admin_api() -> None:
    message = protocol.parse('{"type": "open", "room": "x", "clock": {"base": 300}}')
    assert isinstance(message, protocol.Open) and message.clock is not None
    assert (message.clock.base, message.clock.increment) == (300, 0)
    message = protocol.parse('{"type": "open", "room": "x", "clock": {"days": 3}}')
    assert isinstance(message, protocol.Open) and message.clock is not None
    assert message.clock.seconds() == (3 * 86_400, 0)  # correspondence: days per move
    for clock in (
        '{"base": 0}',
        '{"base": 10801}',
        '{"base": 60, "increment": 181}',
        "{}",
        '{"days": 4}',
        '{"days": 3, "increment": 2}',
        '{"days": 3, "base": 300}',
    ):
        try:
            protocol.parse(f'{{"type": "open", "room": "x", "clock": {clock}}}')
        except protocol.BadMessage as exc:
            assert str(exc).startswith("clock"), exc
        else:
            raise AssertionError(f"{clock} was accepted")
