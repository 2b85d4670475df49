"""A table page redraws on the events it hears (a spectator arriving, a move, a reconnect's
snapshot):
what it draws the same is kept, so a click on a button at that moment is never lost with the
redraw, nor is the keyboard focus on it."""

from __future__ import annotations

import pytest
from playwright.sync_api import Browser, expect

from tests.e2e.people import two_players_and_a_spectator

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(300)]


def test_buttons_drawn_the_same_survive_a_redraw(browser: Browser, server_url: str) -> None:
    people, table_id = two_players_and_a_spectator(browser, server_url)
    ann, _, carl = (person.page for person in people)
    expect(ann.locator(".player-bar.bottom .turn")).to_have_text("your move")
    expect(ann.get_by_text("casual · 1 spectator")).to_be_visible()

    resign = ann.get_by_role("button", name="Resign").element_handle()
    resign.focus()
    carl.get_by_role("link", name="Lobby").click()  # the players' pages redraw: none watch now
    expect(ann.get_by_text("casual · 0 spectators")).to_be_visible()
    assert resign.evaluate("button => button.isConnected")
    assert ann.evaluate("document.activeElement.textContent") == "Resign"

    # The confirmation too: a redraw between "Resign" and "Confirm" keeps the button.
    resign.click()
    confirm = ann.get_by_role("button", name="Confirm resignation").element_handle()
    carl.goto(f"/#/table/{table_id}")
    expect(ann.get_by_text("casual · 1 spectator")).to_be_visible()
    assert confirm.evaluate("button => button.isConnected")
    # A fresh snapshot of the same game (as after a reconnect) keeps the question asked.
    ann.evaluate(
        """async (table) => {
          const { live } = await import("/js/live.js");
          const drawn = new Promise((resolve) => {
            const stop = live.on("table", () => { stop(); resolve(); });  // after the page's
          });
          live.refreshTable(table);
          await drawn;
        }""",
        table_id,
    )
    assert confirm.evaluate("button => button.isConnected")
    confirm.click()
    expect(ann.locator(".banner.game-over")).to_contain_text("resigned")
    for person in people:
        assert person.errors == []
        person.context.close()
