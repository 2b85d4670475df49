"""A whole game in the browser: register, open a table, sit, watch, play to the end, replay.

The game starts from a set position (the lobby's "start position" field) so that it is short and
still holds everything a player meets: a capture that must be taken (an attempt to ignore it is
refused, first by the board, then by the server for a typed move), a double jump, and a real win
when White has no piece left. Checked against the rules engine:

    B:W9,23,26:B5,16   1. 5x14 (forced; 16-19 is refused)   23-18   2. 14x23x30   Black wins
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page, ViewportSize, expect

from app.rules import Game, get_variant
from tests.e2e.people import Cable, arrive, expect_moves, open_table, register, square

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(300)]

# The README's screenshots are rewritten only by `make screenshots` (CHECKERS_SCREENSHOTS=1), so
# that `make test` leaves the tree clean; otherwise they go to the test's temporary directory.
SCREENSHOTS = Path(__file__).resolve().parents[2] / "docs" / "screenshots"
START_FEN = "B:W9,23,26:B5,16"
MOVES = ["5x14", "23-18", "14x23x30"]
PHONE: ViewportSize = {"width": 360, "height": 740}


def test_the_game_sequence_is_legal_and_ends_with_a_black_win() -> None:
    """The scripted game really has a forced capture, a double jump and a no-moves win."""
    game = Game(get_variant("english"), start_fen=START_FEN)
    assert [str(m) for m in game.legal_moves()] == ["5x14"]
    for text in MOVES:
        game.play(text)
    outcome = game.outcome()
    assert outcome is not None
    assert (outcome.termination.value, outcome.result()) == ("no_moves", "1-0")


def settle(page: Page) -> None:
    """Let the board's animations finish, for a still picture."""
    page.evaluate("Promise.all(document.getAnimations().map((a) => a.finished))")


