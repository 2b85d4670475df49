"""The board on its own, fed with legal moves from the rules engine: how a player picks a move.

The page mounts the real board component; whatever move it reports is what the client would send.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest
from playwright.sync_api import Browser, Locator, Page, expect

from app.rules import get_variant

pytestmark = pytest.mark.e2e


@pytest.fixture
def page(browser: Browser, server_url: str) -> Iterator[Page]:
    page = browser.new_page(base_url=server_url)
    page.goto("/#/nowhere")
    page.evaluate(
        """async () => {
          const { Board } = await import("/js/board.js");
          window.reported = [];
          window.board = new Board({
            onMove: (text) => reported.push(`move ${text}`),
            onNotice: (text) => reported.push(`notice ${text}`),
          });
          document.getElementById("main").replaceChildren(board.element);
        }"""
    )
    yield page
    page.close()


def show(page: Page, variant: str, fen: str, *, flipped: bool = False) -> None:
    """Show a position with its legal moves, as the server sends them to the side to move."""
    moves = [str(m) for m in get_variant(variant).position(fen).legal_moves()]
    page.evaluate(
        "([fen, legalMoves, flipped]) => board.set({fen, legalMoves, interactive: true, flipped})",
        [fen, moves, flipped],
    )


def reported(page: Page) -> list[str]:
    result: list[str] = page.evaluate("reported.splice(0)")
    return result


def square(page: Page, number: int) -> Locator:
    return page.locator(f'[data-square="{number}"]')


def test_a_multi_jump_by_its_final_square_when_one_path_leads_there(page: Page) -> None:
    show(page, "english", "B:W15,22:B11")
    square(page, 11).click()
    expect(square(page, 18)).to_have_class(re.compile("target"))
    expect(square(page, 25)).to_have_class(re.compile("target"))
    square(page, 25).click()
    assert reported(page) == ["move 11x18x25"]


def test_two_paths_to_one_square_need_each_landing_square(page: Page) -> None:
    # 30x23x14x7 and 30x21x14x7 both end on 7, taking different men.
    show(page, "english", "W:W30:B10,11,17,18,25,26")
    square(page, 30).click()
    square(page, 7).click()
    assert reported(page) == [
        "notice Several capture paths end there: click each landing square in turn."
    ]
    square(page, 21).click()
    square(page, 14).click()
    square(page, 7).click()
    assert reported(page) == ["move 30x21x14x7"]


def test_only_a_piece_that_can_capture_may_be_picked(page: Page) -> None:
    show(page, "english", "B:W9,23,26:B5,16")
    square(page, 16).click()
    assert reported(page) == [
        "notice Capture is mandatory: only a piece that can capture may move."
    ]
    expect(square(page, 16)).not_to_have_class(re.compile("selected"))
    expect(square(page, 5)).to_have_attribute("aria-label", "square 5, black man, can move")


def test_a_flying_king_in_pool_and_a_drag(page: Page) -> None:
    show(page, "pool", "B:W14,23:BK5,30")
    square(page, 5).drag_to(square(page, 32))
    assert reported(page) == ["move 5x18x32"]


def test_the_keyboard_walks_a_turned_board(page: Page) -> None:
    # Black at the bottom: "up" goes towards White's side.
    show(page, "english", "B:W21-32:B1-12", flipped=True)
    square(page, 9).focus()
    page.keyboard.press("Enter")
    page.keyboard.press("ArrowUp")
    expect(square(page, 13)).to_be_focused()
    page.keyboard.press("Escape")
    expect(square(page, 9)).not_to_have_class(re.compile("selected"))
    square(page, 10).focus()
    page.keyboard.press("Space")
    page.keyboard.press("ArrowUp")
    page.keyboard.press("ArrowLeft")
    expect(square(page, 15)).to_be_focused()
    page.keyboard.press("Enter")
    assert reported(page) == ["move 10-15"]
