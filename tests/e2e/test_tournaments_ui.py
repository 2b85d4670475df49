"""Tournaments in the browser: a player creates an arena (the form shows the server's refusal in
its words first), two players join it and each pairing takes them to their table at once, with
the game's start sound, the table's link back and its Berserk button; the tournament's page,
refreshed without losing the focus, shows the winner first and the next game to watch, the list
shows it under Running; a Swiss's form sets its draw rule, and its ballot match plays one
opening with each colour, named at the table; a round robin's creator brings its start forward,
and once its round is played it shows its podium, its round's result and its tie-break columns;
an administrator schedules a recurring one from the admin page, sees it count down, changes it
before the start and cancels it."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import Browser, Locator, Page, expect

from tests.e2e.conftest import LiveServer
from tests.e2e.people import arrive, expect_moves, register, square
from tests.e2e.test_admin import create_admin, log_in

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(300)]

TABLE = re.compile(r"#/table/(\d+)$")


def record_sounds(page: Page) -> None:
    page.evaluate(
        """() => {
          window.sounds = [];
          window.addEventListener("checkers:sound", (e) => window.sounds.push(e.detail));
        }"""
    )


def table_of(page: Page) -> int:
    expect(page).to_have_url(TABLE)
    found = TABLE.search(page.url)
    assert found is not None
    return int(found.group(1))


def by_colour(one: Page, two: Page) -> tuple[Page, Page]:
    """(Black's page, White's page) of two players at one table, once each page shows its own
    colour at the bottom: read before both have the game, one page's bar could still be a
    spectator's."""

    def colours() -> set[str | None]:
        return {p.locator(".player-bar.bottom").get_attribute("data-colour") for p in (one, two)}

    for _ in range(200):
        if colours() == {"black", "white"}:
            break
        one.wait_for_timeout(100)
    assert colours() == {"black", "white"}
    black = one.locator(".player-bar.bottom").get_attribute("data-colour") == "black"
    return (one, two) if black else (two, one)


def fill_arena(form: Locator, name: str, *, starts_in: int, length: str) -> None:
    form.get_by_label("Kind").select_option("arena")
    form.get_by_label("Name").fill(name)
    form.get_by_label("Clock: minutes each").fill("3")
    form.get_by_label("Increment (seconds)").fill("0")
    form.get_by_label("Starts in (minutes)").fill(str(starts_in))
    form.get_by_label("Length (minutes)").fill(length)


