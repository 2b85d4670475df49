"""A websocket client for tests: a real `websockets` connection speaking the `/ws` protocol."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any, Protocol

import websockets
from websockets.typing import Subprotocol

from app.clock import FakeClock
from app.realtime import handshake
from tests.support.inproc import AsgiSocket, app_at
from tests.support.server import http_client

WAIT_SECONDS = 10.0
ADVANCE_EVERY_SECONDS = 0.1


async def guest_token(base_url: str) -> str:
    async with http_client(base_url) as client:
        response = await client.post("/api/auth/guest")
        response.raise_for_status()
        token: str = response.json()["access_token"]
        return token


MEMBER_PASSWORD = "a-long-passphrase-9"


async def member_token(base_url: str, name: str, password: str = MEMBER_PASSWORD) -> str:
    """Register an account; its bearer token."""
    async with http_client(base_url) as client:
        response = await client.post(
            "/api/auth/register", json={"name": name, "password": password}
        )
        response.raise_for_status()
        token: str = response.json()["access_token"]
        return token


def subprotocols(token: str | None) -> list[Subprotocol]:
    """What a client offers in `Sec-WebSocket-Protocol`: `checkers`, and `token.<token>`."""
    return [Subprotocol(p) for p in handshake.offer(token)]


def ws_url(base_url: str) -> str:
    return base_url.replace("http://", "ws://") + "/ws"


class Socket(Protocol):
    """What the tests use of a websocket: a `websockets` client connection to a real server, or
    an `AsgiSocket` to an in-process one."""

    async def send(self, message: str | bytes) -> None: ...
    async def recv(self) -> str | bytes: ...
    async def close(self, code: int = 1000, reason: str = "") -> None: ...


async def dial(
    base_url: str,
    subprotocols: list[Subprotocol] | list[str] | None = None,
    *,
    source: str | None = None,
    headers: dict[str, str] | None = None,
) -> Any:
    """An open websocket to `/ws` of the server at `base_url` (from the loopback address
    `source`), for the caller to close: a real connection to a real server, an `AsgiSocket`
    to an in-process app."""
    offered = [Subprotocol(p) for p in subprotocols or []]
    app = app_at(base_url)
    if app is None:
        return await websockets.connect(
            ws_url(base_url),
            subprotocols=offered,
            additional_headers=headers,
            compression=None,
            close_timeout=2,
            local_addr=(source, 0) if source is not None else None,
        )
    raw = [(k.lower().encode(), v.encode()) for k, v in (headers or {}).items()]
    socket = AsgiSocket(
        app, base_url, subprotocols=offered, client=(source or "127.0.0.1", 50000), headers=raw
    )
    return await socket.open()


@asynccontextmanager
async def open_socket(
    base_url: str,
    subprotocols: list[Subprotocol] | list[str] | None = None,
    *,
    source: str | None = None,
    headers: dict[str, str] | None = None,
) -> AsyncIterator[Any]:
    """`dial`, closed when the block ends."""
    ws = await dial(base_url, subprotocols, source=source, headers=headers)
    try:
        yield ws
    finally:
        await ws.close()


class Client:
    """One socket; `expect` reads until a message of the wanted type (keeping the others)."""

    def __init__(self, ws: Any) -> None:
        self.ws = ws
        self.seen: list[dict[str, Any]] = []
        self.welcome: dict[str, Any] = {}

    @property
    def user_id(self) -> int:
        user_id: int = self.welcome["user"]["id"]
        return user_id

    async def send(self, **message: Any) -> None:
        await self.ws.send(json.dumps(message))

    async def recv(self) -> dict[str, Any]:
        message: dict[str, Any] = json.loads(await asyncio.wait_for(self.ws.recv(), WAIT_SECONDS))
        self.seen.append(message)
        return message

    async def expect(self, kind: str, **fields: Any) -> dict[str, Any]:
        """The next message of type `kind` whose fields equal `fields`."""
        while True:
            message = await self.recv()
            if message["type"] == kind and all(message.get(k) == v for k, v in fields.items()):
                return message

    async def error(self) -> dict[str, Any]:
        return await self.expect("error")

    async def expect_advancing(
        self, clock: FakeClock, step: float, kind: str, **fields: Any
    ) -> dict[str, Any]:
        """`expect`, moving the server's clock on by `step` whenever a moment of real time
        brings nothing: for what comes once a period has passed since something the server
        does in its own time (a socket's close noted, say), without waiting for the period."""
        give_up = asyncio.get_running_loop().time() + WAIT_SECONDS
        while True:
            try:
                return await asyncio.wait_for(self.expect(kind, **fields), ADVANCE_EVERY_SECONDS)
            except TimeoutError:  # cancelling a receive loses no message (websockets)
                if asyncio.get_running_loop().time() > give_up:
                    raise
                clock.advance(step)


@asynccontextmanager
async def connect(
    base_url: str, token: str | None = None, source: str | None = None
) -> AsyncIterator[Client]:
    """A socket, from the loopback address `source` (such as 127.0.0.2) if given."""
    async with open_socket(base_url, subprotocols(token), source=source) as ws:
        client = Client(ws)
        client.welcome = await client.expect("welcome")
        client.seen.clear()
        yield client


@asynccontextmanager
async def guest(base_url: str, source: str | None = None) -> AsyncIterator[Client]:
    async with connect(base_url, await guest_token(base_url), source) as client:
        yield client


@dataclass
class Match:
    """A game started between two clients; `a` opened the table and plays Black."""

    table: dict[str, Any]
    game: dict[str, Any]
    black: Client
    white: Client
    ply: int = 0
    turn: str = "black"

    @property
    def id(self) -> int:
        game_id: int = self.game["id"]
        return game_id

    def mover(self) -> Client:
        return self.black if self.turn == "black" else self.white

    async def play(self, *moves: str) -> dict[str, Any]:
        """Play `moves` in turn; both players see each one. Returns the last `move` event."""
        event: dict[str, Any] = {}
        for text in moves:
            await self.mover().send(type="move", game=self.id, move=text, ply=self.ply)
            event = await self.black.expect("move", ply=self.ply + 1)
            await self.white.expect("move", ply=self.ply + 1)
            self.ply, self.turn = event["ply"], event["turn"]
        return event


async def start_game(a: Client, b: Client, room: str = "english-casual", **options: Any) -> Match:
    """`a` opens a table as Black with `options`, `b` sits down; both see the game start."""
    await a.send(type="open", room=room, colour="black", **options)
    table = (await a.expect("table"))["table"]
    await b.send(type="sit", table=table["id"])
    game = (await a.expect("game_started"))["game"]
    await b.expect("game_started")
    return Match(table, game, black=a, white=b, ply=game["ply"], turn=game["turn"])
