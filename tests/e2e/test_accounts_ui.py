"""Signing in and registering are separate forms: the register form states the rules for names
and passwords before anything is typed, and wants the password twice."""

from __future__ import annotations

import pytest
from playwright.sync_api import Browser, expect

from tests.e2e.people import PASSWORD, arrive

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(300)]


def test_sign_in_and_register_are_separate_and_register_wants_the_password_twice(
    browser: Browser, server_url: str
) -> None:
    person = arrive(browser, server_url)
    page = person.page

    # The sign-in form: a name, one password, and Enter logs in (it cannot register).
    page.get_by_role("button", name="Sign in").click()
    dialog = page.get_by_role("dialog")
    expect(dialog.get_by_role("tab", name="Sign in")).to_have_attribute("aria-selected", "true")
    expect(dialog.get_by_label("Password again")).to_have_count(0)
    expect(dialog.get_by_role("button", name="Register")).to_have_count(0)
    dialog.get_by_label("Name").fill("newcomer")
    dialog.get_by_label("Password", exact=True).fill(PASSWORD)
    dialog.get_by_label("Password", exact=True).press("Enter")
    expect(dialog.get_by_role("alert")).not_to_be_empty()
    expect(page.locator("#account")).not_to_contain_text("newcomer")

    # The register form, one tab away, says the rules up front.
    dialog.get_by_role("tab", name="Create an account").click()
    expect(dialog).to_contain_text("3 to 20 characters: letters, digits, _ and -")
    expect(dialog).to_contain_text("At least 8 characters, at least 4 of them different")
    dialog.get_by_label("Name").fill("newcomer")
    dialog.get_by_label("Password", exact=True).fill(PASSWORD)
    dialog.get_by_label("Password again").fill(PASSWORD + "x")
    dialog.get_by_role("button", name="Register").click()
    expect(dialog.get_by_role("alert")).to_have_text(
        "The two passwords differ: type the same password twice."
    )
    expect(page.locator("#account")).not_to_contain_text("newcomer")

    dialog.get_by_label("Password again").fill(PASSWORD)
    dialog.get_by_label("Password again").press("Enter")
    expect(page.locator("#account")).to_contain_text("newcomer")
    assert person.errors == []
    person.context.close()
