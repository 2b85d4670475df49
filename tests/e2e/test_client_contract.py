"""The client's reading of the fair-tables protocol additions (docs/protocol.md), checked with the
frames a server sends rewritten to carry them: the first-move deadline counted down with no clock
running, chat channels and the snapshot's chat history, and `your_game` on another page.

The server's own side of these fields is tested in tests/e2e/test_fair_tables.py."""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable
from typing import Any

import pytest
from playwright.sync_api import Browser, Page, WebSocketRoute, expect

from tests.e2e.people import arrive, open_table, register

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(300)]

Message = dict[str, Any]


class Rewriter:
    """A page's websocket passed through a function that edits each server frame."""

    def __init__(self, page: Page, edit: Callable[[Message], Message]) -> None:
        self.edit = edit
        self.pages: list[WebSocketRoute] = []
        page.route_web_socket(re.compile(r"/ws(\?|$)"), self.connect)

    def connect(self, page_side: WebSocketRoute) -> None:
        server_side = page_side.connect_to_server()
        self.pages.append(page_side)

        def down(message: str | bytes) -> None:
            if isinstance(message, bytes):
                page_side.send(message)
                return
            page_side.send(json.dumps(self.edit(json.loads(message))))

        server_side.on_message(down)
        page_side.on_message(lambda message: server_side.send(message))

    def inject(self, message: Message) -> None:
        self.pages[-1].send(json.dumps(message))


def with_deadline(deadline_ms: int) -> Callable[[Message], Message]:
    def edit(message: Message) -> Message:
        game = None
        if message["type"] == "table":
            game = message.get("game")
            message["chat"] = [
                {
                    "type": "chat",
                    "table": message["table"]["id"],
                    "v": 1,
                    "from": {"id": 99, "name": "earlier"},
                    "text": "said before the reload",
                    "channel": "players",
                }
            ]
        elif message["type"] == "game_started":
            game = message["game"]
        elif message["type"] == "chat":
            message["channel"] = "spectators" if message["text"].startswith("!") else "players"
        if game is not None and game.get("ply") == 0:
            game["first_move_deadline"] = deadline_ms
            game["clock_running"] = False
        return message

    return edit


def test_the_first_move_deadline_and_chat_channels_as_the_protocol_sends_them(
    browser: Browser, server_url: str
) -> None:
    people = [arrive(browser, server_url), arrive(browser, server_url)]
    ann, ben = (person.page for person in people)
    Rewriter(ann, with_deadline(int(time.time() * 1000) + 25_000))
    register(ann, "ann")
    register(ben, "ben")
    table_id = open_table(ann, "english-blitz", colour="black", clock=(3, 0))
    ben.get_by_role("button", name=f"Sit at table {table_id}").click()

    bottom = ann.locator(".player-bar.bottom")
    expect(bottom.get_by_role("timer", name="First move countdown")).to_have_text(
        re.compile(r"^first move within 0:[012]\d$")
    )
    expect(ann.get_by_label("Black clock")).to_have_text("3:00")
    expect(ann.get_by_label("Black clock")).not_to_have_class(re.compile("running"))
    expect(ann.locator(".chat-log li[data-channel='players']")).to_contain_text(
        "earlier: said before the reload"
    )

    ann.get_by_role("textbox", name="Chat message").fill("!from the rail")
    ann.get_by_role("button", name="Send").click()
    line = ann.locator(".chat-log li[data-channel='spectators']")
    expect(line).to_contain_text("spectator")
    expect(line).to_contain_text("ann: !from the rail")
    for person in people:
        assert person.errors == []
        person.context.close()


def test_a_game_start_is_announced_even_after_its_tables_own_event(
    browser: Browser, server_url: str
) -> None:
    """The table's `game_started` may reach a page before `your_game` (the table was still
    watched as its player left for another page): the start is announced all the same."""
    person = arrive(browser, server_url)
    ida = person.page
    rewriter = Rewriter(ida, lambda message: message)
    register(ida, "ida")
    table_id = open_table(ida, "english-casual", colour="black", clock=None)
    ida.get_by_role("link", name="Archive").click()
    expect(ida.get_by_role("heading", name="Game archive")).to_be_visible()
    me = ida.evaluate(
        """async () => (await fetch("/api/auth/me", {
          headers: {Authorization: `Bearer ${localStorage.getItem("checkers.token")}`},
        })).json()"""
    )
    me = {"id": me["id"], "name": "ida"}
    jon = {"id": 999, "name": "jon"}
    game = {"id": 77, "table": table_id, "status": "playing", "black": me, "white": jon}
    game |= {"turn": "black", "ply": 0}
    rewriter.inject({"type": "game_started", "table": table_id, "game": game, "v": 99})
    rewriter.inject(
        {
            "type": "your_game",
            "table": table_id,
            "game": 77,
            "colour": "black",
            "opponent": jon,
            "first_move_deadline": None,
        }
    )
    expect(ida.locator("#notify")).to_contain_text(
        f"Table {table_id}: Your game against jon has started."
    )
    assert person.errors == []
    person.context.close()


def test_your_game_is_announced_on_another_page(browser: Browser, server_url: str) -> None:
    people = [arrive(browser, server_url), arrive(browser, server_url)]
    ida, jon = (person.page for person in people)
    rewriter = Rewriter(ida, lambda message: message)
    register(ida, "ida")
    register(jon, "jon")
    table_id = open_table(ida, "english-casual", colour="black", clock=None)
    ida.get_by_role("link", name="Archive").click()
    expect(ida.get_by_role("heading", name="Game archive")).to_be_visible()
    jon.get_by_role("button", name=f"Sit at table {table_id}").click()
    expect(jon.locator(".player-bar.top .turn")).to_have_text("to move")  # the game is on

    # What the server sends every connection of both players when their game starts.
    rewriter.inject(
        {
            "type": "your_game",
            "table": table_id,
            "game": 1,
            "colour": "black",
            "opponent": {"id": 2, "name": "jon"},
            "first_move_deadline": None,
        }
    )
    banner = ida.locator("#notify")
    expect(banner).to_contain_text(f"Table {table_id}: Your game against jon has started.")
    expect(ida).to_have_title(re.compile(r"^Your game! · "))
    # The game is now followed in the background: the lobby lists it as Ida's.
    ida.goto(f"{server_url}/#/")
    expect(ida.get_by_role("link", name=f"Back to table {table_id} (against jon)")).to_be_visible()
    for person in people:
        assert person.errors == []
        person.context.close()
