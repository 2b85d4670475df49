"""Wherever a player is in the client, their games follow them: tables with a game of theirs in
progress stay watched in the background, and it becoming their move there is announced on any
page (sound, title, banner with a link), and so is the game's end; a table without a game in
progress is unwatched when they leave its page; a disconnected opponent shows a countdown to when
the win may be claimed."""

from __future__ import annotations

import json
import re

import pytest
from playwright.sync_api import Browser, Page, WebSocket, expect

from tests.e2e.people import Cable, arrive, expect_moves, open_table, register, square

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(300)]


class Frames:
    """Every JSON frame the page sends on its websockets from now on, and its latest socket."""

    def __init__(self, page: Page) -> None:
        self.sent: list[dict[str, object]] = []
        self.socket: WebSocket | None = None
        page.on("websocket", self.follow)

    def follow(self, socket: WebSocket) -> None:
        self.socket = socket

        def keep(payload: str | bytes) -> None:
            if isinstance(payload, str):
                self.sent.append(json.loads(payload))

        socket.on("framesent", keep)


def test_your_move_is_announced_on_another_page(browser: Browser, server_url: str) -> None:
    people = [arrive(browser, server_url), arrive(browser, server_url)]
    ida, jon = (person.page for person in people)
    frames = Frames(ida)
    register(ida, "ida")
    register(jon, "jon")
    table_id = open_table(ida, "english-casual", colour="black", clock=None)
    jon.get_by_role("button", name=f"Sit at table {table_id}").click()
    expect(square(ida, 11)).to_have_class(re.compile("movable"))
    square(ida, 11).click()
    square(ida, 15).click()
    expect_moves(jon, ["11-15"])

    # Ida reads the archive while Jon thinks: her game stays watched (no unwatch is sent).
    ida.get_by_role("link", name="Archive").click()
    expect(ida.get_by_role("heading", name="Game archive")).to_be_visible()
    ida.evaluate(
        """() => {
          window.sounds = [];
          window.addEventListener("checkers:sound", (e) => window.sounds.push(e.detail));
        }"""
    )
    # The lobby lists the game as Ida's, live.
    ida.get_by_role("link", name="Lobby").click()
    expect(ida.get_by_role("link", name=f"Back to table {table_id} (against jon)")).to_be_visible()
    ida.get_by_role("link", name="Archive").click()
    square(jon, 22).click()
    square(jon, 18).click()

    banner = ida.locator("#notify")
    expect(banner).to_contain_text(f"Table {table_id}: It is your move.")
    expect(ida).to_have_title(re.compile(r"^Your move! · "))
    assert ida.evaluate("window.sounds") == ["notice"]
    assert {"type": "unwatch", "table": table_id} not in frames.sent
    banner.get_by_role("link", name=f"Go to table {table_id}").click()
    expect(ida).to_have_url(re.compile(rf"#/table/{table_id}$"))
    expect(banner).to_be_hidden()
    expect(ida).not_to_have_title(re.compile("Your move!"))
    expect_moves(ida, ["11-15", "22-18"])

    # Away again, she hears of the game's end, in words from her side; it is no longer hers to
    # follow.
    ida.get_by_role("link", name="Lobby").click()
    expect(ida.get_by_role("link", name=f"Back to table {table_id} (against jon)")).to_be_visible()
    jon.get_by_role("button", name="Resign").click()
    jon.get_by_role("button", name="Confirm resignation").click()
    expect(banner).to_contain_text(f"Table {table_id}: Game over. You won — White resigned.")
    expect(ida).to_have_title(re.compile(r"^Game over! · "))
    expect(ida.get_by_role("link", name=re.compile("Back to table"))).to_have_count(0)

    for person in people:
        assert person.errors == []
        person.context.close()


