"""What players do at a table besides moving: draw offers, rematches, resigning, aborting, claiming
a win from an absent opponent; private tables joined by their link."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page, expect

from tests.e2e.conftest import running_server
from tests.e2e.people import Cable, arrive, expect_moves, open_table, register, square

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(300)]


def expect_banner(pages: tuple[Page, ...], *texts: str) -> None:
    """Each page's game-over banner, in order (each player reads it from their side)."""
    for page, text in zip(pages, texts, strict=True):
        expect(page.locator(".game-over")).to_have_text(text)


def expect_colour(page: Page, colour: str) -> None:
    """The player's own colour is the one at the bottom of their board."""
    expect(page.locator(".player-bar.bottom")).to_have_attribute("data-colour", colour)


def test_draw_offers_a_rematch_a_resignation_and_an_abort(
    browser: Browser, server_url: str
) -> None:
    people = [arrive(browser, server_url), arrive(browser, server_url)]
    ann, ben = (person.page for person in people)
    pages = (ann, ben)
    register(ann, "ann")
    register(ben, "ben")
    table_id = open_table(ann, "english-casual", colour="black", clock=None)
    ben.get_by_role("button", name=f"Sit at table {table_id}").click()
    expect_colour(ann, "black")
    expect_colour(ben, "white")
    for page in pages:
        expect(page.locator(".player-bar .clock").first).to_have_text("∞")

    # A draw offer the opponent declines.
    ann.get_by_role("button", name="Offer draw").click()
    expect(ann.locator(".game-actions")).to_contain_text("Draw offered.")
    expect(ben.locator(".game-actions")).to_contain_text("Your opponent offers a draw.")
    ben.get_by_role("button", name="Decline draw").click()
    expect(ann.locator(".announcer")).to_have_text("White declined the draw.")

    # One move, then an offer the opponent accepts.
    square(ann, 11).click()
    square(ann, 15).click()
    expect_moves(ben, ["11-15"])
    ben.get_by_role("button", name="Offer draw").click()
    ann.get_by_role("button", name="Accept draw").click()
    expect_banner(pages, "Draw by agreement.", "Draw by agreement.")

    # Both ask for a rematch: a new game with the colours swapped.
    ann.get_by_role("button", name="Rematch").click()
    expect(ben.locator(".game-actions")).to_contain_text("ann asks for a rematch.")
    ben.get_by_role("button", name="Rematch").click()
    expect_colour(ben, "black")
    expect_colour(ann, "white")
    for page in pages:
        expect(page.locator(".game-over")).to_be_hidden()
        expect(page.get_by_text("No moves yet.")).to_be_visible()

    # Resigning asks for confirmation first.
    ben.get_by_role("button", name="Resign").click()
    ben.get_by_role("button", name="Keep playing").click()
    expect(ben.locator(".game-over")).to_be_hidden()
    ben.get_by_role("button", name="Resign").click()
    ben.get_by_role("button", name="Confirm resignation").click()
    expect_banner(pages, "You won — Black resigned.", "You lost — you resigned.")

    # A third game, aborted before Black's first move: the abort, too, asks first.
    ben.get_by_role("button", name="Rematch").click()
    ann.get_by_role("button", name="Rematch").click()
    expect_colour(ann, "black")
    ann.get_by_role("button", name="Abort").click()
    ann.get_by_role("button", name="Keep playing").click()
    expect(ann.locator(".game-over")).to_be_hidden()
    ann.get_by_role("button", name="Abort").click()
    ann.get_by_role("button", name="Confirm abort").click()
    expect_banner(pages, "Game aborted: Black aborted it.", "Game aborted: Black aborted it.")

    for person in people:
        assert person.errors == []
        person.context.close()


