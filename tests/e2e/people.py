"""The people of the browser tests: one isolated browser context each, and what they do often."""

from __future__ import annotations

import re
import time
from dataclasses import dataclass, field

from playwright.sync_api import (
    Browser,
    BrowserContext,
    Locator,
    Page,
    Response,
    ViewportSize,
    WebSocket,
    WebSocketRoute,
    expect,
)

PASSWORD = "correct-horse-42"
WAIT_MS = 20_000

# The server shares two cores with the browser: give visible state time to arrive.
expect.set_options(timeout=WAIT_MS)


# What each page of the test running now did (its addresses, console errors, socket closes):
# printed with a failure (tests/e2e/conftest.py), so that a failure on a busy machine says
# where a page went and what its socket did.
JOURNAL: list[str] = []
PAGES: list[Page] = []  # the pages of the test running now, in the order they opened


def keep_journal(page: Page) -> None:
    PAGES.append(page)
    who = f"page {len(PAGES)}"
    start = time.monotonic()

    def note(what: str) -> None:
        JOURNAL.append(f"{time.monotonic() - start:7.2f}s {who}: {what}")

    page.on("framenavigated", lambda frame: frame.parent_frame is None and note(f"at {frame.url}"))
    page.on("console", lambda msg: msg.type in ("error", "warning") and note(f"console {msg.text}"))
    page.on("pageerror", lambda exc: note(f"error {exc}"))
    page.on("crash", lambda _: note("crashed"))

    def answered(response: Response) -> None:
        if "/api/" in response.url:
            path = response.url.split("/api/", 1)[1][:120]
            note(f"{response.request.method} /api/{path} -> {response.status}")

    page.on("response", answered)
    page.on(
        "requestfailed",
        lambda request: (
            "/api/" in request.url
            and note(f"{request.method} {request.url} failed: {request.failure}")
        ),
    )

    def watch_socket(socket: WebSocket) -> None:
        note(f"socket open {socket.url}")
        socket.on("close", lambda _: note("socket closed"))

    page.on("websocket", watch_socket)


@dataclass
class Person:
    """One browser context (its own storage and socket) showing one page of the client."""

    context: BrowserContext
    page: Page
    errors: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        keep_journal(self.page)


class Cable:
    """A page's websocket, passed through the test so that it can cut it and keep it down."""

    def __init__(self) -> None:
        self.down = False
        self.open: list[tuple[WebSocketRoute, WebSocketRoute]] = []

    def connect(self, page_side: WebSocketRoute) -> None:
        if self.down:
            page_side.close()
            return
        self.open.append((page_side, page_side.connect_to_server()))

    def cut(self) -> None:
        self.down = True
        for page_side, server_side in self.open:
            page_side.close()
            server_side.close()
        self.open.clear()


def arrive(
    browser: Browser,
    base_url: str,
    viewport: ViewportSize | None = None,
    cable: Cable | None = None,
) -> Person:
    context = browser.new_context(base_url=base_url, viewport=viewport)
    context.set_default_timeout(WAIT_MS)
    person = Person(context, context.new_page())
    person.page.on("pageerror", lambda exc: person.errors.append(str(exc)))
    if cable is not None:
        person.page.route_web_socket(re.compile(r"/ws(\?|$)"), cable.connect)
    person.page.goto("/")
    return person


def register(page: Page, name: str) -> None:
    """Create an account with the register form (the password typed twice)."""
    page.get_by_role("button", name="Register").click()
    dialog = page.get_by_role("dialog")
    dialog.get_by_label("Name").fill(name)
    dialog.get_by_label("Password", exact=True).fill(PASSWORD)
    dialog.get_by_label("Password again").fill(PASSWORD)
    dialog.get_by_role("button", name="Register").click()
    expect(page.locator("#account")).to_contain_text(name)
    # Signing in reconnects the live socket with the new token.
    expect(page.locator(".conn")).to_have_text("Connected")


def square(page: Page, number: int) -> Locator:
    return page.locator(f'.board [data-square="{number}"]')


def expect_moves(page: Page, moves: list[str]) -> None:
    expect(page.locator(".move-list .move")).to_have_text(moves)


def open_table(
    page: Page,
    room: str,
    *,
    colour: str,
    clock: tuple[int, int] | None,
    fen: str = "",
    private: bool = False,
    days: int | None = None,
) -> int:
    """Open a table from the lobby's dialog (`days`: by correspondence, days per move); returns
    its id once the table page shows."""
    page.locator(f'[data-room="{room}"]').get_by_role("button", name="Open a table").click()
    dialog = page.get_by_role("dialog")
    dialog.get_by_label("Your colour").select_option(colour)
    if clock is None:
        dialog.get_by_label("Timed game").uncheck()
    else:
        dialog.get_by_label("Timed game").check()
        dialog.get_by_label("Minutes").fill(str(clock[0]))
        dialog.get_by_label("Increment (s)").fill(str(clock[1]))
    if days is not None:
        dialog.get_by_label("Correspondence").select_option(str(days))
    if fen:
        dialog.get_by_label("Start position (PDN FEN, optional)").fill(fen)
    if private:
        dialog.get_by_label("Private").check()
    dialog.get_by_role("button", name="Open table").click()
    expect(page).to_have_url(re.compile(r"#/table/\d+(\?invite=.+)?$"))
    return int(re.findall(r"#/table/(\d+)", page.url)[0])


def two_players_and_a_spectator(browser: Browser, server_url: str) -> tuple[list[Person], int]:
    """ann (Black) and ben (White) at an untimed casual table, carl watching; the people and
    the table's id."""
    people = [arrive(browser, server_url) for _ in range(3)]
    ann, ben, carl = (person.page for person in people)
    register(ann, "ann")
    register(ben, "ben")
    table_id = open_table(ann, "english-casual", colour="black", clock=None)
    ben.get_by_role("button", name=f"Sit at table {table_id}").click()
    expect(ben.locator(".player-bar.bottom")).to_have_attribute("data-colour", "white")
    carl.goto(f"/#/table/{table_id}")
    expect(carl.locator(".player-bar.bottom")).to_contain_text("ben")
    return people, table_id
