"""Signing out in the browser: the token is revoked, and every tab that used it carries on as a
spectator (its socket, opened with that token, is closed by the server)."""

from __future__ import annotations

import pytest
from playwright.sync_api import Browser, expect

from tests.e2e.people import arrive, register

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(300)]


def test_signing_out_in_one_tab_signs_out_the_others(browser: Browser, server_url: str) -> None:
    person = arrive(browser, server_url)
    register(person.page, "tabitha")
    other = person.context.new_page()  # the same storage, so the same token
    other.goto("/")
    expect(other.locator("#account")).to_contain_text("tabitha")
    expect(other.locator(".conn")).to_have_text("Connected")

    person.page.get_by_role("button", name="Sign out").click()
    expect(person.page.get_by_role("button", name="Sign in")).to_be_visible()
    expect(person.page.locator(".conn")).to_have_text("Connected")  # again, as a spectator

    expect(other.get_by_text("Signed out: logged out")).to_be_visible()
    expect(other.get_by_role("button", name="Sign in")).to_be_visible()
    expect(other.locator(".conn")).to_have_text("Connected")
    assert person.errors == []
