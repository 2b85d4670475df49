"""After a game: the replay from the viewer's side with each move's clock time, stepped from its
move list by keyboard; results in the archive and on player pages as a win, loss or draw of that
player with how it ended; the sounds of a game as it is played."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import Browser, Page, expect

from tests.e2e.people import arrive, expect_moves, open_table, register, square

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(300)]

PHONE = {"width": 390, "height": 844}


def record_sounds(page: Page) -> None:
    page.evaluate(
        """() => {
          window.sounds = [];
          window.addEventListener("checkers:sound", (e) => window.sounds.push(e.detail));
        }"""
    )


def sounds(page: Page) -> list[str]:
    heard: list[str] = page.evaluate("window.sounds.slice()")
    return heard


def test_a_game_replayed_from_each_side_and_its_result_in_words(
    browser: Browser, server_url: str
) -> None:
    people = [arrive(browser, server_url), arrive(browser, server_url, viewport=PHONE)]  # type: ignore[arg-type]
    ada, bo = (person.page for person in people)
    register(ada, "ada")
    register(bo, "boz")
    table_id = open_table(ada, "english-blitz", colour="black", clock=(5, 0))
    ada.get_by_label("Chess coordinates").check()
    record_sounds(ada)
    bo.get_by_role("button", name=f"Sit at table {table_id}").click()
    expect(ada.locator(".player-bar.bottom .turn")).to_have_text("your move")

    played: list[str] = []
    for page, move in ((ada, "11-15"), (bo, "24-19"), (ada, "15x24")):
        expect_moves(page, played)
        a, b = (int(n) for n in re.split(r"[-x]", move))
        square(page, a).click()
        square(page, b).click()
        played.append(move)
    expect_moves(bo, played)
    bo.get_by_role("button", name="Resign").click()
    bo.get_by_role("button", name="Confirm resignation").click()
    expect(ada.locator(".game-over")).to_have_text("You won — White resigned.")
    expect(ada.locator(".game-over")).to_have_attribute("data-outcome", "win")
    expect(bo.locator(".game-over")).to_have_attribute("data-outcome", "loss")
    assert sounds(ada) == ["start", "move", "move", "capture", "end"]

    # Ada played Black: her replay has Black at the bottom, with the clock after every move,
    # and the board labels she chose at the table.
    ada.get_by_role("link", name="Replay this game").click()
    expect(ada.get_by_text("Move 3 of 3")).to_be_visible()
    expect(ada.locator(".player-bar.bottom")).to_have_attribute("data-colour", "black")
    expect(ada.locator(".board")).to_have_attribute("data-labels", "coordinates")
    expect(ada.locator(".move-list .move-clock")).to_have_count(3)
    expect(ada.locator(".move-list .move-clock").first).to_have_text(re.compile(r"^[45]:\d\d$"))
    expect(ada.get_by_label("Black clock")).to_have_text(re.compile(r"^[45]:\d\d$"))
    expect(ada.get_by_test_id("result")).to_contain_text("You won — White resigned.")
    expect(ada.get_by_test_id("result")).to_have_attribute("data-outcome", "win")

    # The move list steps by keyboard: arrows, Home and End, focus staying on the current move.
    ada.get_by_role("button", name=re.compile("^move 2: 24-19")).click()
    expect(ada.get_by_text("Move 2 of 3")).to_be_visible()
    ada.keyboard.press("Home")
    expect(ada.get_by_text("Move 0 of 3")).to_be_visible()
    ada.keyboard.press("End")
    expect(ada.get_by_role("button", name=re.compile("^move 3: 15x24"))).to_be_focused()
    ada.keyboard.press("ArrowUp")
    expect(ada.get_by_text("Move 2 of 3")).to_be_visible()
    expect(ada.get_by_role("button", name=re.compile("^move 2: 24-19"))).to_be_focused()

    # Bo's replay, on a phone, opens at its top with White at the bottom.
    bo.mouse.wheel(0, 600)
    bo.get_by_role("link", name="Replay this game").click()
    expect(bo.get_by_text("Move 3 of 3")).to_be_visible()
    expect(bo.locator(".player-bar.bottom")).to_have_attribute("data-colour", "white")
    assert bo.evaluate("window.scrollY") == 0

    # Each player's page tells the game from that player's side, and so does the archive
    # searched by player.
    ada.goto(f"{server_url}/#/players/ada")
    expect(ada.locator("td.result")).to_have_text(["Won — opponent resigned"])
    ada.goto(f"{server_url}/#/players/boz")
    expect(ada.locator("td.result")).to_have_text(["Lost — resigned"])
    expect(ada.locator("td.result")).to_have_attribute("data-outcome", "loss")
    ada.goto(f"{server_url}/#/games?player=boz")
    expect(ada.locator("td.result")).to_have_text(["Lost — resigned"])

    for person in people:
        assert person.errors == []
        person.context.close()
