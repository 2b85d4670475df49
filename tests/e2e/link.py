"""Browser tests over a link that breaks: a person's page reaches the server through a
`TcpProxy` that the test cuts or stalls, while their opponent (a protocol client in the test's
own thread, straight to the server) plays on. Shared by the tests and bench/table_link.py, which
prints the figures these scenarios measure.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import httpx
from playwright.sync_api import Browser, BrowserContext, Page, ViewportSize, expect
from websockets.sync.client import ClientConnection, connect

from app.rules import Game, get_variant
from tests.e2e.people import Person
from tests.support.ws import MEMBER_PASSWORD, subprotocols, ws_url

WAIT_S = 20.0

# Every frame the page receives, stamped with the page's wall clock on arrival (read by tests
# that time the page against the server, both on this machine's clock).
STAMP_FRAMES = """
(() => {
  window.__frames = [];
  const Native = window.WebSocket;
  window.WebSocket = class extends Native {
    constructor(...args) {
      super(...args);
      this.addEventListener("message", (event) => {
        window.__frames.push({ at: Date.now(), text: event.data });
      });
    }
  };
})();
"""


def member(base_url: str, name: str) -> str:
    """Register `name`; its bearer token."""
    response = httpx.post(
        f"{base_url}/api/auth/register", json={"name": name, "password": MEMBER_PASSWORD}
    )
    response.raise_for_status()
    token: str = response.json()["access_token"]
    return token


@dataclass
class Player:
    """A protocol client in the test's thread: the opponent, or a player's other device."""

    ws: ClientConnection
    seen: list[dict[str, Any]] = field(default_factory=list)

    @classmethod
    def connect(cls, base_url: str, token: str) -> Player:
        ws = connect(
            ws_url(base_url), subprotocols=subprotocols(token), compression=None
        ).__enter__()
        player = cls(ws)
        player.expect("welcome")
        return player

    def send(self, **message: Any) -> None:
        self.ws.send(json.dumps(message))

    def expect(self, kind: str, **fields: Any) -> dict[str, Any]:
        """The next message (read now or already seen and unclaimed) of type `kind` with
        `fields`."""
        for message in self.seen:
            if message["type"] == kind and all(message.get(k) == v for k, v in fields.items()):
                self.seen.remove(message)
                return message
        deadline = time.monotonic() + WAIT_S
        while True:
            message = json.loads(self.ws.recv(timeout=max(0.01, deadline - time.monotonic())))
            if message["type"] == kind and all(message.get(k) == v for k, v in fields.items()):
                return message
            self.seen.append(message)

    def close(self) -> None:
        self.ws.close()


def visit(
    browser: Browser,
    base_url: str,
    token: str,
    path: str,
    viewport: ViewportSize | None = None,
    prepare: Callable[[BrowserContext], None] | None = None,
) -> Person:
    """A signed-in person's page at `path` (the token put where the client keeps it);
    `prepare` sees the browser context before the page opens (to route its requests)."""
    context = browser.new_context(base_url=base_url, viewport=viewport)
    if prepare is not None:
        prepare(context)
    context.set_default_timeout(WAIT_S * 1000)
    context.add_init_script(f"localStorage.setItem('checkers.token', {json.dumps(token)});")
    context.add_init_script(STAMP_FRAMES)
    person = Person(context, context.new_page())
    person.page.on("pageerror", lambda exc: person.errors.append(str(exc)))
    person.page.goto(path)
    return person


@dataclass
class Table:
    """A game between a page (Black, through the proxy) and a protocol client (White)."""

    id: int
    game: int
    page: Page
    white: Player
    rules: Game
    ply: int = 0

    def legal(self) -> list[str]:
        return [str(m) for m in self.rules.legal_moves()]

    def page_plays(self, move: str | None = None) -> str:
        """Black plays on the page by clicking the squares; the server's event awaited."""
        move = move or self.legal()[0]
        # The page has the opponent's last move (else the clicks would pick a premove).
        expect(self.page.locator(".move-list .move")).to_have_count(self.ply)
        expect(self.page.locator(".player-bar.bottom .turn")).to_have_text("your move")
        expect(self.page.locator(".board.interactive:not(.premoving)")).to_be_visible()
        click_move(self.page, move)
        self.white.expect("move", game=self.game, ply=self.ply + 1)
        self.played(move)
        expect(self.page.locator(".move-list .move")).to_have_count(self.ply)
        return move

    def client_plays(self, by: Player | None = None, move: str | None = None) -> dict[str, Any]:
        """White plays (or `by`: the side to move from another device); the server's event."""
        move = move or self.legal()[0]
        (by or self.white).send(type="move", game=self.game, move=move, ply=self.ply)
        event = self.white.expect("move", game=self.game, ply=self.ply + 1)
        self.played(move)
        return event

    def played(self, move: str) -> None:
        self.rules.play(move)
        self.ply += 1


