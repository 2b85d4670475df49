"""Requests and responses of the administration API (`/api/admin`).

Requests are validated strictly (`strict=True`): a JSON value of the wrong type is 422, never
converted (`true`, `"7"` or `7.0` are not the integer 7, `0` or `"false"` not a boolean).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, model_validator

from app import rules
from app.api.common.params import MAX_ID, NAME_PATTERN, TEXT_PATTERN, WORDS_PATTERN
from app.api.schemas.common import Clock, PlayerPublic
from app.api.schemas.users import UtcDatetime
from app.status import UserKind

Variant = Literal["english", "pool"]
# The values of `app.rules.Result`, spelled out: strict request validation takes them as text.
Result = Literal["*", "1-0", "0-1", "1/2-1/2"]
Decision = Literal["1-0", "0-1", "1/2-1/2"]
assert set(get_args(Result)) == set(rules.Result)
assert set(get_args(Decision)) == set(rules.Result) - {rules.Result.UNFINISHED}

Reason = Annotated[
    str,
    Field(
        min_length=1,
        max_length=200,
        pattern=WORDS_PATTERN,
        description="Why: written to the audit log and shown to the people affected.",
        examples=["abusive chat"],
    ),
]
OptionalReason = Annotated[
    str | None,
    Field(
        max_length=200,
        pattern=TEXT_PATTERN,
        description="Why, for the audit log.",
        examples=["new season"],
    ),
]
EndResult = Annotated[
    Result,
    Field(
        description="How games in progress there end: `*` aborts them; `1-0` Black wins, "
        "`0-1` White wins, `1/2-1/2` draw. Their termination is `admin`."
    ),
]


_ROOM_EXAMPLE: dict[str, Any] = {
    "id": 2,
    "slug": "english-blitz",
    "name": "English blitz",
    "variant": "english",
    "clock": {"base": 180, "increment": 2},
    "table_limit": 50,
    "open": True,
    "listed": True,
    "created_at": "2026-03-01T18:00:00Z",
    "closed_at": None,
    "tables": 3,
    "players": 5,
    "spectators": 2,
}


class AdminRoomPublic(BaseModel):
    """A room with its settings and what happens in it now."""

    model_config = ConfigDict(json_schema_extra={"examples": [_ROOM_EXAMPLE]})

    id: int
    slug: str
    name: str
    variant: Variant
    clock: Clock | None = Field(description="Default clock of new tables; null: untimed.")
    table_limit: int = Field(description="At most this many tables open at once.")
    open: bool = Field(description="New tables may be opened.")
    listed: bool = Field(description="Shown in the lobby.")
    created_at: UtcDatetime
    closed_at: UtcDatetime | None = Field(description="When an administrator closed it.")
    tables: int = Field(description="Tables open now (waiting, playing or just finished).")
    players: int = Field(description="Players seated at those tables.")
    spectators: int = Field(
        description="People watching those tables without a seat (this server process)."
    )


class RoomCreate(BaseModel):
    model_config = ConfigDict(
        extra="forbid",
        strict=True,
        json_schema_extra={
            "examples": [
                {
                    "slug": "pool-rapid",
                    "name": "Pool rapid",
                    "variant": "pool",
                    "clock": {"base": 600, "increment": 5},
                    "table_limit": 30,
                    "reason": "players asked for rapid pool",
                }
            ]
        },
    )

    slug: str = Field(
        pattern=r"^[a-z0-9][a-z0-9-]{0,38}[a-z0-9]$",
        description="Address of the room: 2-40 of `a-z 0-9 -`, unique.",
    )
    name: str = Field(min_length=1, max_length=80, pattern=NAME_PATTERN)
    variant: Variant
    clock: Clock | None = Field(default=None, description="Default clock; null: untimed.")
    table_limit: int = Field(default=50, ge=1, le=1000)
    open: bool = True
    listed: bool = True
    reason: OptionalReason = None


class RoomUpdate(BaseModel):
    """Only the fields sent change; `clock: null` makes new tables untimed. Tables already open
    keep their own settings."""

    model_config = ConfigDict(
        extra="forbid",
        strict=True,
        json_schema_extra={
            "examples": [
                {"name": "English blitz (3+2)", "clock": {"base": 180, "increment": 2}},
                {"open": False, "reason": "closed for new tables until the tournament ends"},
                {"listed": False},
            ]
        },
    )

    name: str | None = Field(default=None, min_length=1, max_length=80, pattern=NAME_PATTERN)
    variant: Variant | None = None
    clock: Clock | None = None
    table_limit: int | None = Field(default=None, ge=1, le=1000)
    open: bool | None = Field(
        default=None,
        description="false: no new tables (games go on; see `close` to end them); true reopens.",
    )
    listed: bool | None = None
    reason: OptionalReason = None

    @model_validator(mode="after")
    def _something_to_change(self) -> RoomUpdate:
        if not self.model_fields_set - {"reason"}:
            raise ValueError("send at least one setting to change")
        for name in ("name", "variant", "table_limit", "open", "listed"):
            if name in self.model_fields_set and getattr(self, name) is None:
                raise ValueError(f"{name} cannot be null")
        return self


class CloseRequest(BaseModel):
    model_config = ConfigDict(
        extra="forbid",
        strict=True,
        json_schema_extra={"examples": [{"reason": "server maintenance", "result": "*"}]},
    )

    reason: Reason
    result: EndResult = "*"


class ReasonRequest(BaseModel):
    model_config = ConfigDict(
        extra="forbid", strict=True, json_schema_extra={"examples": [{"reason": "..."}]}
    )

    reason: Reason


class AdjudicateRequest(BaseModel):
    model_config = ConfigDict(
        extra="forbid",
        strict=True,
        json_schema_extra={
            "examples": [{"result": "1/2-1/2", "reason": "position is a book draw; both agreed"}]
        },
    )

    result: Decision = Field(description="`1-0` Black wins, `0-1` White wins, `1/2-1/2` draw.")
    reason: Reason


class KickRequest(BaseModel):
    """Give `table` or `room` to send the user away from it; neither: off the server."""

    model_config = ConfigDict(
        extra="forbid",
        strict=True,
        json_schema_extra={
            "examples": [
                {"reason": "abusive chat", "table": 7, "result": "0-1"},
                {"reason": "spamming the room", "room": 2},
                {"reason": "please reconnect"},
            ]
        },
    )

    reason: Reason
    table: int | None = Field(default=None, ge=1, le=MAX_ID)
    room: int | None = Field(default=None, ge=1, le=MAX_ID)
    result: EndResult = "*"

    @model_validator(mode="after")
    def _one_place(self) -> KickRequest:
        if self.table is not None and self.room is not None:
            raise ValueError("give table or room, not both")
        return self


_TABLE_EXAMPLE: dict[str, Any] = {
    "id": 7,
    "room": 1,
    "room_slug": "english-casual",
    "variant": "english",
    "clock": None,
    "colour": "random",
    "private": False,
    "invite": None,
    "start_fen": None,
    "status": "playing",
    "players": [{"id": 12, "name": "guest-7f3a2c"}, {"id": 13, "name": "ann"}],
    "game": 31,
    "spectators": 4,
}


class AdminTablePublic(BaseModel):
    """A table that is not closed, as live play sees it."""

    model_config = ConfigDict(json_schema_extra={"examples": [_TABLE_EXAMPLE]})

    id: int
    room: int
    room_slug: str
    variant: Variant
    clock: Clock | None
    colour: Literal["black", "white", "random"]
    private: bool
    invite: str | None = Field(description="A private table's invite code.")
    start_fen: str | None
    status: Literal["open", "playing", "finished"] = Field(
        description="`open`: waiting for a player; `finished`: a game ended, rematch possible."
    )
    players: list[PlayerPublic]
    game: int | None = Field(description="The latest game's id (in progress when `playing`).")
    spectators: int = Field(description="People watching without a seat (this process).")


class TablesList(BaseModel):
    data: list[AdminTablePublic]
    count: int


class RoomsList(BaseModel):
    data: list[AdminRoomPublic]
    count: int


class AdminUserPublic(BaseModel):
    model_config = ConfigDict(
        json_schema_extra={
            "examples": [
                {
                    "id": 13,
                    "name": "ann",
                    "kind": "registered",
                    "role": "player",
                    "banned": False,
                    "ban_reason": None,
                    "created_at": "2026-02-11T09:30:00Z",
                    "last_seen_at": "2026-03-01T18:04:11Z",
                    "connected": True,
                }
            ]
        }
    )

    id: int
    name: str
    kind: UserKind
    role: Literal["player", "admin"]
    banned: bool
    ban_reason: str | None
    created_at: UtcDatetime
    last_seen_at: UtcDatetime | None = Field(description="Last log-in.")
    connected: bool = Field(description="Has a websocket open to this server process.")


class UsersPage(BaseModel):
    data: list[AdminUserPublic]
    count: int = Field(description="Users matching the filters in all.")


class AuditEntryPublic(BaseModel):
    """One administrator action: who did what to what, when, and why."""

    model_config = ConfigDict(
        json_schema_extra={
            "examples": [
                {
                    "id": 57,
                    "at": "2026-03-01T18:20:05Z",
                    "actor_id": 1,
                    "actor": "alice",
                    "action": "table.close",
                    "target_type": "table",
                    "target_id": "7",
                    "target_name": None,
                    "details": {"room": 1, "result": "*", "games": [31]},
                    "note": "abusive chat",
                }
            ]
        }
    )

    id: int
    at: UtcDatetime
    actor_id: int | None
    actor: str | None = Field(description="The administrator's name.")
    action: str = Field(
        description="room.create, room.rename, room.configure, room.close, table.close, "
        "game.adjudicate, game.abort, user.kick, user.ban, user.unban."
    )
    target_type: str = Field(description="room, table, game, user or tournament.")
    target_id: str | None
    target_name: str | None = Field(
        description="The user's name for a user, the room's for a room; null for other targets."
    )
    details: dict[str, Any] | None = Field(description="What the action changed.")
    note: str | None = Field(description="The reason given.")


class AuditPage(BaseModel):
    data: list[AuditEntryPublic]
    next_cursor: str | None = Field(description="Pass as `cursor` for older entries.")


class StatusPublic(BaseModel):
    """Server health and the whole server's load: games, tables and mail from the database; the
    connections and moves of the process answering as they are now, those of the other
    processes as of their last heartbeat (at most `HEARTBEAT_SECONDS` old)."""

    model_config = ConfigDict(
        json_schema_extra={
            "examples": [
                {
                    "status": "ok",
                    "database": "ok",
                    "broker": "ok",
                    "broker_kind": "redis",
                    "processes": 2,
                    "connections": 214,
                    "connected_users": 180,
                    "live_games": 57,
                    "open_tables": 73,
                    "moves_last_minute": 1290,
                    "moves_window_seconds": 62.5,
                    "mail_waiting": 3,
                    "mail_given_up": 0,
                    "version": "0.1.0",
                }
            ]
        }
    )

    status: Literal["ok", "down"]
    database: Literal["ok", "down"]
    broker: Literal["ok", "down"]
    broker_kind: Literal["memory", "redis"] = Field(description="The kind of broker in use.")
    processes: int = Field(description="Server processes alive (beating), this one included.")
    connections: int = Field(description="Open websockets, all processes together.")
    connected_users: int = Field(
        description="Signed-in users with a websocket, counted once per process they use."
    )
    live_games: int = Field(description="Games in progress on the whole server.")
    open_tables: int = Field(description="Tables not closed on the whole server.")
    moves_last_minute: int = Field(description="Moves accepted in the last minute, all processes.")
    moves_window_seconds: float = Field(
        description="The span `moves_last_minute` covers: about 60 s, less after a restart."
    )
    mail_waiting: int = Field(description="Mails in the outbox still to send.")
    mail_given_up: int = Field(
        description="Mails the worker gave up in the last 7 days (`failed_at` and `last_error` "
        "in the outbox; docs/notifications.md)."
    )
    version: str
