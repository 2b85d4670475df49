"""How the board feels: moves slide and taken men fade quickly, kings are crowned stacked men,
square numbers are shown by default, the viewer's choices (sound, board labels) are remembered,
and pieces stand out from their squares in the light and the dark scheme."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from playwright.sync_api import Browser, Page, expect

from tests.e2e.people import arrive, open_table, register

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(300)]


@pytest.fixture
def board_page(browser: Browser, server_url: str) -> Iterator[Page]:
    page = browser.new_page(base_url=server_url)
    page.goto("/#/nowhere")
    page.evaluate(
        """async () => {
          const { Board } = await import("/js/board.js");
          window.board = new Board({ label: "Test board" });
          document.getElementById("main").replaceChildren(board.element);
        }"""
    )
    yield page
    page.close()


def test_a_capture_slides_and_the_taken_man_fades_within_200_ms(board_page: Page) -> None:
    # Read in the same task as the move is shown, so nothing has finished yet.
    seen = board_page.evaluate(
        """() => {
          board.set({ fen: "B:W9,23,26:B5,16" });
          board.set({ fen: "W:W23,26:B14,16", lastMove: "5x14", animate: true });
          const slot = (n) => document.querySelector(`[data-square="${n}"] .piece-slot`);
          const timing = (el) => el.getAnimations().map((a) => a.effect.getTiming().duration);
          const ghost = slot(9).querySelector(".ghost");
          return {
            mover: timing(slot(14).querySelector(".piece")),
            taken: ghost ? timing(ghost) : [],
            takenLabel: document.querySelector('[data-square="9"]').getAttribute("aria-label"),
          };
        }"""
    )
    assert len(seen["mover"]) == 1 and 0 < seen["mover"][0] <= 200
    assert len(seen["taken"]) == 1 and 0 < seen["taken"][0] <= 200
    # The fading man is only drawn: the square already reads as empty.
    assert seen["takenLabel"].startswith("square 9, empty")


def test_a_king_is_a_crowned_stack_and_square_numbers_show_by_default(board_page: Page) -> None:
    board_page.evaluate("""() => board.set({ fen: "B:WK10:B5" })""")
    king = board_page.locator('[data-square="10"] .piece')
    expect(king).to_have_class("piece white king")
    crown = king.evaluate(
        """(el) => {
          const after = getComputedStyle(el, "::after");
          return { content: after.content, mask: after.maskImage || after.webkitMaskImage };
        }"""
    )
    assert crown["content"] == '""'  # no queen glyph: a drawn crown
    assert "svg" in crown["mask"]
    assert "0px 4px" in king.evaluate("(el) => getComputedStyle(el).boxShadow")  # the lower man
    expect(board_page.locator('[data-square="10"] .number')).to_be_visible()
    expect(board_page.locator(".coord").first).to_be_hidden()


def luminance(rgb: tuple[int, int, int]) -> float:
    channels = []
    for value in rgb:
        c = value / 255
        channels.append(c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4)
    return 0.2126 * channels[0] + 0.7152 * channels[1] + 0.0722 * channels[2]


def contrast(a: tuple[int, int, int], b: tuple[int, int, int]) -> float:
    high, low = sorted((luminance(a), luminance(b)), reverse=True)
    return (high + 0.05) / (low + 0.05)


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_pieces_stand_out_from_the_squares(browser: Browser, server_url: str, scheme: str) -> None:
    context = browser.new_context(base_url=server_url, color_scheme=scheme)  # type: ignore[arg-type]
    page = context.new_page()
    page.goto("/")
    colours = page.evaluate(
        """() => {
          const probe = document.createElement("div");
          document.body.append(probe);
          const read = (name) => {
            probe.style.color = `var(${name})`;
            return getComputedStyle(probe).color.match(/\\d+/g).slice(0, 3).map(Number);
          };
          return Object.fromEntries(
            ["--dark-square", "--black-piece", "--white-piece", "--bg"].map((n) => [n, read(n)]),
          );
        }"""
    )
    square = tuple(colours["--dark-square"])
    for piece in ("--black-piece", "--white-piece"):
        assert contrast(square, tuple(colours[piece])) >= 3.0, (scheme, piece, colours)
    context.close()


def test_the_mute_switch_and_the_board_labels_survive_a_reload(
    browser: Browser, server_url: str
) -> None:
    person = arrive(browser, server_url)
    page = person.page
    register(page, "remi")
    open_table(page, "english-casual", colour="black", clock=None)
    mute = page.get_by_role("button", name="Mute sounds")
    expect(mute).to_have_attribute("aria-pressed", "false")
    mute.click()
    expect(mute).to_have_attribute("aria-pressed", "true")
    expect(page.locator(".board .number").first).to_be_visible()
    page.get_by_label("Chess coordinates").check()
    expect(page.locator(".board .coord").first).to_be_visible()
    expect(page.locator(".board .number").first).to_be_hidden()

    page.reload()
    expect(page.get_by_role("button", name="Mute sounds")).to_have_attribute("aria-pressed", "true")
    expect(page.get_by_label("Chess coordinates")).to_be_checked()
    expect(page.locator(".board")).to_have_attribute("data-labels", "coordinates")
    expect(page.locator(".board .coord").first).to_be_visible()
    assert person.errors == []
    person.context.close()
