"""A player's page over a link that breaks (issue 32): a `TcpProxy` between Chromium and the
server cuts the link (both sides closed) or stalls it (nothing forwarded, nothing closed) while
the opponent, straight to the server, plays on. What the player must see: clocks from the
server's times after catching up, a stall said within 5 s, a move made meanwhile pending and
then played once (or refused in words), premoves, and the game's moves steppable while it goes
on."""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from urllib.parse import urlsplit

import httpx
import pytest
from playwright.sync_api import Browser, expect

from tests.e2e.conftest import LiveServer
from tests.e2e.link import (
    Player,
    click_move,
    clock_error_ms,
    frame_arrival_ms,
    square,
    start_game,
)
from tests.support.tcp_proxy import TcpProxy, tcp_proxy

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(120)]

# Said on the page once a stall is seen.
STALLED = re.compile("No answer from the server")


@pytest.fixture
def proxy(server: LiveServer) -> Iterator[TcpProxy]:
    port = urlsplit(server.url).port
    assert port is not None
    with tcp_proxy(port) as running:
        yield running


def test_after_a_cut_that_missed_two_moves_both_clocks_agree_with_the_server(
    browser: Browser, server: LiveServer, proxy: TcpProxy
) -> None:
    person, table, token = start_game(browser, proxy.url, server.url)
    page = person.page
    black_phone = Player.connect(server.url, token)  # Black's other device
    table.page_plays()
    table.client_plays()
    table.page_plays()  # both first moves made: White's clock runs
    expect(page.locator(".move-list .move")).to_have_count(3)

    proxy.cut()
    expect(page.locator(".conn")).not_to_have_text("Connected")
    time.sleep(1.0)
    table.client_plays()  # missed: White moves
    time.sleep(1.0)
    last = table.client_plays(by=black_phone)  # missed: Black moves from the other device
    time.sleep(0.5)
    proxy.restore()

    expect(page.locator(".conn")).to_have_text("Connected")
    expect(page.locator(".move-list .move")).to_have_count(5)
    error = clock_error_ms(page, last)
    print(f"clock error after a cut with two missed moves: {error:.0f} ms")
    assert error <= 100
    assert person.errors == []
    black_phone.close()
    table.white.close()


def test_a_stall_is_said_within_5_s_and_a_move_made_meanwhile_is_played_once(
    browser: Browser, server: LiveServer, proxy: TcpProxy
) -> None:
    person, table, _ = start_game(browser, proxy.url, server.url)
    page = person.page
    table.page_plays()
    table.client_plays()
    page.evaluate(
        """() => {
          const conn = document.querySelector(".conn");
          new MutationObserver(() => {
            if (conn.dataset.state === "stalled" && !window.__stalledAt)
              window.__stalledAt = performance.now();
          }).observe(conn, { attributes: true });
        }"""
    )

    proxy.stall()
    stalled_at = page.evaluate("performance.now()")
    move = table.legal()[0]
    click_move(page, move)
    # Shown made, and said to be on its way.
    expect(page.locator(".move-status")).to_have_text(f"Sending {move}…")
    landing = int(re.split(r"[-x]", move)[-1])
    expect(square(page, landing)).to_have_attribute("aria-label", re.compile("move being sent"))
    expect(page.locator(".conn")).to_have_text(STALLED, timeout=5000)
    seen_after = page.evaluate("window.__stalledAt") - stalled_at
    print(f"stall seen after {seen_after:.0f} ms")
    expect(page.locator(".move-status")).to_contain_text("not sent yet")

    proxy.restore()
    expect(page.locator(".conn")).to_have_text("Connected")
    event = table.white.expect("move", game=table.game, ply=3)
    assert event["move"] == move
    expect(page.locator(".move-list .move")).to_have_count(3)
    expect(page.locator(".move-status")).to_be_hidden()
    expect(page.locator(".game-error")).to_have_text("")
    # Played once: the server holds three moves, and its next turn is White's.
    record = httpx.get(f"{server.url}/api/games/{table.game}").json()
    assert [m["move"] for m in record["moves"]][2:] == [move]
    assert person.errors == []
    table.white.close()


