"""What lichess players would miss at the table (issue 32): quick chat phrases, board and piece
themes with enough contrast in both colour schemes, and browser notifications while the tab is
hidden (your move, a game's start, a challenge), asked for once and off by a switch."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import Browser, Page, expect

from tests.e2e.conftest import LiveServer
from tests.e2e.link import Player, member, start_game
from tests.e2e.test_feel import contrast

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(120)]


def test_a_quick_chat_phrase_is_sent_in_one_click(browser: Browser, server: LiveServer) -> None:
    person, table, _ = start_game(browser, server.url, server.url)
    page = person.page
    page.get_by_role("group", name="Quick chat").get_by_role("button", name="Good luck").click()
    expect(page.locator(".chat-log")).to_contain_text("bea: Good luck")
    assert table.white.expect("chat")["text"] == "Good luck"
    assert person.errors == []
    table.white.close()


THEME_COLOURS = """([board, pieces]) => {
  document.documentElement.dataset.board = board;
  document.documentElement.dataset.pieces = pieces;
  const probe = document.createElement("div");
  document.body.append(probe);
  const read = (name) => {
    probe.style.color = `var(${name})`;
    return getComputedStyle(probe).color.match(/\\d+/g).slice(0, 3).map(Number);
  };
  const colours = Object.fromEntries(
    ["--dark-square", "--black-piece", "--white-piece"].map((n) => [n, read(n)]),
  );
  probe.remove();
  return colours;
}"""


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_every_board_and_piece_theme_keeps_the_pieces_apart_from_the_squares(
    browser: Browser, server: LiveServer, scheme: str
) -> None:
    context = browser.new_context(base_url=server.url, color_scheme=scheme)  # type: ignore[arg-type]
    page = context.new_page()
    page.goto("/")
    boards = page.evaluate("async () => Object.keys((await import('/js/prefs.js')).BOARD_THEMES)")
    pieces = page.evaluate("async () => Object.keys((await import('/js/prefs.js')).PIECE_THEMES)")
    assert len(boards) >= 3 and len(pieces) >= 2
    for board in boards:
        for piece_theme in pieces:
            colours = page.evaluate(THEME_COLOURS, [board, piece_theme])
            square = tuple(colours["--dark-square"])
            for piece in ("--black-piece", "--white-piece"):
                ratio = contrast(square, tuple(colours[piece]))
                assert ratio >= 3.0, (scheme, board, piece_theme, piece, colours)
    context.close()


def test_the_chosen_themes_are_used_and_survive_a_reload(
    browser: Browser, server: LiveServer
) -> None:
    person, table, _ = start_game(browser, server.url, server.url)
    page = person.page
    dark_square = page.locator('.board [data-square="13"]')
    before = dark_square.evaluate("(el) => getComputedStyle(el).backgroundColor")
    page.get_by_label("Board theme").select_option("blue")
    page.get_by_label("Pieces theme").select_option("contrast")
    expect(dark_square).not_to_have_css("background-color", before)
    expect(page.locator('.board [data-square="1"] .piece')).to_have_css(
        "background-image", re.compile(r"rgb\(43, 43, 43\)")
    )
    page.reload()
    expect(page.get_by_label("Board theme")).to_have_value("blue")
    expect(page.get_by_label("Pieces theme")).to_have_value("contrast")
    expect(page.locator("html")).to_have_attribute("data-board", "blue")
    expect(page.locator("html")).to_have_attribute("data-pieces", "contrast")
    assert person.errors == []
    table.white.close()


# A Notification that records what is shown, granted, and a tab the test hides and shows.
FAKE_NOTIFICATIONS = """
(() => {
  window.__notes = [];
  window.__asked = 0;
  window.__hidden = false;
  window.Notification = class {
    constructor(title, options = {}) {
      window.__notes.push({ title, body: options.body || "" });
    }
    close() {}
    static get permission() {
      return window.__asked ? "granted" : "default";
    }
    static requestPermission() {
      window.__asked += 1;
      return Promise.resolve("granted");
    }
  };
  Object.defineProperty(document, "hidden", { get: () => window.__hidden });
  Object.defineProperty(document, "visibilityState", {
    get: () => (window.__hidden ? "hidden" : "visible"),
  });
})();
"""


def notes(page: Page) -> list[str]:
    return [f"{n['title']}: {n['body']}" for n in page.evaluate("window.__notes")]


def test_browser_notifications_while_the_tab_is_hidden_asked_once_and_off_by_a_switch(
    browser: Browser, server: LiveServer
) -> None:
    token = member(server.url, "nina")
    opponent = Player.connect(server.url, member(server.url, "omar"))
    context = browser.new_context(base_url=server.url)
    context.add_init_script(f"localStorage.setItem('checkers.token', '{token}');")
    context.add_init_script(FAKE_NOTIFICATIONS)
    page = context.new_page()
    page.goto("/")
    expect(page.locator(".conn")).to_have_text("Connected")
    bell = page.get_by_role("button", name="Browser notifications")
    expect(bell).to_have_attribute("aria-pressed", "true")
    # Asked once, at the first click.
    page.locator("h1").click()
    page.locator("h1").click()
    assert page.evaluate("window.__asked") == 1

    # A challenge while the tab is hidden.
    page.evaluate("window.__hidden = true")
    opponent.send(type="challenge", user="nina")
    page.wait_for_function("() => window.__notes.length >= 1")
    assert notes(page) == ["Challenge!: omar challenges you."]

    # A game starts, then it is her move.
    opponent.send(type="open", room="english-casual", colour="black", clock=None)
    table_id = opponent.expect("table")["table"]["id"]
    page.evaluate("window.__hidden = false")
    page.goto(f"/#/table/{table_id}?sit=1")
    game_id = opponent.expect("game_started")["game"]["id"]
    expect(page.locator(".player-bar.top .turn")).to_have_text("to move")
    page.evaluate("window.__hidden = true; window.__notes = []")
    opponent.send(type="move", game=game_id, move="11-15", ply=0)
    page.wait_for_function("() => window.__notes.length >= 1")
    assert notes(page) == [f"Your move: Table {table_id}: your opponent played 11-15."]

    # Switched off: nothing more, and the choice is kept.
    page.evaluate("window.__hidden = false")
    bell.click()
    expect(bell).to_have_attribute("aria-pressed", "false")
    page.evaluate("window.__hidden = true; window.__notes = []")
    page.locator(".board").wait_for()
    opponent.send(type="resign", game=game_id)
    opponent.expect("game_ended")
    opponent.send(type="challenge", user="nina")
    sent = opponent.expect("challenge_sent")["challenge"]["id"]
    # The new challenge reached the page (the first one may be listed again beside it, after a
    # reconnect: it still waits).
    expect(page.locator(f'.challenge-box[data-challenge="{sent}"]')).to_have_count(1)
    page.wait_for_timeout(300)
    assert notes(page) == []
    page.reload()
    expect(page.get_by_role("button", name="Browser notifications")).to_have_attribute(
        "aria-pressed", "false"
    )
    assert page.evaluate("window.__asked") == 0  # a fresh page: never asked again
    context.close()
    opponent.close()
