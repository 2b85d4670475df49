"""The browser client under its Content-Security-Policy: every page works, and Chromium reports no
policy violation and no console error on the way (lobby, sign-in, a table with its board and
live socket, the archive, a player's page, the admin page)."""

from __future__ import annotations

import pytest
from playwright.sync_api import Browser, ConsoleMessage, expect

from tests.e2e.conftest import LiveServer
from tests.e2e.people import arrive, open_table, register

pytestmark = [pytest.mark.e2e]

# Collected in the page before any of its own scripts run; an init script is the browser's own,
# so the policy does not apply to it.
LISTEN = """
window.__violations = [];
document.addEventListener("securitypolicyviolation", (event) => {
  window.__violations.push(`${event.violatedDirective}: ${event.blockedURI}`);
});
"""


def test_the_client_runs_under_its_policy_without_violations(
    browser: Browser, server: LiveServer
) -> None:
    person = arrive(browser, server.url)
    page = person.page
    console: list[str] = []

    def keep(message: ConsoleMessage) -> None:
        if message.type == "error":
            console.append(message.text)

    page.on("console", keep)
    page.add_init_script(LISTEN)
    page.reload()
    response = page.request.get("/")
    assert "script-src 'self'" in response.headers["content-security-policy"]

    register(page, "policy")  # the live socket reconnects under connect-src
    table = open_table(page, "english-casual", colour="black", clock=(5, 0))
    expect(page.locator(".board [data-square]")).to_have_count(32)
    violations = page.evaluate("window.__violations")
    for route in ("#/games", "#/players/policy", "#/admin", f"#/table/{table}", "#/"):
        page.goto("/" + route)
        page.wait_for_load_state("networkidle")
        violations += page.evaluate("window.__violations")
    expect(page.locator(".conn")).to_have_text("Connected")

    assert violations == []
    assert [text for text in console if "Content Security Policy" in text] == []
    # The admin page refuses a player (403): the one error the console may hold.
    assert [text for text in console if "403" not in text] == []
    assert person.errors == []
    person.context.close()
