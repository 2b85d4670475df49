"""Issue 32, the server's part, as a player sees it: quick games against the computer never lock
the player out, a refusal to open a table names the tables that count, with links and a
button to close one; takebacks, offers and aborts in words, and a player who turned takebacks
off in their settings is not asked."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import Browser, Page, expect
from playwright.sync_api import TimeoutError as PlaywrightTimeout

from tests.e2e.people import (
    arrive,
    expect_moves,
    open_table,
    register,
    square,
    two_players_and_a_spectator,
)

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(300)]


def play_the_computer(page: Page) -> None:
    panel = page.get_by_role("region", name="Play the computer")
    panel.get_by_label("Level").select_option("1")
    panel.get_by_label("Your colour").select_option("black")
    panel.get_by_role("button", name="Play the computer").click()
    expect(page).to_have_url(re.compile(r"#/table/\d+"))
    expect(page.locator(".player-bar.top")).to_contain_text("AI level 1")


def resign(page: Page) -> None:
    # A click on Resign made while the page redraws the table it has just opened (its
    # snapshot, then the game's start) can be lost with the redraw: ask again, as a person would.
    confirm = page.get_by_role("button", name="Confirm resignation")
    for _ in range(5):
        page.get_by_role("button", name="Resign").click()
        try:
            confirm.wait_for(timeout=2000)
            break
        except PlaywrightTimeout:
            continue
    confirm.click()
    expect(page.locator(".banner.game-over")).to_contain_text("resigned")


def test_quick_games_against_the_computer_never_lock_the_player_out(
    browser: Browser, server_url: str
) -> None:
    person = arrive(browser, server_url)
    page = person.page
    register(page, "quick")
    for _ in range(4):  # TABLES_PER_USER is 3
        play_the_computer(page)
        resign(page)
        page.get_by_role("navigation", name="Main").get_by_role("link", name="Lobby").click()
        expect(page.get_by_role("region", name="Play the computer")).to_be_visible()
    play_the_computer(page)
    expect(page.get_by_role("button", name="Resign")).to_be_visible()
    assert person.errors == []


def test_a_refusal_names_the_tables_that_count_and_closes_one(
    browser: Browser, server_url: str
) -> None:
    person = arrive(browser, server_url)
    page = person.page
    register(page, "host")
    tables = []
    for _ in range(3):
        tables.append(open_table(page, "english-casual", colour="black", clock=None))
        page.get_by_role("navigation", name="Main").get_by_role("link", name="Lobby").click()
    page.locator('[data-room="english-casual"]').get_by_role("button", name="Open a table").click()
    dialog = page.get_by_role("dialog")
    dialog.get_by_role("button", name="Open table").click()
    refusal = dialog.get_by_role("alert")
    expect(refusal).to_contain_text("close one to open another")
    for table_id in tables:
        expect(refusal.get_by_role("link", name=f"Table {table_id}")).to_have_attribute(
            "href", f"#/table/{table_id}"
        )
    refusal.get_by_role("button", name=f"Close table {tables[0]}").click()
    expect(refusal).to_contain_text(f"Table {tables[0]} closed.")
    dialog.get_by_role("button", name="Open table").click()
    expect(page).to_have_url(re.compile(r"#/table/\d+$"))
    assert int(re.findall(r"#/table/(\d+)", page.url)[0]) not in tables
    assert person.errors == []


def move(page: Page, start: int, end: int) -> None:
    square(page, start).click()
    square(page, end).click()


def test_takebacks_and_offers_are_answered_and_seen_by_spectators(
    browser: Browser, server_url: str
) -> None:
    people, _ = two_players_and_a_spectator(browser, server_url)
    ann, ben, carl = (person.page for person in people)

    # A draw offer: the spectator sees it, the offerer hears it was declined.
    ann.get_by_role("button", name="Offer draw").click()
    expect(carl.locator(".game-actions")).to_contain_text("Black offers a draw.")
    ben.get_by_role("button", name="Decline draw").click()
    expect(ann.locator(".game-actions")).to_contain_text("Your opponent declined your draw offer.")
    expect(carl.locator(".game-actions")).not_to_contain_text("offers a draw")

    move(ann, 11, 15)
    expect_moves(ben, ["11-15"])
    move(ben, 23, 19)
    expect_moves(ann, ["11-15", "23-19"])
    move(ann, 8, 11)
    expect_moves(ben, ["11-15", "23-19", "8-11"])

    # A takeback asked, declined, asked again and accepted: Black's last move goes.
    ann.get_by_role("button", name="Ask to take back").click()
    expect(ann.locator(".game-actions")).to_contain_text("Takeback asked.")
    expect(ben.locator(".game-actions")).to_contain_text("Your opponent asks to take back a move.")
    expect(carl.locator(".game-actions")).to_contain_text("Black asks to take back a move.")
    ben.get_by_role("button", name="Decline takeback").click()
    expect(ann.locator(".game-actions")).to_contain_text("Your opponent declined your takeback.")
    ann.get_by_role("button", name="Ask to take back").click()
    ben.get_by_role("button", name="Accept takeback").click()
    for page in (ann, ben, carl):
        expect_moves(page, ["11-15", "23-19"])
    expect(ann.locator(".player-bar.bottom .turn")).to_have_text("your move")
    move(ann, 9, 13)
    for page in (ann, ben, carl):
        expect_moves(page, ["11-15", "23-19", "9-13"])
    for person in people:
        assert person.errors == []
        person.context.close()


def test_a_player_who_turned_takebacks_off_is_not_asked(browser: Browser, server_url: str) -> None:
    people, _ = two_players_and_a_spectator(browser, server_url)
    ann, ben, carl = (person.page for person in people)
    move(ann, 11, 15)
    expect_moves(ben, ["11-15"])
    ask = ann.get_by_role("button", name="Ask to take back")
    expect(ask).to_be_visible()

    # Ben turns takebacks off on his own page, in another tab.
    settings = ben.context.new_page()
    settings.goto("/#/players/ben")
    switch = settings.get_by_role("checkbox", name=re.compile("Allow takebacks"))
    expect(switch).to_be_checked()
    switch.uncheck()
    panel = settings.get_by_role("region", name="Your settings")
    expect(panel.get_by_role("status")).to_have_text("Saved: takebacks off.")
    settings.reload()
    expect(switch).not_to_be_checked()
    settings.close()

    # Ann's page had not heard of it: her request is refused at once, in words.
    ask.click()
    expect(ann.locator(".game-error")).to_have_text(
        "Your opponent, ben, does not allow takebacks (their account's setting)"
    )
    expect(ben.locator(".game-actions")).not_to_contain_text("asks to take back")

    # From the next game on, nobody is offered a takeback against him (nor he one).
    ben.get_by_role("button", name="Resign").click()
    ben.get_by_role("button", name="Confirm resignation").click()
    ann.get_by_role("button", name="Rematch").click()
    ben.get_by_role("button", name="Rematch").click()
    expect(ben.locator(".player-bar.bottom")).to_have_attribute("data-colour", "black")
    move(ben, 11, 15)
    expect_moves(ann, ["11-15"])
    move(ann, 23, 19)
    expect_moves(ben, ["11-15", "23-19"])
    for page in (ann, ben):
        expect(page.get_by_role("button", name="Offer draw")).to_be_visible()
        expect(page.get_by_role("button", name="Ask to take back")).to_have_count(0)
    expect(carl.locator(".game-actions")).not_to_contain_text("take back")
    for person in people:
        assert person.errors == []
        person.context.close()


def test_an_abort_says_who_aborted(browser: Browser, server_url: str) -> None:
    people, _ = two_players_and_a_spectator(browser, server_url)
    ann, ben, carl = (person.page for person in people)
    ben.get_by_role("button", name="Abort").click()
    ben.get_by_role("button", name="Confirm abort").click()
    for page in (ann, ben, carl):
        expect(page.locator(".game-over")).to_have_text("Game aborted: White aborted it.")
    for person in people:
        assert person.errors == []
        person.context.close()


def test_the_table_says_whether_it_is_rated_and_how_many_watch(
    browser: Browser, server_url: str
) -> None:
    people, table_id = two_players_and_a_spectator(browser, server_url)
    ann = people[0].page
    expect(ann.locator("main")).to_contain_text("casual · 1 spectator")
    dave = arrive(browser, server_url)
    dave.page.goto(f"/#/table/{table_id}")
    expect(ann.locator("main")).to_contain_text("casual · 2 spectators")
    people[2].context.close()
    expect(ann.locator("main")).to_contain_text("casual · 1 spectator")
    for person in (*people[:2], dave):
        assert person.errors == []
        person.context.close()


def test_a_missing_or_private_table_shows_no_board_and_no_chat(
    browser: Browser, server_url: str
) -> None:
    person = arrive(browser, server_url)
    page = person.page
    register(page, "lost")
    page.goto("/#/table/987654")
    expect(page.locator("main")).to_contain_text("There is no table 987654, or it is private.")
    expect(page.get_by_role("link", name="Back to the lobby")).to_be_visible()
    expect(page.get_by_role("group", name=re.compile("board"))).to_be_hidden()
    expect(page.get_by_role("textbox", name="Chat message")).to_be_hidden()
    expect(page.get_by_role("heading", name="Chat")).to_be_hidden()
    assert person.errors == []
