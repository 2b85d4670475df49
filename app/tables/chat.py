"""A table's chat: the players' and the spectators' channels, a spectators' line kept from the
players while their game is in progress, and the history a snapshot carries."""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import Any

from app.errors import Code
from app.live import events
from app.live import log_store as table_log
from app.live.liveplay import LivePlay, PlayError, no_table
from app.live.log_store import Executor, StoredEvent
from app.play.players import PlayerRef, TableInfo, read_table
from app.status import TableState


async def chat(
    live: LivePlay, user: PlayerRef, table_id: int, text: str, *, watching: bool = False
) -> None:
    """Say something at a table: allowed to its players, and to those `watching` it (a watch
    the server granted, so a private table's invite was checked). Anyone else is told the
    same whether the table exists or not."""
    text = text.strip()
    if not text:
        raise PlayError(Code.BAD_MESSAGE, "empty chat message")
    if len(text) > live.settings.chat_max_length:
        raise PlayError(
            Code.BAD_MESSAGE,
            f"chat messages are at most {live.settings.chat_max_length} characters",
        )
    async with live.change() as change:
        table = await read_table(change.session, table_id)
        if not watching and (table is None or not table.seated(user.id)):
            raise PlayError(Code.NOT_FOUND, f"watch table {table_id} to chat there")
        if table is None or table.closed:
            raise no_table(table_id)
        await change.record(table_id, [_chat_line(table, user, text)])


def _chat_line(table: TableInfo, user: PlayerRef, text: str) -> events.Chat:
    """A seated player writes to the players' channel, anyone else to the spectators'; during
    a game the spectators' lines are kept from its two players."""
    if table.seated(user.id):
        return events.chat(table.id, user.payload(), text, "players")
    hidden = [p.id for p in table.players] if table.status == TableState.PLAYING else None
    return events.chat(table.id, user.payload(), text, "spectators", hidden)


CHAT_HISTORY = 50  # chat lines in a table snapshot


def hidden_from(event: StoredEvent) -> Collection[int]:
    """The players a spectators' line written during their game is kept from (none for any
    other event)."""
    if event.kind != "chat":
        return ()
    hidden: Collection[int] = event.data.get("hide_from", ())
    return hidden


def withheld_frame(event: StoredEvent) -> str:
    """What a player receives instead of a spectators' line kept from them: only the event's
    number, so that the table's numbering reaches them without a gap."""
    return table_log.encode(events.chat_withheld(event.seq, event.table_id))


def frame_for(event: StoredEvent, user_id: int | None) -> str:
    """The event's frame as `user_id` may receive it (`withheld_frame` for a line kept from
    them)."""
    if user_id is not None and user_id in hidden_from(event):
        return withheld_frame(event)
    return event.frame


async def chat_history(
    db: Executor, table_id: int, user_id: int | None, upto: int, *, after_game: bool = False
) -> tuple[list[Mapping[str, Any]], bool]:
    """The table's last `CHAT_HISTORY` chat lines up to event `upto` that `user_id` may see,
    oldest first, as the `chat` events show them, and whether any line was kept from them.
    `after_game`: no game is in progress at the table, so the spectators' lines kept from its
    players during the game are shown to them now."""
    if after_game:
        user_id = None
    withheld = False
    found: list[Mapping[str, Any]] = []
    while len(found) < CHAT_HISTORY:
        rows = await table_log.latest_of_kind(db, table_id, "chat", upto, CHAT_HISTORY)
        for event in rows:
            if user_id is not None and user_id in hidden_from(event):
                withheld = True
            elif len(found) < CHAT_HISTORY:
                found.append({"v": event.seq} | dict(event.data))
        if len(rows) < CHAT_HISTORY:
            break
        upto = rows[-1].seq - 1
    return found[::-1], withheld
