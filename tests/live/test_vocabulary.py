"""Statuses, results and terminations are enums whose JSON is the plain text clients know."""

from __future__ import annotations

import json

from app.live import events
from app.rules import Result, Termination
from app.status import GameStatus


def test_game_ended_event_is_the_same_json_as_with_plain_strings() -> None:
    as_enums = events.game_ended(3, 7, Result.WHITE_WINS, Termination.TIMEOUT, None)
    as_text = events.game_ended(3, 7, "0-1", "timeout", None)
    assert json.dumps(as_enums) == json.dumps(as_text)
    assert json.loads(json.dumps(as_enums))["winner"] == "white"
    aborted = events.game_ended(3, 7, Result.UNFINISHED, Termination.ABORTED, None)
    assert json.loads(json.dumps(aborted))["winner"] is None


def test_a_game_without_a_result_is_aborted() -> None:
    assert GameStatus.ended_with(Result.UNFINISHED) == "aborted"
    assert GameStatus.ended_with(Result.DRAW) == "finished"
