"""The table events, each built here and only here, as docs/protocol.md lists them.

A use case stores the events of its change with it (`LivePlay.record`, which numbers them);
they travel as the JSON text made then, and nothing reads them back. `v`, the number, is put in
front when the stored event is framed (`app.db.table_log.StoredEvent.frame`).
"""

from __future__ import annotations

from typing import Any

from app.rules import Result

Event = dict[str, Any]
Player = dict[str, Any]  # {"id": …, "name": …}


def table_update(table_id: int, state: dict[str, Any]) -> Event:
    return {"type": "table_update", "table": table_id, "state": state}


def game_started(table_id: int, game: dict[str, Any]) -> Event:
    return {"type": "game_started", "table": table_id, "game": game}


def move(
    table_id: int,
    game_id: int,
    ply: int,
    move: str,
    fen: str,
    turn: str,
    clocks: dict[str, int] | None,
    legal_moves: list[str],
    at: float,
) -> Event:
    """`at`: when the move was made, Unix milliseconds to the microsecond (the running clock's
    start: with `clocks`, what another process needs to follow the game without reading it)."""
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
    }


def game_ended(
    table_id: int,
    game_id: int,
    result: str,
    termination: str,
    clocks: dict[str, int] | None,
    reason: str | None = None,
) -> Event:
    """`reason`: an administrator's explanation, shown to the players."""
    winner = Result(result).winner
    event = {
        "type": "game_ended",
        "table": table_id,
        "game": game_id,
        "result": result,
        "termination": termination,
        "winner": None if winner is None else winner.value,
        "clocks": clocks,
    }
    if reason is not None:
        event["reason"] = reason
    return event


def draw_offered(table_id: int, game_id: int, by: str) -> Event:
    return {"type": "draw_offered", "table": table_id, "game": game_id, "by": by}


def draw_declined(table_id: int, game_id: int, by: str) -> Event:
    return {"type": "draw_declined", "table": table_id, "game": game_id, "by": by}


def player_away(table_id: int, game_id: int, colour: str, since: float, grace: float) -> Event:
    return {
        "type": "player_away",
        "table": table_id,
        "game": game_id,
        "colour": colour,
        "since": int(since * 1000),
        "claim_after": int((since + grace) * 1000),
    }


def player_back(table_id: int, game_id: int, colour: str) -> Event:
    return {"type": "player_back", "table": table_id, "game": game_id, "colour": colour}


def rematch_offered(table_id: int, by: Player) -> Event:
    return {"type": "rematch_offered", "table": table_id, "by": by}


def chat(table_id: int, sender: Player, text: str) -> Event:
    return {"type": "chat", "table": table_id, "from": sender, "text": text}


def table_closed(table_id: int, reason: str) -> Event:
    return {"type": "table_closed", "table": table_id, "reason": reason}