def test_two_players_meet_in_an_arena_and_the_winner_leads(
    browser: Browser, server_url: str
) -> None:
    people = [arrive(browser, server_url) for _ in range(3)]
    ann, ben, cy = (person.page for person in people)
    register(ann, "ann")
    register(ben, "ben")

    # Ann creates an arena from the tournaments page; without its length the server refuses,
    # and the form says why.
    ann.get_by_role("link", name="Tournaments").click()
    form = ann.get_by_role("form", name="Create a tournament")
    expect(form.get_by_label("Repeat every", exact=False)).to_have_count(0)  # administrators'
    fill_arena(form, "Friday arena", starts_in=0, length="")
    form.get_by_role("button", name="Create tournament").click()
    expect(form.get_by_role("alert")).to_have_text("An arena needs minutes, 1 to 1440.")
    form.get_by_label("Length (minutes)").fill("30")
    form.get_by_role("button", name="Create tournament").click()
    expect(ann).to_have_url(re.compile(r"#/tournaments/\d+$"))
    found = re.search(r"#/tournaments/(\d+)$", ann.url)
    assert found is not None
    tournament = int(found.group(1))
    expect(ann.get_by_role("heading", name="Friday arena")).to_be_visible()
    expect(ann.get_by_text("Arena · English draughts · 3+0 · casual")).to_be_visible()
    # It starts at once (the director steps it within a second): the time left counts down.
    expect(ann.get_by_role("timer")).to_have_text(re.compile(r"^(29|30):\d\d left$"))
    ann.get_by_role("button", name="Join", exact=True).click()
    expect(ann.get_by_role("button", name="Pause")).to_be_visible()
    expect(ann.locator('.standings tr[data-player="ann"]')).to_be_visible()

    # A visitor's page reads the tournament again whenever the server says it changed: what it
    # draws the same is kept, so the focus on Join (or a click on it then) is not lost.
    cy.goto(f"/#/tournaments/{tournament}")
    expect(cy.locator(".standings tbody tr")).to_have_count(1)
    join = cy.get_by_role("button", name="Join", exact=True).element_handle()
    join.focus()

    # Ben finds it under Running and joins: both are taken to their table at once.
    ben.get_by_role("link", name="Tournaments").click()
    running = ben.locator('[data-section="running"]')
    running.get_by_role("link", name="Friday arena").click()
    expect(ben.get_by_role("heading", name="Friday arena")).to_be_visible()
    for page in (ann, ben):
        record_sounds(page)
    ben.get_by_role("button", name="Join", exact=True).click()
    table = table_of(ann)
    assert table_of(ben) == table
    expect(cy.locator(".standings tbody tr")).to_have_count(2)
    assert join.evaluate("button => button.isConnected && document.activeElement === button")
    for page in (ann, ben):
        page.wait_for_function("window.sounds.includes('start')")

    # Black moves, White resigns: Black has won.
    black, white = by_colour(ann, ben)
    winner, loser = ("ann", "ben") if black is ann else ("ben", "ann")
    # The table links back to its tournament; Black goes berserk before moving: half the
    # time, marked on both pages, and no second Berserk.
    for page in (black, white):
        expect(page.get_by_role("link", name="Arena: Friday arena")).to_have_attribute(
            "href", f"#/tournaments/{tournament}"
        )
    expect(white.get_by_role("button", name="Berserk")).to_be_visible()
    black.get_by_role("button", name="Berserk").click()
    for page in (black, white):
        expect(page.locator('.player-bar[data-colour="black"] .berserk')).to_be_visible()
    expect(black.locator(".player-bar.bottom .clock")).to_have_text("1:30")
    expect(black.get_by_role("button", name="Berserk")).to_have_count(0)
    expect(square(black, 11)).to_have_class(re.compile("movable"))
    square(black, 11).click()
    square(black, 15).click()
    expect_moves(white, ["11-15"])
    white.get_by_role("button", name="Resign").click()
    white.get_by_role("button", name="Confirm resignation").click()

    # The arena pairs them again at once: the next pairing takes each to the new table.
    expect(ann).not_to_have_url(re.compile(rf"#/table/{table}$"))
    second = table_of(ann)
    assert table_of(ben) == second

    # The visitor reads the standings, winner first, and can watch the game in progress.
    standings = cy.locator(".standings tbody tr")
    expect(standings.first).to_have_attribute("data-player", winner)
    expect(standings.first.locator(".score")).to_have_text("2")
    expect(cy.locator(f'.standings tr[data-player="{loser}"] .score')).to_have_text("0")
    expect(cy.get_by_role("link", name=re.compile(f"^Watch table {second}:"))).to_have_attribute(
        "href", f"#/table/{second}"
    )
    expect(cy.get_by_role("button", name="Join", exact=True)).to_be_visible()
    cy.get_by_role("link", name="Tournaments").click()
    listed = cy.locator(f'[data-section="running"] tr[data-tournament="{tournament}"]')
    expect(listed).to_contain_text("Friday arena")
    expect(listed.locator("td.number-cell")).to_have_text("2")
    for person in people:
        assert person.errors == []
        person.context.close()