@pytest.fixture
def shots(tmp_path: Path) -> Path:
    """Where the screenshots go: docs/screenshots with CHECKERS_SCREENSHOTS=1, else a temp dir."""
    folder = SCREENSHOTS if os.environ.get("CHECKERS_SCREENSHOTS") == "1" else tmp_path
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def test_two_players_and_a_spectator_play_a_game_and_find_it_in_the_archive(
    browser: Browser, server_url: str, shots: Path
) -> None:
    carol_cable = Cable()
    people = [
        arrive(browser, server_url),
        arrive(browser, server_url, viewport=PHONE),
        arrive(browser, server_url, cable=carol_cable),
    ]
    alice, bob, carol = (person.page for person in people)
    pages = (alice, bob, carol)

    # Two players register; the spectator stays anonymous. Everyone sees the lobby live.
    register(alice, "alice")
    register(bob, "bob")
    for page in pages:
        expect(page.locator('[data-room="english-casual"]')).to_be_visible()

    # Alice opens a table from a set position, playing Black, with a 5+0 clock.
    table_id = open_table(alice, "english-casual", colour="black", clock=(5, 0), fen=START_FEN)
    expect(alice.get_by_text("Waiting for an opponent…")).to_be_visible()

    # The new table appears in the other lobbies without a reload; Bob sits.
    bob.get_by_role("button", name=f"Sit at table {table_id}").click()
    expect(bob).to_have_url(re.compile(rf"#/table/{table_id}\?sit=1$"))
    table_in_lobby = carol.locator(f'[data-table="{table_id}"]')
    expect(table_in_lobby).to_contain_text("alice")
    expect(table_in_lobby).to_contain_text("bob")
    expect(table_in_lobby).to_contain_text("playing")
    # Who is online in the room: both players; an anonymous spectator challenges nobody.
    online = carol.get_by_role("region", name="Who is online")
    expect(online.locator("li")).to_have_text(
        [f"alice (1500?) table {table_id}", f"bob (1500?) table {table_id}"]
    )
    carol.screenshot(path=str(shots / "lobby.png"), full_page=True)
    carol.get_by_role("link", name=f"Watch table {table_id}").click()
    expect(carol).to_have_url(re.compile(rf"#/table/{table_id}$"))

    # Each player sees their own side at the bottom; the spectator sees White at the bottom.
    expect(alice.locator(".player-bar.bottom")).to_contain_text("alice")
    expect(bob.locator(".player-bar.bottom")).to_contain_text("bob")
    expect(carol.locator(".player-bar.bottom")).to_contain_text("bob")
    # No clock runs before both first moves: Black is counted down to her first move instead.
    expect(alice.locator(".player-bar.bottom .clock")).not_to_have_class(re.compile("running"))
    expect(alice.get_by_label("First move countdown")).to_contain_text("first move within")
    for page in pages:
        expect(square(page, 16)).to_have_attribute("aria-label", re.compile("black man"))

    # Chat at the table reaches players and spectators; an anonymous spectator may only read.
    alice.get_by_role("textbox", name="Chat message").fill("good luck")
    alice.get_by_role("button", name="Send").click()
    for page in pages:
        expect(page.locator(".chat-log")).to_contain_text("alice: good luck")
    expect(carol.get_by_role("button", name="Sign in to chat")).to_be_visible()

    # Black must capture: the notice shows and only the capturing man can be picked.
    expect(alice.locator(".capture-notice")).to_be_visible()
    expect(alice.locator(".capture-notice")).to_have_text("Capture is mandatory.")
    square(alice, 16).click()
    expect(alice.locator(".game-error")).to_contain_text("Capture is mandatory")
    expect(square(alice, 19)).not_to_have_class(re.compile("target"))

    # Typed in the move box, the same ignored capture reaches the server, which refuses it; the
    # refusal is said in plain words (no engine position).
    alice.get_by_label("Move in PDN notation").fill("16-19")
    alice.get_by_role("button", name="Play").click()
    expect(alice.locator(".game-error")).to_have_text("You must capture: 5x14.")
    expect(square(alice, 16)).to_have_attribute("aria-label", re.compile("black man"))
    expect_moves(carol, [])

    # The capture, chosen with the keyboard: the man on 5, then arrows to its landing square 14
    # (Alice plays Black, so her board is turned: "up" goes towards White).
    square(alice, 5).focus()
    alice.keyboard.press("Enter")
    expect(square(alice, 14)).to_have_class(re.compile("target"))
    expect(alice.locator("#toast")).not_to_have_class(re.compile("shown"))
    settle(alice)
    alice.screenshot(path=str(shots / "board.png"), full_page=True)
    for key in ("ArrowUp", "ArrowUp", "ArrowLeft"):
        alice.keyboard.press(key)
    expect(square(alice, 14)).to_be_focused()
    alice.keyboard.press("Enter")
    for page in pages:
        expect_moves(page, MOVES[:1])
        expect(square(page, 14)).to_have_attribute("aria-label", re.compile("black man"))
        expect(square(page, 9)).to_have_attribute("aria-label", re.compile("empty"))
    expect(alice.locator(".capture-notice")).to_be_hidden()

    # The spectator loses her connection: the page says so and keeps trying.
    carol_cable.cut()
    expect(carol.locator(".conn")).to_have_text("Reconnecting…")

    # White answers by dragging a man, on a phone-sized screen.
    expect(bob.get_by_label("First move countdown")).to_contain_text("first move within")
    square(bob, 23).drag_to(square(bob, 18))
    for page in (alice, bob):
        expect_moves(page, MOVES[:2])
    expect_moves(carol, MOVES[:1])

    # Back online, the spectator catches up with the move she missed.
    carol_cable.down = False
    expect(carol.locator(".conn")).to_have_text("Connected")
    for page in pages:
        expect_moves(page, MOVES[:2])
        expect(square(page, 18)).to_have_attribute("aria-label", re.compile("white man"))

    # The double jump, clicking each landing square: 14, then 23, then 30.
    square(alice, 14).click()
    square(alice, 23).click()
    expect(square(alice, 23)).to_have_class(re.compile("visited"))
    square(alice, 30).click()
    for page in pages:
        expect_moves(page, MOVES)
        expect(square(page, 30)).to_have_attribute("aria-label", re.compile("black king"))
    # Each player reads the end from their own side; the spectator in neutral words.
    expect(alice.locator(".game-over")).to_have_text("You won — White cannot move.")
    expect(bob.locator(".game-over")).to_have_text("You lost — you cannot move.")
    expect(carol.locator(".game-over")).to_have_text("Black wins: White cannot move.")

    # Nothing overflows the phone-sized screen.
    assert bob.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]

    # The archive lists the game; its replay steps with the keyboard; the PDN downloads.
    carol.get_by_role("link", name="Replay this game").click()
    expect(carol).to_have_url(re.compile(r"#/games/\d+$"))
    game_id = int(carol.url.rsplit("/", 1)[1])
    carol.goto("/#/games?player=alice")
    carol.get_by_role("link", name=f"Replay game {game_id}").click()
    expect(carol.get_by_text("Move 3 of 3")).to_be_visible()
    expect(carol.get_by_test_id("result")).to_contain_text("Black wins: White cannot move.")
    carol.keyboard.press("Home")
    expect(carol.get_by_text("Move 0 of 3")).to_be_visible()
    expect(square(carol, 9)).to_have_attribute("aria-label", re.compile("white man"))
    carol.keyboard.press("ArrowRight")
    carol.keyboard.press("ArrowRight")
    expect(carol.get_by_text("Move 2 of 3")).to_be_visible()
    expect(square(carol, 18)).to_have_attribute("aria-label", re.compile("white man"))
    carol.get_by_role("button", name="Previous move").click()
    expect(carol.get_by_text("Move 1 of 3")).to_be_visible()
    carol.get_by_role("button", name="Next move").click()
    settle(carol)
    carol.screenshot(path=str(shots / "replay.png"), full_page=True)

    with carol.expect_download() as download:
        carol.get_by_role("link", name="Download PDN").click()
    pdn = Path(download.value.path()).read_text()
    assert '[Black "alice"]' in pdn
    assert '[White "bob"]' in pdn
    assert START_FEN.split(":")[1] in pdn
    movetext = " ".join(re.sub(r"\{[^}]*\}", " ", pdn.split("\n\n", 1)[1]).split())
    assert re.fullmatch(r"1\. 5x14 (1\.\.\. )?23-18 2\. 14x23x30 1-0", movetext)

    people[2].context.grant_permissions(["clipboard-read", "clipboard-write"])
    carol.get_by_role("button", name="Copy PDN").click()
    expect(carol.locator("#toast")).to_have_text("PDN copied to the clipboard")
    assert "14x23x30" in carol.evaluate("navigator.clipboard.readText()")

    # Alice's player page: her record and the game.
    carol.get_by_role("link", name="alice").click()
    expect(carol.get_by_role("heading", name="alice")).to_be_visible()
    record = carol.get_by_role("table", name="Record per variant").get_by_role("row").nth(1)
    expect(record.locator("td")).to_have_text(["1", "1", "0", "0", "0"])
    expect(carol.get_by_role("link", name=f"Replay game {game_id}")).to_be_visible()

    for person in people:
        assert person.errors == []
        person.context.close()


def test_the_lobby_shows_how_many_people_watch_each_table(
    browser: Browser, server_url: str
) -> None:
    host, onlooker, watcher = (arrive(browser, server_url).page for _ in range(3))
    register(host, "hal")
    table_id = open_table(host, "english-casual", colour="black", clock=None)
    watching = onlooker.locator(f'[data-table="{table_id}"] .spectators')
    expect(watching).to_have_text("0 watching")

    # An anonymous visitor opens the table: the lobby counts them; leaving, they are not.
    watcher.goto(f"/#/table/{table_id}")
    expect(watcher.locator(".board")).to_be_visible()
    expect(watching).to_have_text("1 watching")
    expect(watching).to_have_attribute("data-spectators", "1")
    watcher.goto("/#/")
    expect(watching).to_have_text("0 watching")
