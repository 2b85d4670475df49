"""The inbox in the browser: the header counts unread notices as the server pushes them, a
notice that comes while the tab is hidden is shown by the browser, and the inbox page lists
them (newest first) and reads them."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import Browser, expect

from tests.e2e.people import arrive, expect_moves, open_table, register, square

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(300)]

# The browser's notifications, recorded (the permission granted, the tab hidden): headless
# Chromium shows none, so the page's calls are what can be checked.
RECORD_NOTIFICATIONS = """
  window.shown = [];
  window.Notification = class {
    static permission = "granted";
    static requestPermission() { return Promise.resolve("granted"); }
    constructor(title, options) { window.shown.push({ title, body: options.body }); }
    close() {}
  };
  Object.defineProperty(document, "hidden", { get: () => window.tabHidden === true });
"""


def test_the_inbox_counts_shows_and_reads_notices(browser: Browser, server_url: str) -> None:
    people = [arrive(browser, server_url), arrive(browser, server_url)]
    ann, ben = (person.page for person in people)
    ben.add_init_script(RECORD_NOTIFICATIONS)
    ben.reload()
    register(ann, "ann_inbox")
    register(ben, "ben_inbox")
    inbox_link = ben.locator(".inbox-link")
    expect(inbox_link).to_have_accessible_name("Inbox, nothing unread")
    table_id = open_table(ann, "english-casual", colour="black", clock=None, days=3)
    ben.get_by_role("button", name=f"Sit at table {table_id}").click()
    expect(inbox_link).to_have_accessible_name("Inbox, 1 unread")  # the game has started
    expect(ann.locator(".player-bar.top")).to_contain_text("ben_inbox")  # and ann sees it
    square(ann, 11).click()
    square(ann, 15).click()
    expect_moves(ben, ["11-15"])
    expect(inbox_link).to_have_accessible_name("Inbox, 2 unread")
    mine = f"Your move against ann_inbox (correspondence, table {table_id})."

    inbox_link.click()
    expect(ben.get_by_role("heading", name="Inbox")).to_be_visible()
    notices = ben.get_by_role("list", name="Notices").get_by_role("listitem")
    expect(notices).to_have_count(2)
    expect(notices.nth(0)).to_contain_text(mine)
    expect(notices.nth(1)).to_contain_text("Your correspondence game against ann_inbox")
    expect(inbox_link).to_have_accessible_name("Inbox, nothing unread")
    expect(ben.get_by_text("This server sends no e-mail.")).to_be_visible()
    # A notice that comes while the page is open is listed at once, and read; the tab being
    # hidden, the browser shows it too.
    ben.evaluate("window.tabHidden = true")
    ann.get_by_role("button", name="Resign").click()
    ann.get_by_role("button", name="Confirm resignation").click()
    ended = "Your correspondence game against ann_inbox has ended: 0-1."
    expect(notices.nth(0)).to_contain_text(ended)
    expect(inbox_link).to_have_accessible_name("Inbox, nothing unread")
    assert {"title": "Checkers", "body": ended} in ben.evaluate("window.shown")
    ben.evaluate("window.tabHidden = false")
    notices.nth(0).get_by_role("link").click()
    expect(ben).to_have_url(re.compile(rf"#/table/{table_id}$"))
    for person in people:
        assert person.errors == []
        person.context.close()