def test_a_private_table_is_joined_by_its_link_and_a_guest_may_play(
    browser: Browser, server_url: str
) -> None:
    people = [arrive(browser, server_url), arrive(browser, server_url)]
    ann, guest = (person.page for person in people)
    register(ann, "ann")
    guest.get_by_role("button", name="Sign in").click()
    guest.get_by_role("dialog").get_by_role("button", name="Play as a guest").click()
    expect(guest.locator("#account")).to_contain_text("guest-")
    expect(guest.locator(".conn")).to_have_text("Connected")

    table_id = open_table(ann, "english-blitz", colour="white", clock=(3, 2), private=True)
    link = ann.get_by_label("Private link").input_value()
    assert f"#/table/{table_id}?invite=" in link
    # Not listed in the lobby: only the link leads there.
    expect(guest.locator('[data-room="english-blitz"]')).to_contain_text("No tables yet.")

    guest.goto(link)
    guest.get_by_role("button", name="Sit down to play").click()
    expect_colour(guest, "black")
    expect_colour(ann, "white")
    # No clock runs before both first moves: both stand at three minutes while Black is
    # counted down to the first move, then White to hers; White's clock runs after them.
    expect(guest.locator(".player-bar.bottom .clock")).not_to_have_class(re.compile("running"))
    expect(guest.get_by_label("First move countdown")).to_contain_text("first move within")
    expect(guest.locator(".player-bar.top .clock")).to_have_text("3:00")
    square(guest, 9).click()
    square(guest, 13).click()
    expect_moves(ann, ["9-13"])
    expect(ann.locator(".player-bar.bottom .clock")).not_to_have_class(re.compile("running"))
    expect(ann.get_by_label("First move countdown")).to_contain_text("first move within")

    # The finished game replays for its players (their token) and, by the link's code, for
    # whoever holds it; for anyone else it does not exist.
    guest.get_by_role("button", name="Resign").click()
    guest.get_by_role("button", name="Confirm resignation").click()
    expect_banner((ann, guest), "You won — Black resigned.", "You lost — you resigned.")
    for page in (ann, guest):
        page.get_by_role("link", name="Replay this game").click()
        expect(page.get_by_text("Move 1 of 1")).to_be_visible()
    found = re.search(r"#/games/(\d+)", ann.url)
    assert found is not None
    game_id = int(found[1])
    ann.goto(f"{server_url}/#/games/{game_id}")  # no code: her token opens it
    expect(ann.get_by_text("Move 1 of 1")).to_be_visible()
    with ann.expect_download() as download:
        ann.get_by_role("link", name="Download PDN").click()
    assert '[White "ann"]' in Path(download.value.path()).read_text()
    stranger = arrive(browser, server_url)
    people.append(stranger)
    stranger.page.goto(f"{server_url}/#/games/{game_id}")
    # (the lobby, still on screen a moment, has alert regions of its own)
    refusal = stranger.page.get_by_role("alert").filter(has_text="no game")
    expect(refusal).to_have_text(f"no game {game_id}")
    stranger.page.goto(f"{server_url}/#/games/{game_id}?invite={link.split('?invite=')[1]}")
    expect(stranger.page.get_by_text("Move 1 of 1")).to_be_visible()

    for person in people:
        assert person.errors == []
        person.context.close()


def test_the_win_is_claimed_from_a_player_who_stays_away(browser: Browser, tmp_path: Path) -> None:
    with running_server(tmp_path, disconnect_grace_seconds=1.0) as server:
        ben_cable = Cable()
        people = [arrive(browser, server.url), arrive(browser, server.url, cable=ben_cable)]
        ann, ben = (person.page for person in people)
        register(ann, "ann")
        register(ben, "ben")
        table_id = open_table(ann, "english-casual", colour="black", clock=None)
        ben.get_by_role("button", name=f"Sit at table {table_id}").click()
        expect(square(ann, 11)).to_have_class(re.compile("movable"))
        square(ann, 11).click()
        square(ann, 15).click()
        expect_moves(ben, ["11-15"])

        # Ben's connection drops and stays down: Ann sees it, then may claim once the grace
        # period is over.
        ben_cable.cut()
        expect(ben.locator(".conn")).to_have_text("Reconnecting…")
        expect(ann.locator(".player-bar.top")).to_contain_text("(disconnected)")
        ann.get_by_role("button", name="Claim the win").click()
        expect(ann.locator(".game-over")).to_have_text("You won — White left the game.")

        for person in people:
            assert person.errors == []
            person.context.close()
