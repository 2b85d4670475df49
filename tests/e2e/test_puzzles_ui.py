"""The puzzle page in Chromium: a registered player solves a puzzle move by move (right at once,
the opponent's reply played, solved), sees their puzzle rating move, then misses the next one and
steps through its solution; a visitor without an account solves unrated and is asked to sign
up; a puzzle's address opens it."""

from __future__ import annotations

import json
import re
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page, expect

from app.rules import Game
from tests.e2e.conftest import LiveServer, running_server
from tests.e2e.link import click_move, member, visit
from tests.e2e.people import arrive

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(120)]


@pytest.fixture
def server(tmp_path: Path) -> Iterator[LiveServer]:
    with running_server(tmp_path) as live_server:
        yield live_server


def stored(server: LiveServer, query: str, *args: object) -> list[tuple[object, ...]]:
    path = server.database_url.split("///", 1)[1]
    with sqlite3.connect(path) as db:
        return db.execute(query, args).fetchall()


def solution(server: LiveServer, puzzle_id: int) -> list[str]:
    [(moves,)] = stored(server, "SELECT moves FROM puzzles WHERE id = ?", puzzle_id)
    assert isinstance(moves, str)
    return list(json.loads(moves))


def play(page: Page, move: str) -> None:
    """Click the move once its piece can be moved (not while the reply still slides in)."""
    start = re.split(r"[-x]", move)[0]
    expect(page.locator(f'.board [data-square="{start}"]')).to_have_class(
        re.compile(r"\bmovable\b")
    )
    click_move(page, move)


def shown_puzzle(page: Page) -> int:
    expect(page).to_have_url(re.compile(r"#/puzzles/\d+$"))
    return int(page.url.rsplit("/", 1)[1])


def test_a_player_solves_a_puzzle_then_misses_one(browser: Browser, server: LiveServer) -> None:
    # A puzzle of two moves of the solver: the reply comes between them.
    rows = stored(server, "SELECT id, moves FROM puzzles WHERE variant = 'english' ORDER BY id")
    two = next(int(str(i)) for i, moves in rows if len(json.loads(str(moves))) == 3)
    line = solution(server, two)
    person = visit(browser, server.url, member(server.url, "pat"), f"/#/puzzles/{two}")
    page = person.page
    expect(page.locator(".puzzle-mine")).to_have_text("Your puzzle rating: 1500? · 0 solved of 0")
    prompt = page.locator(".puzzle-prompt")
    expect(prompt).to_have_text(re.compile(r"^Your turn: find the best move for (Black|White)\.$"))
    expect(
        page.get_by_text(re.compile(rf"^Puzzle {two} · English draughts · rated \d+"))
    ).to_be_visible()
    play(page, line[0])
    expect(prompt).to_have_text(re.compile("^Right! Keep going"))
    # The opponent's reply is played on the board, then it is the player's move again.
    expect(page.locator(".move-list [data-ply]")).to_have_count(2)
    play(page, line[2])
    expect(prompt).to_have_text("Solved! That was the one winning line.")
    expect(
        page.get_by_text(re.compile(r"^Your puzzle rating: 1[5-9]\d\d \(\+\d+\)$"))
    ).to_be_visible()

    # The next one: a wrong move ends it and shows the solution, stepped through.
    page.get_by_role("button", name="Next puzzle").click()
    expect(prompt).to_have_text(re.compile("^Your turn"))
    other = shown_puzzle(page)
    assert other != two
    right = solution(server, other)
    [(fen,)] = stored(server, "SELECT fen FROM puzzles WHERE id = ?", other)
    game = Game("english", str(fen))
    wrong = next(
        m
        for m in game.legal_move_texts()
        if game.position.parse_move(m) != game.position.parse_move(right[0])
    )
    play(page, wrong)
    expect(prompt).to_have_text(
        re.compile(rf"^Wrong: {re.escape(wrong)} is not it\. The solution: ")
    )
    expect(page.get_by_text(re.compile(r"^Your puzzle rating: \d+ \(-\d+\)$"))).to_be_visible()
    expect(page.locator(".move-list [data-ply]")).to_have_count(len(right))
    page.get_by_role("button", name="‹ Start").click()
    expect(page.locator(".move-list .move.current")).to_have_count(0)
    page.get_by_role("button", name="Forward ›").click()
    expect(page.locator('.move-list [data-ply="1"]')).to_have_attribute("aria-current", "step")
    assert person.errors == []
    person.context.close()


def test_a_visitor_solves_unrated(browser: Browser, server: LiveServer) -> None:
    visitor = arrive(browser, server.url)
    page = visitor.page
    page.get_by_role("link", name="Puzzles").click()
    expect(page.get_by_role("heading", name="Puzzles")).to_be_visible()
    puzzle = shown_puzzle(page)
    line = solution(server, puzzle)
    play(page, line[0])
    prompt = page.locator(".puzzle-prompt")
    expect(prompt).to_have_text(re.compile("^(Right! Keep going|Solved!)"))
    if len(line) == 1:
        expect(page.get_by_text("Sign up to keep a puzzle rating.")).to_be_visible()
    # Pool puzzles, of a theme.
    choose = page.get_by_role("form", name="Choose puzzles")
    choose.get_by_label("Variant").select_option("pool")
    choose.get_by_role("button", name="Show").click()
    expect(page.get_by_text(re.compile(r"^Puzzle \d+ · American pool checkers"))).to_be_visible()
    assert stored(server, "SELECT count(*) FROM puzzle_rounds") == [(0,)]
    assert visitor.errors == []
    visitor.context.close()
