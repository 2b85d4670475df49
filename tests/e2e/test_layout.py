"""The table page in the window: once a game has started the whole board, both players' bars
(names, clocks, whose move it is) and the game buttons are in view without scrolling, at the
usual laptop sizes and on a phone; nothing scrolls the page by itself while the game goes on; the
player's own side is at the bottom from the moment they sit down."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page, ViewportSize, expect

from app.rules import Game, get_variant
from tests.e2e.people import arrive, expect_moves, open_table, register, square

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(300)]

SIZES: list[ViewportSize] = [
    {"width": 1280, "height": 800},
    {"width": 1366, "height": 768},
    {"width": 390, "height": 844},
]
PHONE = SIZES[2]


def boxes_out_of_view(page: Page, selectors: list[str]) -> list[str]:
    """The selectors (each must match something visible) whose box is not wholly in the window."""
    found: list[str] = page.evaluate(
        """(selectors) => {
          const out = [];
          const width = window.innerWidth;
          const height = window.innerHeight;
          for (const selector of selectors) {
            const elements = [...document.querySelectorAll(selector)].filter(
              (el) => el.getClientRects().length > 0,
            );
            if (!elements.length) out.push(`${selector}: not shown`);
            for (const el of elements) {
              const box = el.getBoundingClientRect();
              if (box.top < 0 || box.left < 0 || box.bottom > height || box.right > width)
                out.push(`${selector}: ${JSON.stringify(box)}`);
            }
          }
          return out;
        }""",
        selectors,
    )
    return found


IN_VIEW = [
    ".board",
    ".player-bar.top",
    ".player-bar.bottom",
    ".player-bar .name",
    '[aria-label="Black clock"]',
    '[aria-label="White clock"]',
    ".player-bar .turn",
    ".game-actions button",
]


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s['width']}x{s['height']}")
def test_board_bars_and_buttons_fit_the_window(
    browser: Browser, server_url: str, size: ViewportSize, tmp_path: Path
) -> None:
    host = arrive(browser, server_url, viewport=size)
    guest = arrive(browser, server_url)
    register(host.page, "hana")
    register(guest.page, "gus")
    table_id = open_table(host.page, "english-blitz", colour="black", clock=(5, 0))

    # Waiting for an opponent, the host already sees her chosen colour at the bottom.
    expect(host.page.locator(".player-bar.bottom")).to_have_attribute("data-colour", "black")
    expect(host.page.locator(".player-bar.bottom")).to_contain_text("hana")

    guest.page.get_by_role("button", name=f"Sit at table {table_id}").click()
    expect(host.page.locator(".player-bar.top")).to_contain_text("gus")
    expect(host.page.locator(".player-bar.bottom .turn")).to_have_text("your move")
    assert boxes_out_of_view(host.page, IN_VIEW) == []
    assert host.page.evaluate("window.scrollY") == 0
    assert host.page.evaluate("document.documentElement.scrollWidth") <= size["width"]

    # A refused pick is explained next to the board, in view.
    square(host.page, 1).click()
    expect(host.page.locator(".game-error")).to_have_text("That piece has no legal move.")
    assert boxes_out_of_view(host.page, [*IN_VIEW, ".game-error"]) == []
    host.page.screenshot(path=str(tmp_path / "table.png"))

    for person in (host, guest):
        assert person.errors == []
        person.context.close()


def play_on_board(page: Page, move: str) -> None:
    """Play `move` by clicking its squares: the piece, then each landing square."""
    for number in re.split(r"[-x]", move):
        square(page, int(number)).click()


def test_ten_moves_on_a_phone_never_scroll_the_page(browser: Browser, server_url: str) -> None:
    phone = arrive(browser, server_url, viewport=PHONE)
    other = arrive(browser, server_url)
    register(phone.page, "pia")
    register(other.page, "oto")
    table_id = open_table(phone.page, "english-casual", colour="white", clock=None)
    # The host chose White: White at the bottom while she waits.
    expect(phone.page.locator(".player-bar.bottom")).to_have_attribute("data-colour", "white")
    other.page.get_by_role("button", name=f"Sit at table {table_id}").click()
    expect(other.page.locator(".player-bar.bottom")).to_have_attribute("data-colour", "black")

    game = Game(get_variant("english"))
    played: list[str] = []
    for ply in range(10):
        move = str(game.legal_moves()[0])
        if ply % 2 == 0:  # Black: the other player types the move
            other.page.get_by_label("Move in PDN notation").fill(move)
            other.page.get_by_role("button", name="Play").click()
        else:
            play_on_board(phone.page, move)
        game.play(move)
        played.append(move)
        expect_moves(phone.page, played)
        assert phone.page.evaluate("window.scrollY") == 0, f"the page scrolled after {move}"
    assert boxes_out_of_view(phone.page, IN_VIEW) == []

    for person in (phone, other):
        assert person.errors == []
        person.context.close()