def test_a_move_made_in_a_stall_that_cannot_be_played_any_more_is_refused_in_words(
    browser: Browser, server: LiveServer, proxy: TcpProxy
) -> None:
    person, table, _ = start_game(browser, proxy.url, server.url)
    page = person.page
    table.page_plays()
    table.client_plays()
    proxy.stall()
    move = table.legal()[0]
    click_move(page, move)
    expect(page.locator(".move-status")).to_contain_text(move)
    expect(page.locator(".conn")).to_have_text(STALLED)
    table.white.send(type="resign", game=table.game)
    table.white.expect("game_ended")
    proxy.restore()
    expect(page.locator(".game-error")).to_have_text(
        f"Your move {move} was not played: the game is over."
    )
    expect(page.locator(".move-status")).to_be_hidden()
    record = httpx.get(f"{server.url}/api/games/{table.game}").json()
    assert len(record["moves"]) == 2
    assert person.errors == []
    table.white.close()


def test_a_premove_is_shown_cancellable_sent_at_once_or_refused_in_words(
    browser: Browser, server: LiveServer
) -> None:
    person, table, _ = start_game(browser, server.url, server.url)
    page = person.page
    table.page_plays("9-13")  # White to move: Black may premove

    # A premove is shown on its squares and in words, and can be cancelled.
    click_move(page, "10-14")
    expect(page.locator(".move-status")).to_have_text("Premove 10-14. Cancel premove")
    expect(square(page, 14)).to_have_attribute("aria-label", re.compile("premove"))
    page.get_by_role("button", name="Cancel premove").click()
    expect(page.locator(".move-status")).to_be_hidden()
    table.client_plays(move="21-17")
    expect(page.locator(".player-bar.bottom .turn")).to_have_text("your move")
    table.page_plays("5-9")

    # Made during White's turn, it goes the moment White's move arrives.
    click_move(page, "11-15")
    expect(page.locator(".move-status")).to_have_text("Premove 11-15. Cancel premove")
    white_move = table.client_plays(move="24-20")
    sent = table.white.expect("move", game=table.game, ply=table.ply + 1)
    assert sent["move"] == "11-15"
    table.played("11-15")
    arrived = frame_arrival_ms(page, "move", game=table.game, ply=white_move["ply"])
    delay = sent["at"] - arrived
    print(f"premove reached the server {delay:.1f} ms after the opponent's move reached the page")
    assert delay < 1000
    expect(page.locator(".move-list .move")).to_have_count(table.ply)

    # A premove that White's move makes illegal is refused in words (Black must capture).
    click_move(page, "10-14")
    expect(page.locator(".move-status")).to_have_text("Premove 10-14. Cancel premove")
    table.client_plays(move="17-14")
    expect(page.locator(".game-error")).to_have_text(
        "Premove 10-14 not played: you must capture (9x18, 10x17)."
    )
    expect(page.locator(".player-bar.bottom .turn")).to_have_text("your move")
    assert person.errors == []
    table.white.close()


def test_the_moves_of_a_game_in_progress_can_be_stepped_through_and_the_lag_is_shown(
    browser: Browser, server: LiveServer
) -> None:
    person, table, _ = start_game(browser, server.url, server.url)
    page = person.page
    for _ in range(2):
        table.page_plays()
        table.client_plays()
    # The lag, from the measured round trip, beside the connection badge.
    expect(page.get_by_role("status", name=re.compile(r"^Lag: \d+ ms$"))).to_be_visible()

    # A click on a move shows the position after it; the game goes on meanwhile.
    page.locator('.move-list [data-ply="1"]').click()
    status = page.locator(".move-status")
    expect(status).to_have_text("Position after move 1 of 4. Back to the game")
    expect(square(page, 13)).to_have_attribute("aria-label", re.compile("black man"))
    expect(square(page, 9)).to_have_attribute("aria-label", re.compile("empty"))
    expect(square(page, 5)).to_have_attribute("aria-label", re.compile("black man"))
    page.keyboard.press("ArrowRight")
    expect(status).to_have_text("Position after move 2 of 4. Back to the game")
    expect(page.locator('.move-list [aria-current="step"]')).to_have_attribute("data-ply", "2")
    page.keyboard.press("End")
    expect(status).to_be_hidden()
    expect(page.locator(".board")).to_have_class(re.compile("interactive"))

    # Opened in the middle of the game, the earlier positions come from the archive.
    page.reload()
    expect(page.locator(".move-list .move")).to_have_count(4)
    page.locator(".move-list").focus()
    page.keyboard.press("Home")
    expect(status).to_have_text("Starting position (4 moves played). Back to the game")
    expect(square(page, 9)).to_have_attribute("aria-label", re.compile("black man"))
    expect(square(page, 21)).to_have_attribute("aria-label", re.compile("white man"))
    page.get_by_role("button", name="Back to the game").click()
    expect(status).to_be_hidden()
    table.page_plays()
    assert person.errors == []
    table.white.close()
