"""The table events, each built here and only here, as docs/protocol.md lists them.

Each event has its type (a `TypedDict`, checked by mypy wherever one is built or read, at no
cost per event: a move's event is made for every move); `TableEvent` is any of them. A use case
stores the events of its change with it (`LivePlay.record`, which numbers them); they travel as
the JSON text made then, and nothing reads them back, except another process following a game
(`games.follow`, which reads a `MoveEvent`). `v`, the number, is put in front when the stored
event is framed (`app.live.log_store.StoredEvent.frame`).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, Literal, NotRequired, TypedDict, cast

from app.rules import Game, Result

if TYPE_CHECKING:
    from app.live.log_store import StoredEvent


class Player(TypedDict):
    id: int
    name: str


class SeatedPlayer(TypedDict):
    """A player at a table or in a game, with the rating the table's games count in (None for
    a guest) and whether it is provisional."""

    id: int
    name: str
    rating: int | None
    provisional: bool
    takebacks: NotRequired[bool]  # false, only for a player who turned takebacks off


class Clocks(TypedDict):
    """Milliseconds left on each side's clock."""

    black: int
    white: int


class TableUpdate(TypedDict):
    type: Literal["table_update"]
    table: int
    state: dict[str, Any]  # the table as `LivePlay.table_payload` shows it


class GameStarted(TypedDict):
    type: Literal["game_started"]
    table: int
    game: dict[str, Any]  # the game as `games.game_payload` shows it
    # The table as the game begins, as `table_update` shows it: with `game`, all a process needs
    # to serve the game without reading it (`games.follow`).
    table_state: dict[str, Any]


class MoveEvent(TypedDict):
    type: Literal["move"]
    table: int
    game: int
    ply: int
    move: str
    fen: str
    turn: str
    clocks: Clocks | None
    legal_moves: list[str]
    at: float
    first_move_deadline: int | None  # Unix ms: the next side's first move is due (ply 1 only)


class RatingSide(TypedDict):
    """One player's rating before and after a rated game (whole points), and the difference."""

    before: int
    after: int
    diff: int


class RatingChanges(TypedDict):
    black: RatingSide
    white: RatingSide


class GameEnded(TypedDict):
    type: Literal["game_ended"]
    table: int
    game: int
    result: str
    termination: str
    winner: str | None
    clocks: Clocks | None
    rating_change: RatingChanges | None  # None: a casual game, or one that moved no rating
    reason: NotRequired[str]


class DrawOffered(TypedDict):
    type: Literal["draw_offered"]
    table: int
    game: int
    by: str


class DrawDeclined(TypedDict):
    type: Literal["draw_declined"]
    table: int
    game: int
    by: str


class TakebackAnswer(TypedDict):
    """`by` (a colour) asks to take back their last move, or declines the opponent's request."""

    type: Literal["takeback_offered", "takeback_declined"]
    table: int
    game: int
    by: str


class Takeback(TypedDict):
    """A takeback accepted: the game back at `ply` (the later moves gone from its record), as a
    `move` shows a game; every process's copy of it is stale (`following` drops it)."""

    type: Literal["takeback"]
    table: int
    game: int
    by: str  # who asked
    ply: int
    fen: str
    turn: str
    clocks: Clocks | None
    legal_moves: list[str]
    at: float
    first_move_deadline: int | None


class Berserk(TypedDict):
    """An arena player went berserk before their first move: half their time, no increment;
    every process's copy of the game is stale (`following` drops it)."""

    type: Literal["berserk"]
    table: int
    game: int
    colour: str
    clocks: Clocks


class PlayerAway(TypedDict):
    type: Literal["player_away"]
    table: int
    game: int
    colour: str
    since: int
    claim_after: int


class PlayerBack(TypedDict):
    type: Literal["player_back"]
    table: int
    game: int
    colour: str


class RematchOffered(TypedDict):
    type: Literal["rematch_offered"]
    table: int
    by: Player


# "from" is a Python keyword: the functional form. `hide_from` lists the players a spectators'
# line written during their game is kept from (they receive `chat_withheld` instead).
Chat = TypedDict(
    "Chat",
    {
        "type": Literal["chat"],
        "table": int,
        "from": Player,
        "text": str,
        "channel": Literal["players", "spectators"],
        "hide_from": NotRequired[list[int]],
    },
)


class ChatWithheld(TypedDict):
    """Not stored: what a player receives in place of a spectators' line kept from them."""

    v: int
    type: Literal["chat_withheld"]
    table: int


def chat_withheld(seq: int, table_id: int) -> ChatWithheld:
    return {"v": seq, "type": "chat_withheld", "table": table_id}


class TableClosed(TypedDict):
    type: Literal["table_closed"]
    table: int
    reason: str


TableEvent = (
    TableUpdate
    | GameStarted
    | MoveEvent
    | GameEnded
    | DrawOffered
    | DrawDeclined
    | TakebackAnswer
    | Takeback
    | Berserk
    | PlayerAway
    | PlayerBack
    | RematchOffered
    | Chat
    | TableClosed
)


