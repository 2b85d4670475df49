"""Fair tables, in the browser, with the server's side of them: a game of yours starting is
announced on any page; a player who leaves a waiting table is stood up; clocks wait for the first
moves, whose deadline counts down and aborts a game nobody starts; players' and spectators' chats
are apart during a game and kept across a reload; finished tables leave the lobby."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page, expect

from tests.e2e.conftest import running_server
from tests.e2e.people import arrive, expect_moves, open_table, register, square

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(300)]

FIRST_MOVE_SECONDS = 30.0


def test_a_game_of_yours_starting_is_announced_on_another_page(
    browser: Browser, server_url: str
) -> None:
    people = [arrive(browser, server_url), arrive(browser, server_url)]
    ida, jon = (person.page for person in people)
    register(ida, "ida")
    register(jon, "jon")
    table_id = open_table(ida, "english-casual", colour="black", clock=(5, 0))
    ida.get_by_role("link", name="Archive").click()
    expect(ida.get_by_role("heading", name="Game archive")).to_be_visible()
    ida.evaluate(
        """() => {
          window.sounds = [];
          window.addEventListener("checkers:sound", (e) => window.sounds.push(e.detail));
        }"""
    )
    jon.get_by_role("button", name=f"Sit at table {table_id}").click()

    banner = ida.locator("#notify")
    expect(banner).to_contain_text(f"Table {table_id}: Your game against jon has started.")
    expect(ida).to_have_title(re.compile(r"^Your game! · "))
    assert ida.evaluate("window.sounds") == ["start"]
    banner.get_by_role("link", name=f"Go to table {table_id}").click()
    expect(ida.locator(".player-bar.bottom")).to_have_attribute("data-colour", "black")
    expect(ida.locator(".player-bar.bottom .turn")).to_have_text("your move")
    for person in people:
        assert person.errors == []
        person.context.close()


def test_a_player_who_leaves_a_waiting_table_is_stood_up(browser: Browser, tmp_path: Path) -> None:
    with running_server(tmp_path, disconnect_grace_seconds=1.0) as server:
        people = [arrive(browser, server.url), arrive(browser, server.url)]
        kay, onlooker = (person.page for person in people)
        register(kay, "kay")
        table_id = open_table(kay, "english-casual", colour="white", clock=None)
        listed = onlooker.locator(f'[data-table="{table_id}"]')
        expect(listed).to_contain_text("kay")
        kay.get_by_role("link", name="Archive").click()
        # Kay is still connected (on another page); her seat is not attended: it is given up.
        expect(listed).to_have_count(0)
        for person in people:
            assert person.errors == []
            person.context.close()


def test_a_host_who_leaves_before_the_table_page_has_loaded_is_stood_up(
    browser: Browser, tmp_path: Path
) -> None:
    """The host clicks away before the table's page has rendered (its script is slow on a
    busy machine; here it never comes): the watch the server began with the table still ends,
    so the seat is given up. (Before, the page that never rendered never sent `unwatch`, and
    the host, still connected, kept the seat.)"""
    with running_server(tmp_path, disconnect_grace_seconds=1.0) as server:
        people = [arrive(browser, server.url), arrive(browser, server.url)]
        kay, onlooker = (person.page for person in people)
        register(kay, "kay")
        kay.route("**/js/game.js", lambda route: route.abort())
        open_table_quickly(kay)
        listed = onlooker.locator('[data-table="1"]')
        expect(listed).to_contain_text("kay")
        kay.get_by_role("link", name="Archive").click()
        expect(listed).to_have_count(0)
        assert people[1].errors == []  # (Kay's page says that the table's script failed)
        for person in people:
            person.context.close()


def open_table_quickly(page: Page) -> None:
    """Open a table from the lobby's dialog, not waiting for the table's page."""
    page.locator('[data-room="english-casual"]').get_by_role("button", name="Open a table").click()
    dialog = page.get_by_role("dialog")
    dialog.get_by_label("Timed game").uncheck()
    dialog.get_by_role("button", name="Open table").click()
    expect(page).to_have_url(re.compile(r"#/table/1$"))


def test_first_moves_have_a_deadline_and_a_game_nobody_starts_is_aborted(
    browser: Browser, tmp_path: Path
) -> None:
    with running_server(tmp_path, first_move_seconds=FIRST_MOVE_SECONDS) as server:
        people = [arrive(browser, server.url), arrive(browser, server.url)]
        ann, ben = (person.page for person in people)
        register(ann, "ann")
        register(ben, "ben")
        table_id = open_table(ann, "english-blitz", colour="black", clock=(3, 0))
        ben.get_by_role("button", name=f"Sit at table {table_id}").click()
        countdown = ann.locator(".player-bar.bottom").get_by_role(
            "timer", name="First move countdown"
        )
        expect(countdown).to_have_text(re.compile(r"^first move within 0:[23]\d$"))
        expect(ann.get_by_label("Black clock")).not_to_have_class(re.compile("running"))
        expect(ann.get_by_label("Black clock")).to_have_text("3:00")

        # Nobody moves: the server aborts the game (its clock moved past the deadline rather
        # than waited for), which counts for nobody.
        server.clock.advance(FIRST_MOVE_SECONDS)
        for page in (ann, ben):
            expect(page.locator(".game-over")).to_have_text(
                "Game aborted: Black did not make a first move in time."
            )
        # An aborted game is kept, but listed nowhere: not among the player's games.
        ann.goto(f"{server.url}/#/players/ann")
        expect(ann.get_by_text("No games yet.")).to_be_visible()
        expect(ann.locator("td.result")).to_have_count(0)
        for person in people:
            assert person.errors == []
            person.context.close()


def test_players_and_spectators_chat_apart_during_a_game(browser: Browser, server_url: str) -> None:
    people = [arrive(browser, server_url) for _ in range(3)]
    ann, ben, cy = (person.page for person in people)
    for page, name in ((ann, "ann"), (ben, "ben"), (cy, "cyd")):
        register(page, name)
    table_id = open_table(ann, "english-casual", colour="black", clock=None)
    ben.get_by_role("button", name=f"Sit at table {table_id}").click()
    cy.get_by_role("link", name=f"Watch table {table_id}").click()
    expect(cy.locator(".player-bar.bottom")).to_contain_text("ben")

    cy.get_by_role("textbox", name="Chat message").fill("11-16 would be a blunder")
    cy.get_by_role("button", name="Send").click()
    expect(cy.locator(".chat-log li[data-channel='spectators']")).to_contain_text("blunder")
    ann.get_by_role("textbox", name="Chat message").fill("good luck")
    ann.get_by_role("button", name="Send").click()
    for page in (ann, ben, cy):
        expect(page.locator(".chat-log li[data-channel='players']")).to_contain_text(
            "ann: good luck"
        )
    for page in (ann, ben):
        expect(page.locator(".chat-log")).not_to_contain_text("blunder")

    # The server's refusal of a typed move is a sentence for a person.
    ann.get_by_label("Move in PDN notation").fill("9-18")
    ann.get_by_role("button", name="Play").click()
    expect(ann.locator(".game-error")).to_have_text("9-18 is not a legal move here.")

    # The chat survives a reload.
    ann.reload()
    expect(ann.locator(".chat-log")).to_contain_text("ann: good luck")
    expect(ann.locator(".chat-log")).not_to_contain_text("blunder")

    # Once the game is over, everyone reads everyone; the table leaves the lobby.
    square(ann, 11).click()
    square(ann, 15).click()
    expect_moves(ben, ["11-15"])
    ben.get_by_role("button", name="Resign").click()
    ben.get_by_role("button", name="Confirm resignation").click()
    expect(ann.locator(".game-over")).to_have_text("You won — White resigned.")
    # The spectators' line kept from the players during the game is shown to them now.
    for page in (ann, ben):
        expect(page.locator(".chat-log li[data-channel='spectators']")).to_contain_text(
            "cyd: 11-16 would be a blunder"
        )
    cy.get_by_role("textbox", name="Chat message").fill("well played")
    cy.get_by_role("button", name="Send").click()
    for page in (ann, ben):
        expect(page.locator(".chat-log")).to_contain_text("cyd: well played")
    cy.get_by_role("link", name="Lobby").click()
    expect(cy.locator('[data-room="english-casual"]')).to_be_visible()
    expect(cy.locator(f'[data-table="{table_id}"]')).to_have_count(0)

    for person in people:
        assert person.errors == []
        person.context.close()