def test_a_round_robin_started_early_by_its_creator_ends_on_a_podium(
    browser: Browser, server_url: str
) -> None:
    people = [arrive(browser, server_url) for _ in range(2)]
    dee, eve = (person.page for person in people)
    register(dee, "dee")
    register(eve, "eve")
    dee.get_by_role("link", name="Tournaments").click()
    form = dee.get_by_role("form", name="Create a tournament")
    form.get_by_label("Kind").select_option("round_robin")
    expect(form.get_by_label("Length (minutes)")).to_be_hidden()
    form.get_by_label("Name").fill("Club round robin")
    form.get_by_label("Clock: minutes each").fill("5")
    form.get_by_label("Increment (seconds)").fill("3")
    form.get_by_label("Starts in (minutes)").fill("10")
    form.get_by_role("button", name="Create tournament").click()
    expect(dee.get_by_role("heading", name="Club round robin")).to_be_visible()
    expect(dee.get_by_role("timer")).to_have_text(re.compile(r"^Starts in (9:[0-5]\d|10:00)$"))
    dee.get_by_role("button", name="Join", exact=True).click()
    expect(dee.get_by_role("button", name="Withdraw")).to_be_visible()

    eve.get_by_role("link", name="Tournaments").click()
    upcoming = eve.locator('[data-section="upcoming"]')
    expect(upcoming).to_contain_text(re.compile(r"starts in (9:[0-5]\d|10:00)"))
    upcoming.get_by_role("link", name="Club round robin").click()
    eve.get_by_role("button", name="Join", exact=True).click()
    expect(eve.locator(".standings tbody tr")).to_have_count(2)
    # Not hers to change.
    expect(eve.get_by_role("button", name="Edit")).to_have_count(0)
    expect(eve.get_by_role("button", name="Cancel tournament")).to_have_count(0)

    # Both are in: its creator brings the start forward, and the one round begins.
    dee.get_by_role("button", name="Edit").click()
    edit = dee.get_by_role("form", name="Change the tournament")
    edit.get_by_label("Starts in (minutes)").fill("0")
    edit.get_by_role("button", name="Save changes").click()
    table = table_of(dee)
    assert table_of(eve) == table

    black, white = by_colour(dee, eve)
    winner, loser = ("dee", "eve") if black is dee else ("eve", "dee")
    expect(square(black, 11)).to_have_class(re.compile("movable"))
    square(black, 11).click()
    square(black, 15).click()
    expect_moves(white, ["11-15"])
    white.get_by_role("button", name="Resign").click()
    white.get_by_role("button", name="Confirm resignation").click()

    # Over after its only round: the podium, the round's result, the tie-breaks.
    dee.get_by_role("link", name="Tournaments").click()
    finished = dee.locator('[data-section="finished"]')
    finished.get_by_role("link", name="Club round robin").click()
    expect(dee.get_by_role("timer")).to_have_text("Finished")
    podium = dee.locator(".podium li")
    expect(podium).to_have_count(2)
    expect(podium.first).to_have_text(f"1st {winner} 1 point")
    expect(podium.nth(1)).to_have_text(f"2nd {loser} 0 points")
    header = dee.locator(".standings thead th")
    expect(header).to_have_text(
        ["Rank", "Player", "Score", "Games", "Sonneborn–Berger", "Buchholz"]
    )
    expect(dee.locator(f'.standings tr[data-player="{winner}"]')).to_have_attribute(
        "data-rank", "1"
    )
    # Black won (1-0): Black moves first and White resigned.
    expect(dee.locator('.round[data-round="1"]')).to_contain_text(f"{winner} – {loser}: 1-0")
    expect(dee.get_by_text("No game is being played.")).to_be_visible()
    expect(dee.get_by_role("button", name="Join", exact=True)).to_have_count(0)
    # Its game is in the archive, found by the tournament.
    dee.get_by_role("link", name="All its games in the archive").click()
    expect(dee.locator(".games-list tbody tr")).to_have_count(1)
    expect(dee.locator(".games-list tbody tr")).to_contain_text(winner)
    for person in people:
        assert person.errors == []
        person.context.close()


def test_a_swiss_ballot_match_plays_both_colours_of_one_opening(
    browser: Browser, server_url: str
) -> None:
    people = [arrive(browser, server_url) for _ in range(2)]
    fay, gil = (person.page for person in people)
    register(fay, "fay")
    register(gil, "gil")
    fay.get_by_role("link", name="Tournaments").click()
    form = fay.get_by_role("form", name="Create a tournament")
    form.get_by_label("Kind").select_option("swiss")
    # A Swiss refuses draw offers before move 30 unless its creator says otherwise.
    expect(form.get_by_label("No draw offers before move")).to_have_value("30")
    form.get_by_label("No draw offers before move").fill("20")
    form.get_by_label("Name").fill("Ballot night")
    form.get_by_label("Rounds").fill("1")
    form.get_by_label("Openings").select_option("3-move")
    form.get_by_label("Starts in (minutes)").fill("10")
    form.get_by_role("button", name="Create tournament").click()
    expect(fay.get_by_role("heading", name="Ballot night")).to_be_visible()
    expect(
        fay.get_by_text(re.compile(r"^Swiss · English draughts · 3\+2 · casual · 3-move ballot"))
    )
    fay.get_by_role("button", name="Join", exact=True).click()
    gil.goto(fay.url)
    gil.get_by_role("button", name="Join", exact=True).click()
    expect(gil.locator(".standings tbody tr")).to_have_count(2)
    fay.get_by_role("button", name="Edit").click()
    edit = fay.get_by_role("form", name="Change the tournament")
    expect(edit.get_by_label("No draw offers before move")).to_have_value("20")
    edit.get_by_label("Starts in (minutes)").fill("0")
    edit.get_by_role("button", name="Save changes").click()

    # The first game of the match, from the drawn opening: the table names it and the round.
    table = table_of(fay)
    assert table_of(gil) == table
    black, white = by_colour(fay, gil)
    link = black.get_by_role("link", name="Swiss: Ballot night, round 1")
    expect(link).to_have_attribute("href", re.compile(r"#/tournaments/\d+$"))
    opening = black.locator(".page h1 + p").inner_text().split(" · ")[-2]
    assert opening and "start" not in opening, opening
    # The game starts after the ballot's three moves: White is to move. Too early to offer
    # a draw here.
    mover = white
    expect(mover.locator(".player-bar.bottom .turn")).to_have_text("your move")
    mover.get_by_role("button", name="Offer draw").click()
    expect(mover.locator(".game-error")).to_contain_text("before move 20")
    mover.get_by_role("button", name="Resign").click()
    mover.get_by_role("button", name="Confirm resignation").click()

    # The second game, colours reversed, on the same opening.
    expect(fay).not_to_have_url(re.compile(rf"#/table/{table}$"))
    second = table_of(fay)
    assert table_of(gil) == second
    black2, white2 = by_colour(fay, gil)
    assert (black2, white2) == (white, black)
    expect(black2.locator(".page h1 + p")).to_contain_text(opening)
    white2.get_by_role("button", name="Resign").click()
    white2.get_by_role("button", name="Confirm resignation").click()

    # One round, two games, one each: the match is drawn 1–1, and the round shows both games.
    fay.get_by_role("link", name="Tournaments").click()
    fay.locator('[data-section="finished"]').get_by_role("link", name="Ballot night").click()
    expect(fay.get_by_role("timer")).to_have_text("Finished")
    games = fay.locator('.round[data-round="1"] li')
    expect(games).to_have_count(2)
    expect(games.first).to_contain_text(f"game 1 of 2, {opening}")
    expect(games.nth(1)).to_contain_text(f"game 2 of 2, {opening}")
    expect(fay.locator(".standings tbody .score")).to_have_text(["1", "1"])
    for person in people:
        assert person.errors == []
        person.context.close()


