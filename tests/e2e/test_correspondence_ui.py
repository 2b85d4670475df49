"""Correspondence games in the browser: a table opened with days per move is listed so, its
clocks read in days, and a player's conditional moves answer the opponent at once."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import Browser, expect

from tests.e2e.people import arrive, expect_moves, open_table, register, square

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(300)]


def test_a_correspondence_table_is_listed_and_played_in_days(
    browser: Browser, server_url: str
) -> None:
    people = [arrive(browser, server_url), arrive(browser, server_url)]
    ann, ben = (person.page for person in people)
    register(ann, "ann_corr")
    register(ben, "ben_corr")
    table_id = open_table(ann, "english-casual", colour="black", clock=None, days=3)
    listed = ben.locator(f'[data-table="{table_id}"]')
    expect(listed).to_contain_text("3 days per move")
    ben.get_by_role("button", name=f"Sit at table {table_id}").click()
    for page in (ann, ben):
        for colour in ("black", "white"):
            clock = page.locator(f'.clock[data-colour="{colour}"]')
            expect(clock).to_have_text(re.compile(r"^(3d 0h|2d 23h)$"))
    square(ann, 11).click()
    square(ann, 15).click()
    expect_moves(ben, ["11-15"])
    # Ann answers Ben's likely move ahead of time; Ben never sees it.
    panel = ann.get_by_role("region", name="Conditional moves")
    expect(panel.get_by_role("status")).to_have_text("None stored.")
    panel.get_by_label("Lines: their move, your reply…").fill("22-18 15x22\n23-19 8-11")
    panel.get_by_role("button", name="Save conditional moves").click()
    expect(panel.get_by_role("status")).to_have_text("2 lines waiting for your opponent's move.")
    theirs = ben.get_by_role("region", name="Conditional moves")
    expect(theirs.get_by_role("status")).to_have_text(
        "Your move: conditional moves wait for your opponent's."
    )
    expect(theirs.get_by_label("Lines: their move, your reply…")).to_be_hidden()
    square(ben, 22).click()
    square(ben, 18).click()
    expect_moves(ben, ["11-15", "22-18", "15x22"])  # played for Ann at once
    expect_moves(ann, ["11-15", "22-18", "15x22"])
    for person in people:
        assert person.errors == []
        person.context.close()