def start_game(
    browser: Browser,
    page_base_url: str,
    server_url: str,
    names: tuple[str, str] = ("bea", "wes"),
    clock: tuple[int, int] | None = (300, 0),
    viewport: ViewportSize | None = None,
) -> tuple[Person, Table, str]:
    """White (a protocol client) opens a table; Black sits down on the page. Returns Black's
    person, the table, and Black's token."""
    black_token = member(server_url, names[0])
    white = Player.connect(server_url, member(server_url, names[1]))
    white.send(
        type="open",
        room="english-casual",
        colour="white",
        clock=None if clock is None else {"base": clock[0], "increment": clock[1]},
    )
    table_id = white.expect("table")["table"]["id"]
    person = visit(browser, page_base_url, black_token, f"/#/table/{table_id}?sit=1", viewport)
    started = white.expect("game_started")
    expect(person.page.locator(".player-bar.bottom .turn")).to_have_text("your move")
    table = Table(table_id, started["game"]["id"], person.page, white, Game(get_variant("english")))
    return person, table, black_token


def square(page: Page, number: int) -> Any:
    return page.locator(f'.board [data-square="{number}"]')


def click_move(page: Page, move: str) -> None:
    for number in re.split(r"[-x]", move):
        square(page, int(number)).click()


def clock_error_ms(page: Page, event: dict[str, Any]) -> float:
    """How far the page's clocks are from the server's (ms, the larger of the two), the
    server's read from its last move `event` (the times left at `at`, the side to move's
    running since). The running clock is read as the page draws it, with the wall time then."""
    shown = page.evaluate(
        """(running) => new Promise((resolve) => {
          const el = (c) => document.querySelector(`.clock[data-colour="${c}"]`);
          const target = el(running);
          const observer = new MutationObserver(() => {
            observer.disconnect();
            resolve({
              now: Date.now(),
              black: Number(el("black").dataset.ms),
              white: Number(el("white").dataset.ms),
            });
          });
          observer.observe(target, { attributes: true, attributeFilter: ["data-ms"] });
          setTimeout(() => resolve({ now: Date.now(), black: NaN, white: NaN }), 2000);
        })""",
        event["turn"],
    )
    errors = []
    for colour in ("black", "white"):
        truth = event["clocks"][colour]
        if colour == event["turn"]:
            truth -= shown["now"] - event["at"]
        errors.append(abs(shown[colour] - truth))
    return max(errors)


def frame_arrival_ms(page: Page, kind: str, **fields: Any) -> float:
    """When (page's wall clock, Unix ms) the page received the frame of `kind` with `fields`."""
    frames = page.evaluate("window.__frames")
    for frame in frames:
        message = json.loads(frame["text"])
        if message.get("type") == kind and all(message.get(k) == v for k, v in fields.items()):
            return float(frame["at"])
    raise AssertionError(f"no {kind} {fields} reached the page")
