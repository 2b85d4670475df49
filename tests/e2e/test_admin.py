"""The admin page: an administrator closes a table and bans a player, with reasons on record;
the audit log names the users; the computer's accounts are never offered a ban; a player whose
game an administrator ended reads the reason once."""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest
from playwright.sync_api import Browser, Page, expect

from tests.e2e.conftest import LiveServer
from tests.e2e.people import PASSWORD, arrive, open_table, register

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(300)]


def create_admin(server: LiveServer, name: str) -> None:
    """As an operator would: `checkers create-admin NAME` on the server's database."""
    env = os.environ | {"DATABASE_URL": server.database_url, "CHECKERS_ADMIN_PASSWORD": PASSWORD}
    subprocess.run(
        [sys.executable, "-m", "app.cli", "create-admin", name], env=env, check=True, timeout=60
    )


def log_in(page: Page, name: str) -> None:
    page.get_by_role("button", name="Sign in").click()
    dialog = page.get_by_role("dialog")
    dialog.get_by_label("Name").fill(name)
    dialog.get_by_label("Password").fill(PASSWORD)
    dialog.get_by_role("button", name="Log in").click()
    expect(page.locator("#account")).to_contain_text(name)


def answer(page: Page, reason: str, result: str | None = None) -> None:
    dialog = page.get_by_role("dialog")
    dialog.get_by_label("Reason").fill(reason)
    if result is not None:
        dialog.get_by_label("Game in progress").select_option(result)
    dialog.get_by_role("button", name="Confirm").click()


def test_an_administrator_closes_a_table_and_bans_a_player(
    browser: Browser, server: LiveServer
) -> None:
    create_admin(server, "root")
    people = [arrive(browser, server.url), arrive(browser, server.url)]
    root, ann = (person.page for person in people)
    register(ann, "ann")
    table_id = open_table(ann, "english-casual", colour="random", clock=None)

    # Only administrators see the page, or the link to it.
    ann.goto("/#/admin")
    # (The page it left may still show its own, empty, alert regions for a moment.)
    refusal = ann.get_by_role("alert").filter(has_text="Only administrators")
    expect(refusal).to_have_text("Only administrators may see this page.")
    expect(ann.get_by_role("link", name="Admin")).to_be_hidden()
    ann.goto(f"/#/table/{table_id}")

    log_in(root, "root")
    root.get_by_role("link", name="Admin").click()
    expect(root.get_by_role("heading", name="Administration")).to_be_visible()
    expect(root.locator('[data-room="english-casual"]')).to_contain_text("open")
    expect(root.locator(f'[data-table="{table_id}"]')).to_contain_text("ann")
    expect(root.locator('[data-user="ann"]')).to_contain_text("online")

    # Closing the table: the player there is told why.
    root.get_by_role("button", name=f"Close table {table_id}").click()
    answer(root, "maintenance")
    expect(root.locator(f'[data-table="{table_id}"]')).to_be_hidden()
    expect(ann.locator(".game-actions")).to_contain_text("maintenance")
    # Her chat does not turn into the spectators' (issue 32): the table's chat is over.
    expect(ann.locator(".chat-channel")).to_have_text(
        "The table is closed: its chat is kept here to read."
    )
    expect(ann.get_by_role("textbox", name="Chat message")).to_be_hidden()

    # Banning: the player is signed out at once, and cannot log in again.
    root.get_by_role("button", name="Ban ann").click()
    answer(root, "abusive chat")
    expect(root.locator('[data-user="ann"]')).to_contain_text("banned: abusive chat")
    expect(ann.get_by_role("button", name="Sign in")).to_be_visible()
    # The page says why, and keeps saying it until she dismisses it.
    expect(ann.locator("#notify")).to_contain_text("You were signed out: banned: abusive chat")
    log_in_dialog = ann.get_by_role("dialog")
    ann.get_by_role("button", name="Sign in").click()
    log_in_dialog.get_by_label("Name").fill("ann")
    log_in_dialog.get_by_label("Password").fill(PASSWORD)
    log_in_dialog.get_by_role("button", name="Log in").click()
    expect(log_in_dialog.get_by_role("alert")).to_contain_text("abusive chat")

    # The audit log keeps both actions with their reasons, and names the user (with the id).
    audit = root.locator('[data-section="admin-audit"]')
    expect(audit.locator('[data-action="table.close"]')).to_contain_text("maintenance")
    ban = audit.locator('[data-action="user.ban"]')
    expect(ban).to_contain_text("abusive chat")
    expect(ban.get_by_role("link", name="ann")).to_have_attribute("href", "#/players/ann")
    expect(ban).to_contain_text(re.compile(r"ann \(user \d+\)"))

    # The computer's accounts are listed, never offered a ban.
    computer = root.locator('[data-user="AI level 3"]')
    expect(computer).to_contain_text("ai")
    expect(computer.get_by_role("button")).to_have_count(0)

    for person in people:
        assert person.errors == []
        person.context.close()


def test_a_game_ended_by_an_administrator_says_why_once(
    browser: Browser, server: LiveServer
) -> None:
    create_admin(server, "root")
    people = [arrive(browser, server.url) for _ in range(3)]
    root, ann, ben = (person.page for person in people)
    register(ann, "ann")
    register(ben, "ben")
    table_id = open_table(ann, "english-casual", colour="black", clock=None)
    ben.get_by_role("button", name=f"Sit at table {table_id}").click()
    expect(ann.get_by_role("button", name="Resign")).to_be_visible()

    log_in(root, "root")
    root.goto("/#/admin")
    root.get_by_role("button", name=f"Close table {table_id}").click()
    answer(root, "server maintenance", "*")
    for page in (ann, ben):
        expect(page.locator(".game-over")).to_have_text(
            "Game aborted by an administrator (server maintenance)."
        )
        expect(page.locator(".game-actions")).to_contain_text("The table was closed.")
        # Said once on the page (the screen readers' announcement aside).
        said = page.locator("main").get_by_text("server maintenance")
        expect(said.and_(page.locator(":not(.visually-hidden)"))).to_have_count(1)
    for person in people:
        assert person.errors == []
        person.context.close()