def test_an_administrator_schedules_a_recurring_arena_and_cancels_it(
    browser: Browser, server: LiveServer
) -> None:
    create_admin(server, "root")
    person = arrive(browser, server.url)
    root = person.page
    log_in(root, "root")
    root.get_by_role("link", name="Admin").click()
    section = root.locator('[data-section="admin-tournaments"]')
    expect(section).to_contain_text("No tournament is scheduled or running.")
    section.locator("summary", has_text="New tournament").click()
    form = section.get_by_role("form", name="New tournament")
    fill_arena(form, "Hourly blitz", starts_in=30, length="20")
    form.get_by_label("Repeat every", exact=False).fill("60")
    form.get_by_role("button", name="Create tournament").click()

    row = section.locator("tr", has_text="Hourly blitz")
    expect(row).to_contain_text(re.compile(r"starts in (29:[0-5]\d|30:00), every 60 min"))

    # Before the start it may be changed; its start stays where it was.
    row.get_by_role("link", name="Hourly blitz").click()
    expect(root.get_by_role("timer")).to_have_text(re.compile(r"^Starts in (29:[0-5]\d|30:00)$"))
    root.get_by_role("button", name="Edit").click()
    edit = root.get_by_role("form", name="Change the tournament")
    expect(edit.get_by_label("Repeat every", exact=False)).to_have_value("60")
    edit.get_by_label("Name").fill("Hourly bullet")
    edit.get_by_label("Clock: minutes each").fill("1")
    edit.get_by_role("button", name="Save changes").click()
    expect(root.get_by_role("heading", name="Hourly bullet")).to_be_visible()
    expect(root.get_by_text("Arena · English draughts · 1+0 · casual")).to_be_visible()
    expect(root.get_by_role("timer")).to_have_text(re.compile(r"^Starts in 29:[0-5]\d$"))
    expect(edit).to_have_count(0)

    root.get_by_role("link", name="Admin").click()
    row = section.locator("tr", has_text="Hourly bullet")
    row.get_by_role("button", name="Cancel tournament Hourly bullet").click()
    row.get_by_label("Reason for cancelling Hourly bullet").fill("club closed today")
    row.get_by_role("button", name="Confirm cancelling Hourly bullet").click()
    expect(row).to_have_count(0)
    expect(section).to_contain_text("No tournament is scheduled or running.")
    # The audit log has it, with the reason; the tournament's page says why.
    audit = root.locator('[data-section="admin-audit"]')
    expect(audit).to_contain_text("tournament.cancel")
    expect(audit).to_contain_text("club closed today")

    # The list keeps it among the finished ones, as cancelled; nothing else was scheduled.
    root.get_by_role("link", name="Tournaments").click()
    expect(root.locator('[data-section="finished"]')).to_contain_text("Hourly bullet")
    expect(root.locator('[data-section="finished"]')).to_contain_text("cancelled")
    expect(root.locator('[data-section="upcoming"]')).to_contain_text("No tournament is scheduled.")
    root.locator('[data-section="finished"]').get_by_role("link", name="Hourly bullet").click()
    expect(root.get_by_role("timer")).to_have_text("Cancelled: club closed today")
    assert person.errors == []
    person.context.close()
