"""The client→server messages of `/ws` (see docs/protocol.md), validated by pydantic.

Server→client messages are plain JSON objects built by the services (table events travel through
the broker as text) and by `app.realtime.connections`; they are documented, with examples, in
docs/protocol.md.

Validation is strict: a field takes only its own JSON type. Lenient parsing would read `true`,
`"67"` or `1.0` as an id or a ply and act on the game it names; here they are `bad_message`.
The one widening kept is JSON's: an integer is a number wherever a number is meant (`t`).
"""

from __future__ import annotations

import re
from typing import Annotated, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, TypeAdapter, ValidationError

from app.db.models import MAX_ID
from app.matchmaking.challenges import DECLINE_REASONS
from app.play.clocks import Clock

_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")


def _printable(text: str) -> str:
    if _CONTROL.search(text):
        raise ValueError("control characters are not allowed")
    return text


Ref = Annotated[str, Field(max_length=40)] | int
Id = Annotated[int, Field(ge=1, le=MAX_ID)]  # beyond: no such row (ids are BIGINT)
Printable = AfterValidator(_printable)  # on what people type: names, codes, chat


class Message(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True, strict=True)

    ref: Ref | None = None


class Ping(Message):
    type: Literal["ping"]
    t: Annotated[float, Field(allow_inf_nan=False)] | None = None  # echoed: must stay JSON


class SubscribeLobby(Message):
    type: Literal["subscribe_lobby"]


class UnsubscribeLobby(Message):
    type: Literal["unsubscribe_lobby"]


class FollowTournament(Message):
    type: Literal["follow_tournament"]
    tournament: Id


class UnfollowTournament(Message):
    type: Literal["unfollow_tournament"]
    tournament: Id


class Open(Message):
    type: Literal["open"]
    room: Annotated[str, Field(max_length=40), Printable] | Id
    variant: Literal["english", "pool"] | None = None
    clock: Clock | None = None  # omitted: the room's clock; null: untimed
    colour: Literal["black", "white", "random"] = "random"
    private: bool = False
    start_fen: Annotated[str, Field(max_length=200)] | None = None
    rated: bool = False  # rated: its games move both players' ratings (registered accounts)
    takebacks: bool | None = None  # may a player ask to take a move back (default: unless rated)


class PlayAI(Message):
    """Start a game against the computer at `level`; `room` omitted: the variant's first open
    room. Always casual (never rated)."""

    type: Literal["play_ai"]
    room: Annotated[str, Field(max_length=40), Printable] | Id | None = None
    variant: Literal["english", "pool"] = "english"
    level: Annotated[int, Field(ge=1, le=8)]
    colour: Literal["black", "white", "random"] = "random"
    clock: Clock | None = None  # null or omitted: untimed
    start_fen: Annotated[str, Field(max_length=200)] | None = None


class TableMessage(Message):
    table: Id


class Sit(TableMessage):
    type: Literal["sit"]
    invite: Annotated[str, Field(max_length=32), Printable] | None = None


class Leave(TableMessage):
    type: Literal["leave"]


class Watch(TableMessage):
    type: Literal["watch"]
    since: Annotated[int, Field(ge=0)] | None = None
    epoch: Annotated[str, Field(max_length=32), Printable] | None = None
    invite: Annotated[str, Field(max_length=32), Printable] | None = None
    spectators: bool = False  # send this connection `spectators` notices (the count)


class Unwatch(TableMessage):
    type: Literal["unwatch"]


class Rematch(TableMessage):
    type: Literal["rematch"]


class Chat(TableMessage):
    type: Literal["chat"]
    text: Annotated[str, Field(max_length=2000), Printable]


class Move(Message):
    type: Literal["move"]
    game: Id
    move: Annotated[str, Field(min_length=1, max_length=120)]
    ply: Annotated[int, Field(ge=0)]


class GameMessage(Message):
    game: Id


class Resign(GameMessage):
    type: Literal["resign"]


class DrawOffer(GameMessage):
    type: Literal["draw_offer"]


class DrawAccept(GameMessage):
    type: Literal["draw_accept"]


class DrawDecline(GameMessage):
    type: Literal["draw_decline"]


class TakebackOffer(GameMessage):
    type: Literal["takeback_offer"]


class TakebackAccept(GameMessage):
    type: Literal["takeback_accept"]


class TakebackDecline(GameMessage):
    type: Literal["takeback_decline"]


class Abort(GameMessage):
    type: Literal["abort"]


class ClaimWin(GameMessage):
    type: Literal["claim_win"]


class Berserk(GameMessage):
    type: Literal["berserk"]


class Challenge(Message):
    type: Literal["challenge"]
    user: Annotated[str, Field(min_length=1, max_length=32), Printable]
    variant: Literal["english", "pool"] = "english"
    clock: Clock | None = None  # None: untimed
    colour: Literal["black", "white", "random"] = "random"  # the challenger's
    rated: bool = False


class ChallengeMessage(Message):
    challenge: Id


class ChallengeAccept(ChallengeMessage):
    type: Literal["challenge_accept"]


class ChallengeDecline(ChallengeMessage):
    type: Literal["challenge_decline"]
    reason: Literal[DECLINE_REASONS] = "generic"  # type: ignore[valid-type]


class ChallengeCancel(ChallengeMessage):
    type: Literal["challenge_cancel"]


class Seek(Message):
    type: Literal["seek"]
    pool: Annotated[str, Field(max_length=24), Printable]  # one of `app.matchmaking.pools.POOLS`
    rated: bool = False


class CancelSeek(Message):
    type: Literal["cancel_seek"]


ClientMessage = Annotated[
    Ping
    | SubscribeLobby
    | UnsubscribeLobby
    | FollowTournament
    | UnfollowTournament
    | Open
    | PlayAI
    | Sit
    | Leave
    | Watch
    | Unwatch
    | Rematch
    | Chat
    | Move
    | Resign
    | Berserk
    | DrawOffer
    | DrawAccept
    | DrawDecline
    | TakebackOffer
    | TakebackAccept
    | TakebackDecline
    | Abort
    | ClaimWin
    | Challenge
    | ChallengeAccept
    | ChallengeDecline
    | ChallengeCancel
    | Seek
    | CancelSeek,
    Field(discriminator="type"),
]

_ADAPTER: TypeAdapter[ClientMessage] = TypeAdapter(ClientMessage)


class BadMessage(ValueError):
    """A frame that is not a valid client message; the text says what is wrong."""


def parse(text: str) -> Message:
    """Read one client frame; raise BadMessage with a readable reason."""
    try:
        message: Message = _ADAPTER.validate_json(text)
    except ValidationError as exc:
        error = exc.errors(include_url=False)[0]
        kind = error["type"]
        if kind == "json_invalid":
            raise BadMessage("the message is not valid JSON") from None
        if kind in ("union_tag_not_found", "model_attributes_type"):
            raise BadMessage('the message must be a JSON object with a "type"') from None
        if kind == "union_tag_invalid":
            raise BadMessage(f"unknown message type {error['input'].get('type')!r}") from None
        # The path to the field, without the names pydantic gives the members of a union.
        path = [p for p in error["loc"][1:] if isinstance(p, int) or p.isidentifier()]
        where = ".".join(str(p) for p in path) or "message"
        raise BadMessage(f"{where}: {error['msg']}") from None
    return message