def decode(text: str) -> dict[str, Any]:
    """A message another process published on the broker (a lobby, control or user-channel
    message), read once where it arrives: the one place, with `StoredEvent.data` for table
    events, where the server reads its own JSON back."""
    message: dict[str, Any] = json.loads(text)
    return message


def of(stored: StoredEvent) -> TableEvent:
    """A stored event's fields, typed: as made here, or decoded once from the log or a ring
    (`StoredEvent.data`). Narrow it by its `type`."""
    return cast(TableEvent, stored.data)


def table_update(table_id: int, state: dict[str, Any]) -> TableUpdate:
    return {"type": "table_update", "table": table_id, "state": state}


def game_started(table_id: int, game: dict[str, Any], table_state: dict[str, Any]) -> GameStarted:
    return {"type": "game_started", "table": table_id, "game": game, "table_state": table_state}


def move(
    table_id: int,
    game_id: int,
    ply: int,
    move: str,
    fen: str,
    turn: str,
    clocks: Clocks | None,
    legal_moves: list[str],
    at: float,
    first_move_deadline: float | None = None,
) -> MoveEvent:
    """`at`: when the move was made, Unix milliseconds to the microsecond (the running clock's
    start: with `clocks`, what another process needs to follow the game without reading it).
    `first_move_deadline` (Unix seconds): after the first move, when the other side's first
    move is due."""
    return {
        "type": "move",
        "table": table_id,
        "game": game_id,
        "ply": ply,
        "move": move,
        "fen": fen,
        "turn": turn,
        "clocks": clocks,
        "legal_moves": legal_moves,
        "at": round(at * 1000, 3),
        "first_move_deadline": unix_ms(first_move_deadline),
    }


def unix_ms(at: float | None) -> int | None:
    """Unix seconds as the protocol's whole milliseconds (None stays None)."""
    return None if at is None else int(at * 1000)


def game_ended(
    table_id: int,
    game_id: int,
    result: str,
    termination: str,
    clocks: Clocks | None,
    reason: str | None = None,
    rating_change: RatingChanges | None = None,
) -> GameEnded:
    """`reason`: an administrator's explanation, shown to the players; `rating_change`: what a
    rated game did to both ratings."""
    winner = Result(result).winner
    event: GameEnded = {
        "type": "game_ended",
        "table": table_id,
        "game": game_id,
        "result": result,
        "termination": termination,
        "winner": None if winner is None else winner.value,
        "clocks": clocks,
        "rating_change": rating_change,
    }
    if reason is not None:
        event["reason"] = reason
    return event


def draw_offered(table_id: int, game_id: int, by: str) -> DrawOffered:
    return {"type": "draw_offered", "table": table_id, "game": game_id, "by": by}


def draw_declined(table_id: int, game_id: int, by: str) -> DrawDeclined:
    return {"type": "draw_declined", "table": table_id, "game": game_id, "by": by}


def takeback_offered(table_id: int, game_id: int, by: str) -> TakebackAnswer:
    return {"type": "takeback_offered", "table": table_id, "game": game_id, "by": by}


def takeback_declined(table_id: int, game_id: int, by: str) -> TakebackAnswer:
    return {"type": "takeback_declined", "table": table_id, "game": game_id, "by": by}


def takeback(
    table_id: int,
    game_id: int,
    by: str,
    game: Game,
    clocks: Clocks | None,
    at: float,
    first_move_deadline: float | None,
) -> Takeback:
    """`game`: as it is now; `at`, `first_move_deadline`: Unix seconds, sent as ms."""
    return {
        "type": "takeback",
        "table": table_id,
        "game": game_id,
        "by": by,
        "ply": game.ply,
        "fen": game.fen(),
        "turn": game.position.turn.value,
        "clocks": clocks,
        "legal_moves": game.legal_move_texts(),
        "at": round(at * 1000, 3),
        "first_move_deadline": unix_ms(first_move_deadline),
    }


def berserk(table_id: int, game_id: int, colour: str, clocks: Clocks) -> Berserk:
    return {
        "type": "berserk",
        "table": table_id,
        "game": game_id,
        "colour": colour,
        "clocks": clocks,
    }


def player_away(table_id: int, game_id: int, colour: str, since: float, grace: float) -> PlayerAway:
    return {
        "type": "player_away",
        "table": table_id,
        "game": game_id,
        "colour": colour,
        "since": int(since * 1000),
        "claim_after": int((since + grace) * 1000),
    }


def player_back(table_id: int, game_id: int, colour: str) -> PlayerBack:
    return {"type": "player_back", "table": table_id, "game": game_id, "colour": colour}


def rematch_offered(table_id: int, by: Player) -> RematchOffered:
    return {"type": "rematch_offered", "table": table_id, "by": by}


def chat(
    table_id: int,
    sender: Player,
    text: str,
    channel: Literal["players", "spectators"],
    hide_from: list[int] | None = None,
) -> Chat:
    event: Chat = {
        "type": "chat",
        "table": table_id,
        "from": sender,
        "text": text,
        "channel": channel,
    }
    if hide_from:
        event["hide_from"] = hide_from
    return event


def table_closed(table_id: int, reason: str) -> TableClosed:
    return {"type": "table_closed", "table": table_id, "reason": reason}
