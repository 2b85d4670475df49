"""The game-over banner says in words why a game ended, with each variant's own draw rules."""

from __future__ import annotations

import pytest
from playwright.sync_api import Browser

pytestmark = pytest.mark.e2e

CASES = [
    ("english", "1-0", "no_moves", "Black wins: White cannot move."),
    ("pool", "0-1", "no_moves", "White wins: Black cannot move."),
    ("english", "0-1", "resignation", "White wins: Black resigned."),
    ("english", "1-0", "timeout", "Black wins: White ran out of time."),
    ("english", "1/2-1/2", "agreement", "Draw: agreed by both players."),
    ("english", "1/2-1/2", "repetition", "Draw: the same position occurred five times."),
    ("pool", "1/2-1/2", "repetition", "Draw: the same position occurred three times."),
    (
        "english",
        "1/2-1/2",
        "move_limit",
        "Draw: 40 moves each without a capture or a man move.",
    ),
    ("pool", "1/2-1/2", "move_limit", "Draw: 30 moves each without a capture or a crowning."),
    (
        "pool",
        "1/2-1/2",
        "kings_endgame",
        "Draw: three kings against one king, the lone king held out.",
    ),
    ("english", "0-1", "abandoned", "White wins: Black left the game."),
    ("english", "*", "aborted", "Game aborted."),
    ("english", "1-0", "admin", "Black wins: ended by an administrator."),
    ("english", "*", "admin", "Game aborted by an administrator."),
]
WITH_REASON = [
    (
        "english",
        "0-1",
        "admin",
        "engine use",
        "White wins: ended by an administrator (engine use).",
    ),
    ("pool", "*", "admin", "maintenance", "Game aborted by an administrator (maintenance)."),
    ("english", "*", "aborted", "White aborted it", "Game aborted: White aborted it."),
]


def test_every_ending_is_said_in_words(browser: Browser, server_url: str) -> None:
    page = browser.new_page(base_url=server_url)
    page.goto("/")
    games = [
        {"variant": v, "result": r, "termination": t, "reason": None} for v, r, t, _ in CASES
    ] + [
        {"variant": v, "result": r, "termination": t, "reason": why}
        for v, r, t, why, _ in WITH_REASON
    ]
    said = page.evaluate(
        """async (games) => {
          const { describeOutcome } = await import("/js/notation.js");
          return games.map((game) => describeOutcome(game));
        }""",
        games,
    )
    assert said == [case[-1] for case in CASES] + [case[-1] for case in WITH_REASON]
    page.close()
