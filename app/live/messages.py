"""The messages that are not table events, each typed and built here: the replies and notices a
connection receives, the lobby's updates, and the control messages the processes send each
other on the broker (as docs/protocol.md lists the client-facing ones).

Table events are `app.live.events`'; these are never stored. A message published on the
broker is read back once where it arrives (`events.decode`) and narrowed by its `type`.
"""

from __future__ import annotations

from typing import Any, Literal, TypedDict

from app.live.events import Player, unix_ms

# --- replies and notices to one connection or one user ------------------------------------


class YourGame(TypedDict):
    """Not a table event: told to every connection of a player whose game has started."""

    type: Literal["your_game"]
    table: int
    game: int
    colour: str
    opponent: Player
    first_move_deadline: int | None
    tournament: int | None  # the tournament the game is played in


def your_game(
    table_id: int,
    game_id: int,
    colour: str,
    opponent: Player,
    first_move_deadline: float | None,
    tournament: int | None = None,
) -> YourGame:
    return {
        "type": "your_game",
        "table": table_id,
        "game": game_id,
        "colour": colour,
        "opponent": opponent,
        "first_move_deadline": unix_ms(first_move_deadline),
        "tournament": tournament,
    }


class Pong(TypedDict):
    type: Literal["pong"]
    t: float | int | None
    server_time: int


def pong(t: float | int | None, server_time: float) -> Pong:
    return {"type": "pong", "t": t, "server_time": int(server_time * 1000)}


class Synced(TypedDict):
    type: Literal["synced"]
    table: int
    v: int
    epoch: str


def synced(table_id: int, version: int, epoch: str) -> Synced:
    return {"type": "synced", "table": table_id, "v": version, "epoch": epoch}


class Kicked(TypedDict):
    type: Literal["kicked"]
    table: int | None
    reason: str


def kicked(table_id: int | None, reason: str) -> Kicked:
    return {"type": "kicked", "table": table_id, "reason": reason}


ChallengeNoticeType = Literal[
    "challenge", "challenge_sent", "challenge_declined", "challenge_canceled"
]


class ChallengeNotice(TypedDict, total=False):
    """A challenge made, answered or withdrawn: to its two users (`ref` in a reply)."""

    type: ChallengeNoticeType
    challenge: dict[str, Any]  # `challenges.payload`
    ref: str | int | None


def challenge_notice(kind: ChallengeNoticeType, challenge: dict[str, Any]) -> ChallengeNotice:
    """Told to the other user of the challenge."""
    return {"type": kind, "challenge": challenge}


def challenge_reply(
    kind: ChallengeNoticeType, challenge: dict[str, Any], ref: str | int | None
) -> ChallengeNotice:
    """The answer to the user who made, declined or cancelled it (with their message's
    `ref`)."""
    return {"type": kind, "ref": ref, "challenge": challenge}


class Seeking(TypedDict, total=False):
    type: Literal["seeking"]
    pool: str
    rated: bool
    rating: int
    ref: str | int | None


def seeking(pool: str, rated: bool, rating: float) -> Seeking:
    return {"type": "seeking", "pool": pool, "rated": rated, "rating": round(rating)}


class SeekCancelled(TypedDict):
    type: Literal["seek_cancelled"]
    ref: str | int | None


def seek_cancelled(ref: str | int | None) -> SeekCancelled:
    return {"type": "seek_cancelled", "ref": ref}


# --- the lobby ---------------------------------------------------------------------------------


class LobbyTable(TypedDict):
    type: Literal["lobby_table"]
    room: int
    table: dict[str, Any]  # the table as `LivePlay.table_payload` shows it (+ `spectators`)


def lobby_table(room_id: int, table: dict[str, Any]) -> LobbyTable:
    return {"type": "lobby_table", "room": room_id, "table": table}


class LobbyTableRemoved(TypedDict):
    type: Literal["lobby_table_removed"]
    room: int
    table: int


def lobby_table_removed(room_id: int, table_id: int) -> LobbyTableRemoved:
    return {"type": "lobby_table_removed", "room": room_id, "table": table_id}


class RoomClosed(TypedDict):
    type: Literal["room_closed"]
    room: int


def room_closed(room_id: int) -> RoomClosed:
    return {"type": "room_closed", "room": room_id}


class LobbySnapshot(TypedDict):
    type: Literal["lobby"]
    rooms: list[dict[str, Any]]


def lobby_snapshot(rooms: list[dict[str, Any]]) -> LobbySnapshot:
    return {"type": "lobby", "rooms": rooms}


# --- control messages between the processes (the `control` channel) ---------------------------


class Kick(TypedDict):
    """Send a user's connections away from tables (`table_ids`), or from the server (None)."""

    type: Literal["kick"]
    user_id: int
    table_ids: list[int] | None
    reason: str


def kick(user_id: int, table_ids: list[int] | None, reason: str) -> Kick:
    return {"type": "kick", "user_id": user_id, "table_ids": table_ids, "reason": reason}


class Ban(TypedDict):
    type: Literal["ban"]
    user_id: int
    reason: str


def ban(user_id: int, reason: str) -> Ban:
    return {"type": "ban", "user_id": user_id, "reason": reason}


class Logout(TypedDict):
    type: Literal["logout"]
    token_hash: str


def logout(token_hash: str) -> Logout:
    return {"type": "logout", "token_hash": token_hash}


class Notify(TypedDict):
    """A notice for every connection of one user (`your_game`, challenges)."""

    type: Literal["notify"]
    user_id: int
    notice: dict[str, Any]


def notify(user_id: int, notice: dict[str, Any]) -> Notify:
    return {"type": "notify", "user_id": user_id, "notice": notice}


class CloseRoom(TypedDict):
    type: Literal["room_closed"]
    room_id: int


def close_room(room_id: int) -> CloseRoom:
    return {"type": "room_closed", "room_id": room_id}


Control = Kick | Ban | Logout | Notify | CloseRoom
