"""The computer analysis on a game's replay page: a player asks for it, sees it progress, then
the evaluation graph, each side's accuracy and counts, the blunder marked ?? in the move list,
the evaluation of the move on the board with the best move instead, and that move drawn as an
arrow on the board; a visitor without an account sees it too, and cannot ask for one."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, expect

from tests.e2e.conftest import LiveServer, running_server
from tests.e2e.link import Player, member, visit
from tests.e2e.people import arrive

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(120)]

MOVES = ["11-15", "23-19", "8-11", "22-17", "12-16", "19x12"]  # 12-16 gives a man away


@pytest.fixture
def server(tmp_path: Path) -> Iterator[LiveServer]:
    # At the server's priority: the idle class can wait minutes on a machine busy with tests.
    with running_server(tmp_path, analysis_nodes=2_000, analysis_idle=False) as live_server:
        yield live_server


def played(server_url: str, black_token: str) -> int:
    """A finished game: `black_token`'s account (Black) against another, MOVES, then White
    resigns."""
    black = Player.connect(server_url, black_token)
    white = Player.connect(server_url, member(server_url, "wren"))
    black.send(type="open", room="english-casual", colour="black", clock=None)
    table = black.expect("table")["table"]["id"]
    white.send(type="sit", table=table)
    game = black.expect("game_started")["game"]["id"]
    for ply, move in enumerate(MOVES):
        (black if ply % 2 == 0 else white).send(type="move", game=game, move=move, ply=ply)
        black.expect("move", ply=ply + 1)
    white.send(type="resign", game=game)
    black.expect("game_ended", game=game)
    black.close()
    white.close()
    return game


def test_a_player_asks_for_the_analysis_and_reads_it_on_the_replay(
    browser: Browser, server: LiveServer
) -> None:
    token = member(server.url, "bram")
    game = played(server.url, token)
    person = visit(browser, server.url, token, f"/#/games/{game}")
    page = person.page
    panel = page.get_by_role("region", name="Computer analysis")
    panel.get_by_role("button", name="Request analysis").click()
    graph = panel.get_by_role("img", name=re.compile("^Evaluation graph"))
    expect(graph).to_be_visible()
    expect(panel.locator(".eval-mark.blunder")).to_have_count(1)
    expect(
        panel.get_by_text(re.compile(r"^Black: accuracy \d+(\.\d)? · 0 inaccuracies"))
    ).to_be_visible()
    expect(panel.get_by_text(re.compile(r"1 blunders$"))).to_be_visible()
    # The move list marks the blunder; the move on the board has its words.
    blunder = page.locator('.move-list [data-ply="5"]')
    expect(blunder.locator(".move-mark")).to_have_text("??")
    expect(blunder).to_have_attribute("aria-label", re.compile("^move 5: 12-16, blunder"))
    blunder.click()
    expect(panel.locator(".analysis-here")).to_contain_text("After 12-16: -")
    expect(panel.locator(".analysis-here")).to_contain_text("?? blunder (best was ")
    # At the position before it, the best move is drawn as an arrow on the board.
    page.locator('.move-list [data-ply="4"]').click()
    board = page.locator(".board")
    expect(board).not_to_have_attribute("data-arrow", "")
    best = board.get_attribute("data-arrow")
    expect(panel.locator(".best-line")).to_contain_text(f"Best here: {best}")
    expect(page.locator(".board-arrow polyline")).to_have_count(1)
    # Clicking the graph at its start goes to the first position.
    box = graph.bounding_box()
    assert box is not None
    graph.click(position={"x": 1, "y": box["height"] / 2})
    expect(page.get_by_text("Move 0 of 6")).to_be_visible()
    assert person.errors == []

    # A visitor reads it too, and is told to sign in to ask for one.
    visitor = arrive(browser, server.url)
    visitor.page.goto(f"/#/games/{game}")
    seen = visitor.page.get_by_role("region", name="Computer analysis")
    expect(seen.get_by_role("img", name=re.compile("^Evaluation graph"))).to_be_visible()
    expect(visitor.page.locator('.move-list [data-ply="5"] .move-mark')).to_have_text("??")
    assert visitor.errors == []
    for each in (person, visitor):
        each.context.close()


def test_the_analysis_board_plays_both_sides_and_shows_the_engine_deepening(
    browser: Browser, server: LiveServer
) -> None:
    visitor = arrive(browser, server.url)
    page = visitor.page
    page.get_by_role("link", name="Analysis").click()
    expect(page.get_by_role("heading", name="Analysis board")).to_be_visible()
    expect(page.get_by_text("English draughts · Black to move")).to_be_visible()
    # Each move made once the last one shows, as a player sees the board answer.
    for played, (start, end) in enumerate(((11, 15), (23, 19), (8, 11), (22, 17), (12, 16))):
        page.locator(f'.board [data-square="{start}"]').click()
        page.locator(f'.board [data-square="{end}"]').click()
        expect(page.locator(".move-list .move")).to_have_count(played + 1)
    # The address holds the moves: the position can be shared.
    expect(page).to_have_url(re.compile(r"#/analysis\?variant=english&moves=11-15%2C23-19"))
    page.get_by_role("button", name="Start engine").click()
    lines = page.get_by_role("list", name="Engine lines").locator("li")
    expect(lines.first).to_contain_text(re.compile(r"^depth \d+ -\d+ 19x12"))
    # The line deepens: the list shows the deepest first (the last few depths of up to 20, which
    # the engine may reach in well under a second).
    expect(lines.first).to_have_attribute("data-depth", re.compile(r"^([3-9]|1\d|20)$"))
    shown = [int(d) for d in lines.evaluate_all("rows => rows.map(r => r.dataset.depth)")]
    assert shown == sorted(shown, reverse=True) and len(shown) >= 3, shown
    expect(page.locator(".board")).to_have_attribute("data-arrow", "19x12")
    page.get_by_role("button", name="Stop engine").click()
    expect(page.locator(".board")).to_have_attribute("data-arrow", "")
    page.get_by_role("button", name="Take back the last move").click()
    expect(page.locator(".move-list .move")).to_have_count(4)
    # A position set up by its FEN, in pool.
    setup = page.get_by_role("form", name="Set up a position")
    setup.get_by_label("Variant").select_option("pool")
    setup.get_by_label("Start position (FEN)").fill("W:WK10:B1,K30")
    setup.get_by_role("button", name="Set up").click()
    expect(page.get_by_text("American pool checkers · White to move")).to_be_visible()
    expect(page.locator('.board [data-square="10"]')).to_have_attribute("data-piece", "white-king")
    assert visitor.errors == []
    visitor.context.close()


def test_the_replay_opens_its_position_on_the_analysis_board(
    browser: Browser, server: LiveServer
) -> None:
    token = member(server.url, "bram")
    game = played(server.url, token)
    person = visit(browser, server.url, token, f"/#/games/{game}")
    page = person.page
    page.locator('.move-list [data-ply="2"]').click()
    page.get_by_role("link", name="Analysis board").click()
    expect(page.get_by_role("heading", name="Analysis board")).to_be_visible()
    expect(page.get_by_text("English draughts · Black to move")).to_be_visible()
    expect(page.locator('.board [data-square="15"]')).to_have_attribute("data-piece", "black-man")
    expect(page.locator('.board [data-square="19"]')).to_have_attribute("data-piece", "white-man")
    assert person.errors == []
    person.context.close()


def test_a_position_is_set_up_by_hand(browser: Browser, server: LiveServer) -> None:
    visitor = arrive(browser, server.url)
    page = visitor.page
    page.goto("/#/analysis")
    expect(page.get_by_text("English draughts · Black to move")).to_be_visible()
    page.get_by_role("button", name="Set up by hand").click()
    page.get_by_role("button", name="Clear board").click()
    board = page.locator(".board")
    expect(board.locator('[data-piece="black-man"]')).to_have_count(0)
    page.get_by_label("White king").check()
    board.locator('[data-square="10"]').click()
    page.get_by_label("Black man").check()
    for number in (14, 15, 30):  # a man on its crown row (30) is set as a king
        board.locator(f'[data-square="{number}"]').click()
    board.locator('[data-square="15"]').click()  # the same piece again: the square emptied
    page.get_by_label("Side to move").select_option("white")
    page.get_by_role("button", name="Done").click()
    expect(page.get_by_text("English draughts · White to move")).to_be_visible()
    expect(page).to_have_url(re.compile(r"fen=W%3AWK10%3AB14%2CK30"))
    expect(board.locator('[data-square="10"]')).to_have_attribute("data-piece", "white-king")
    expect(board.locator('[data-square="30"]')).to_have_attribute("data-piece", "black-king")
    expect(board.locator('[data-square="15"]')).to_have_attribute("data-piece", "")
    # The position is played from: the white king takes.
    board.locator('[data-square="10"]').click()
    board.locator('[data-square="17"]').click()
    expect(page.locator('.move-list [data-ply="1"]')).to_contain_text("10x17")
    assert visitor.errors == []
    visitor.context.close()
