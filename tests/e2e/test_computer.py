"""Playing the computer in the browser: the lobby's "Play the computer" form starts a game
against the AI, the table opens, and the AI answers the player's move."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import Browser, expect

from tests.e2e.people import arrive, register, square

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(120)]


def test_a_game_against_the_computer_starts_from_the_lobby(
    browser: Browser, server_url: str
) -> None:
    person = arrive(browser, server_url)
    page = person.page
    register(page, "dana")
    panel = page.get_by_role("region", name="Play the computer")
    panel.get_by_label("Variant").select_option("english")
    panel.get_by_label("Level").select_option("2")
    panel.get_by_label("Your colour").select_option("black")
    panel.get_by_role("button", name="Play the computer").click()
    expect(page).to_have_url(re.compile(r"#/table/\d+"))
    expect(page.locator(".players, .game-players, main")).to_contain_text("AI level 2")
    # The board takes the click once the game's legal moves have come (a busy machine may show
    # the players first).
    expect(square(page, 11)).to_have_class(re.compile(r"\bmovable\b"))
    square(page, 11).click()
    square(page, 15).click()
    # The player's move, then the computer's reply.
    expect(page.locator(".move-list .move")).to_have_count(2)
    expect(page.locator(".move-list .move").first).to_have_text("11-15")
    assert person.errors == []
