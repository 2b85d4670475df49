"""Finding an opponent in the browser: the lobby's quick pairing ("Play now"), challenges (from a
player's page or from who-is-online; the banner on any page with Accept and Decline, a decline's
reason, a challenge made while the page was closed, one heard while the list is read) and who is
online in a room."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import Browser, Page, Route, expect

from tests.e2e.conftest import LiveServer
from tests.e2e.link import Player, member, visit
from tests.e2e.people import Cable, arrive, open_table, register

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(300)]

TABLE_URL = re.compile(r"#/table/(\d+)$")


def table_of(page: Page) -> int:
    expect(page).to_have_url(TABLE_URL)
    return int(TABLE_URL.findall(page.url)[0])


def listen_for_sounds(page: Page) -> None:
    page.evaluate(
        """() => {
          window.sounds = [];
          window.addEventListener("checkers:sound", (e) => window.sounds.push(e.detail));
        }"""
    )


def test_two_players_seeking_one_pool_meet_at_one_table(browser: Browser, server_url: str) -> None:
    people = [arrive(browser, server_url), arrive(browser, server_url)]
    ann, ben = (person.page for person in people)
    register(ann, "ann")
    register(ben, "ben")
    panel = ann.get_by_role("region", name="Play now")

    # Waiting shows the pool, the time waited and Cancel; cancelling empties the pool again.
    panel.locator('[data-pool="english-3+2"]').click()
    status = panel.get_by_role("status")
    expect(status).to_contain_text("Looking for an opponent: English 3+2, casual")
    expect(status.locator(".seek-elapsed")).to_have_text(re.compile(r"^0:0\d$"))
    expect(panel.locator('[data-pool="english-3+2"]')).to_have_attribute("aria-pressed", "true")
    expect(ben.locator('[data-pool="english-3+2"] .pool-waiting')).to_have_text("1 waiting")
    status.get_by_role("button", name="Cancel").click()
    expect(status).to_be_hidden()
    expect(ben.locator('[data-pool="english-3+2"] .pool-waiting')).to_have_text("0 waiting")

    # Ann waits in English 5+3; Ben sees her there and joins: both are taken to one table.
    panel.locator('[data-pool="english-5+3"]').click()
    expect(status).to_contain_text("English 5+3")
    expect(ben.locator('[data-pool="english-5+3"] .pool-waiting')).to_have_text("1 waiting")
    ben.locator('[data-pool="english-5+3"]').click()
    table_id = table_of(ann)
    assert table_of(ben) == table_id
    expect(ann.locator(".player-bar.top .name")).to_contain_text("ben")
    expect(ann.locator("#notify")).to_be_hidden()  # taken there, not told about it

    # Playing already, a new seek is refused in words.
    ben.get_by_role("link", name="Lobby").click()
    ben.locator('[data-pool="english-1+0"]').click()
    expect(ben.get_by_role("region", name="Play now").get_by_role("alert")).to_have_text(
        "You are playing a game already: finish it before looking for another."
    )
    for person in people:
        assert person.errors == []
        person.context.close()


def test_a_guest_cannot_seek_rated_and_is_told_why(browser: Browser, server_url: str) -> None:
    person = arrive(browser, server_url)
    page = person.page
    page.get_by_role("button", name="Sign in").click()
    page.get_by_role("dialog").get_by_role("button", name="Play as a guest").click()
    expect(page.locator("#account")).to_contain_text("guest-")
    panel = page.get_by_role("region", name="Play now")
    expect(panel.get_by_label("Rated")).to_be_disabled()
    expect(panel).to_contain_text("Rated games are for registered accounts: sign up to play one.")
    assert person.errors == []
    person.context.close()


def test_a_challenge_from_a_player_page_is_accepted_from_the_banner(
    browser: Browser, server_url: str
) -> None:
    people = [arrive(browser, server_url), arrive(browser, server_url)]
    cal, dee = (person.page for person in people)
    register(cal, "cal")
    register(dee, "dee")
    # Nobody challenges themselves.
    cal.goto(f"{server_url}/#/players/cal")
    expect(cal.get_by_role("heading", name="cal")).to_be_visible()
    expect(cal.get_by_role("button", name="Challenge")).to_be_hidden()

    # Dee reads the archive, her tab hidden; Cal challenges her from her page.
    dee.get_by_role("link", name="Archive").click()
    listen_for_sounds(dee)
    dee.evaluate(
        """() => Object.defineProperty(document, "hidden", {configurable: true, get: () => true})"""
    )
    cal.goto(f"{server_url}/#/players/dee")
    cal.get_by_role("button", name="Challenge").click()
    dialog = cal.get_by_role("dialog")
    dialog.get_by_label("Clock").select_option("180+2")
    dialog.get_by_label("Your colour").select_option("black")
    dialog.get_by_label("Rated").check()
    dialog.get_by_role("button", name="Send the challenge").click()
    expect(dialog).to_be_hidden()
    waiting = cal.locator('.challenge-box[data-direction="out"]')
    expect(waiting).to_contain_text(
        "Your challenge to dee (English draughts · 3+2 · rated · you play Black): "
        "waiting for an answer…"
    )
    expect(waiting.get_by_role("button", name="Cancel")).to_be_visible()

    banner = dee.locator('.challenge-box[data-direction="in"]')
    expect(banner).to_contain_text(
        "cal challenges you: English draughts · 3+2 · rated · you play White."
    )
    expect(dee).to_have_title(re.compile(r"^Challenge! · "))
    assert dee.evaluate("window.sounds") == ["challenge"]
    banner.get_by_role("button", name="Accept").click()

    table_id = table_of(dee)
    assert table_of(cal) == table_id
    expect(dee.locator(".player-bar.bottom .name")).to_contain_text("dee")
    expect(dee.locator(".player-bar.top .name")).to_contain_text("cal")
    expect(cal.locator(".player-bar.bottom .name")).to_contain_text("cal")
    expect(banner).to_be_hidden()
    expect(waiting).to_be_hidden()
    for person in people:
        assert person.errors == []
        person.context.close()


def test_who_is_online_and_a_declined_challenge(browser: Browser, server_url: str) -> None:
    people = [arrive(browser, server_url), arrive(browser, server_url)]
    eve, fay = (person.page for person in people)
    register(eve, "eve")
    register(fay, "fay")
    # Eve waits at her table in English casual; Fay, in that room's lobby, sees her online.
    open_table(eve, "english-casual", colour="black", clock=None)
    fay.goto(f"{server_url}/#/room/english-casual")
    online = fay.get_by_role("region", name="Who is online")
    entry = online.locator('li[data-player="eve"]')
    expect(entry).to_contain_text("eve (1500?)")
    expect(entry.get_by_role("link", name="eve")).to_have_attribute("href", "#/players/eve")

    # Fay challenges her from the list; Eve, at her table, declines with a reason.
    entry.get_by_role("button", name="Challenge eve").click()
    fay.get_by_role("dialog").get_by_role("button", name="Send the challenge").click()
    banner = eve.locator('.challenge-box[data-direction="in"]')
    expect(banner).to_contain_text("fay challenges you: English draughts · 5+3 · casual")
    banner.get_by_label("Reason to decline fay's challenge").select_option("later")
    banner.get_by_role("button", name="Decline").click()
    expect(banner).to_be_hidden()
    declined = fay.locator('.challenge-box[data-direction="declined"]')
    expect(declined).to_have_text(
        "eve declined your challenge: “This is not the right time for me, please ask again later.”×"
    )
    declined.get_by_role("button", name="Dismiss").click()
    expect(declined).to_be_hidden()

    # A name leads to the player's page.
    entry.get_by_role("link", name="eve").click()
    expect(fay.get_by_role("heading", name="eve")).to_be_visible()
    for person in people:
        assert person.errors == []
        person.context.close()


def test_a_challenge_made_while_the_page_was_closed_shows_when_it_opens(
    browser: Browser, server_url: str
) -> None:
    people = [arrive(browser, server_url), arrive(browser, server_url)]
    gus, hal = (person.page for person in people)
    register(gus, "gus")
    register(hal, "hal")
    hal.close()  # Hal's browser keeps his session, but no page of ours is open

    gus.goto(f"{server_url}/#/players/hal")
    gus.get_by_role("button", name="Challenge").click()
    dialog = gus.get_by_role("dialog")
    dialog.get_by_label("Clock").select_option("")  # untimed
    dialog.get_by_role("button", name="Send the challenge").click()
    expect(gus.locator('.challenge-box[data-direction="out"]')).to_contain_text(
        "Your challenge to hal (English draughts · untimed · casual · colours by lot)"
    )

    hal = people[1].context.new_page()
    hal.on("pageerror", lambda exc: people[1].errors.append(str(exc)))
    hal.goto(f"{server_url}/#/games")
    banner = hal.locator('.challenge-box[data-direction="in"]')
    expect(banner).to_contain_text("gus challenges you: English draughts · untimed · casual")
    # Withdrawn, it goes from Hal's page.
    gus.locator('.challenge-box[data-direction="out"]').get_by_role("button", name="Cancel").click()
    expect(banner).to_be_hidden()
    expect(gus.locator(".challenge-box")).to_have_count(0)
    for person in people:
        assert person.errors == []
        person.context.close()


def test_a_seek_survives_a_lost_connection(browser: Browser, server_url: str) -> None:
    cable = Cable()
    people = [arrive(browser, server_url, cable=cable), arrive(browser, server_url)]
    ivy, jay = (person.page for person in people)
    register(ivy, "ivy")
    register(jay, "jay")
    ivy.locator('[data-pool="english-10+5"]').click()
    count = jay.locator('[data-pool="english-10+5"] .pool-waiting')
    expect(count).to_have_text("1 waiting")

    # The server drops the seek of a closed connection; back, the page seeks again.
    cable.cut()
    expect(count).to_have_text("0 waiting")
    cable.down = False
    expect(ivy.locator(".conn")).to_have_text("Connected")
    expect(count).to_have_text("1 waiting")
    expect(ivy.get_by_role("region", name="Play now").get_by_role("status")).to_contain_text(
        "English 10+5"
    )
    jay.locator('[data-pool="english-10+5"]').click()
    assert table_of(jay) == table_of(ivy)
    for person in people:
        assert person.errors == []
        person.context.close()


def test_a_challenge_heard_while_the_list_is_read_stays(
    browser: Browser, server: LiveServer
) -> None:
    """At connect the page reads the waiting challenges; a challenge told over the socket while
    that read is on its way is newer than the list it brings back, and stays on the banner."""
    held: list[Route] = []
    person = visit(
        browser,
        server.url,
        member(server.url, "dora"),
        "/",
        prepare=lambda context: context.route("**/api/challenge", lambda route: held.append(route)),
    )
    page = person.page
    expect(page.locator(".conn")).to_have_text("Connected")
    while not held:
        page.wait_for_timeout(50)
    read = held[0]
    stale = read.fetch()  # the list as the server had it when the page asked: empty
    challenger = Player.connect(server.url, member(server.url, "cyril"))
    challenger.send(type="challenge", user="dora")
    box = page.locator('.challenge-box[data-direction="in"]')
    expect(box).to_contain_text("cyril challenges you")
    with page.expect_request_finished(lambda request: request.url.endswith("/api/challenge")):
        read.fulfill(response=stale)
    page.evaluate("() => new Promise((done) => setTimeout(done, 200))")  # the answer is read
    assert box.count() == 1
    expect(box).to_contain_text("cyril challenges you")
    challenger.close()
    assert person.errors == []
    person.context.close()