def test_your_move_is_told_once_per_game_until_you_come_back_to_it(
    browser: Browser, server_url: str
) -> None:
    people = [arrive(browser, server_url), arrive(browser, server_url)]
    ida, jon = (person.page for person in people)
    register(ida, "ida")
    register(jon, "jon")
    table_id = open_table(ida, "english-casual", colour="black", clock=None)
    jon.get_by_role("button", name=f"Sit at table {table_id}").click()
    expect(square(ida, 9)).to_have_class(re.compile("movable"))
    square(ida, 9).click()
    square(ida, 13).click()
    expect_moves(jon, ["9-13"])
    ida.get_by_role("link", name="Lobby").click()
    back = ida.get_by_role("link", name=re.compile(f"Back to table {table_id}"))
    expect(back).to_have_text(f"Back to table {table_id} (against jon) · their move")
    ida.evaluate(
        """() => {
          window.sounds = [];
          window.addEventListener("checkers:sound", (e) => window.sounds.push(e.detail));
        }"""
    )
    square(jon, 24).click()
    square(jon, 19).click()
    banner = ida.locator("#notify")
    expect(banner).to_contain_text(f"Table {table_id}: It is your move.")
    expect(back).to_have_text(f"Back to table {table_id} (against jon) · your move")
    banner.get_by_role("button", name="Dismiss").click()
    expect(banner).to_be_hidden()

    # Ida moves from another tab; Jon answers: this tab, which has not been back to the table,
    # is not told again.
    other = people[0].context.new_page()
    other.goto(f"{server_url}/#/table/{table_id}")
    expect(square(other, 10)).to_have_class(re.compile("movable"))
    square(other, 10).click()
    square(other, 14).click()
    expect(back).to_have_text(f"Back to table {table_id} (against jon) · their move")
    expect_moves(jon, ["9-13", "24-19", "10-14"])
    square(jon, 28).click()
    square(jon, 24).click()
    expect(back).to_have_text(f"Back to table {table_id} (against jon) · your move")
    expect(banner).to_be_hidden()
    assert ida.evaluate("window.sounds") == ["notice"]
    assert ida.title() == "Lobby · Checkers"

    # Back at the table and away again, the next turn is told again.
    back.click()
    expect_moves(ida, ["9-13", "24-19", "10-14", "28-24"])
    square(other, 5).click()
    square(other, 9).click()
    ida.get_by_role("link", name="Lobby").click()
    expect_moves(jon, ["9-13", "24-19", "10-14", "28-24", "5-9"])
    square(jon, 32).click()
    square(jon, 28).click()
    expect(banner).to_contain_text(f"Table {table_id}: It is your move.")
    # (the table page played its own sounds meanwhile)
    assert ida.evaluate("window.sounds.filter((s) => s === 'notice')") == ["notice", "notice"]
    for person in people:
        assert person.errors == []
        person.context.close()


def test_leaving_a_waiting_table_unwatches_it(browser: Browser, server_url: str) -> None:
    person = arrive(browser, server_url)
    page = person.page
    frames = Frames(page)
    register(page, "kay")
    table_id = open_table(page, "english-casual", colour="white", clock=None)
    expect(page.get_by_text("Waiting for an opponent…")).to_be_visible()
    unwatch = {"type": "unwatch", "table": table_id}
    assert unwatch not in frames.sent
    assert frames.socket is not None
    with frames.socket.expect_event(
        "framesent", predicate=lambda payload: json.loads(payload) == unwatch
    ):
        page.get_by_role("link", name="Archive").click()
    assert person.errors == []
    person.context.close()


def test_a_disconnected_opponent_shows_a_countdown_to_the_claim(
    browser: Browser, server_url: str
) -> None:
    lee_cable = Cable()
    people = [arrive(browser, server_url), arrive(browser, server_url, cable=lee_cable)]
    max_, lee = (person.page for person in people)
    register(max_, "max")
    register(lee, "lee")
    table_id = open_table(max_, "english-casual", colour="black", clock=None)
    lee.get_by_role("button", name=f"Sit at table {table_id}").click()
    expect(square(max_, 11)).to_have_class(re.compile("movable"))
    square(max_, 11).click()
    square(max_, 15).click()
    expect_moves(lee, ["11-15"])
    # Both first moves made (before them an absent side's game is aborted at its deadline).
    square(lee, 22).click()
    square(lee, 18).click()
    expect_moves(max_, ["11-15", "22-18"])

    lee_cable.cut()
    top = max_.locator(".player-bar.top")
    expect(top).to_contain_text("(disconnected)")
    expect(top.get_by_role("timer", name="Claim countdown")).to_have_text(
        re.compile(r"^win claimable in [01]:\d\d$")
    )
    for person in people:
        assert person.errors == []
        person.context.close()
