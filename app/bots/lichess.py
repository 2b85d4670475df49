"""Lichess's names beside ours in what the bot API sends, so that programs written for
lichess's clients (berserk, lichess-bot) read our payloads as they read lichess's: the speed
category, the variant as `{key, name}`, a challenge's `timeControl`, and a game's facts for
one of its players as `gameStart` / `gameFinish` carry them. Pure functions of our payloads:
they add keys and never take ours away (where lichess uses a key of ours for something else,
ours stays and lichess's is left out, as docs/bots.md says)."""

from __future__ import annotations

from typing import Any

from app.play.clocks import days_of
from app.status import GameStatus

# The time left lichess sends in a game with no clock (Int.MaxValue milliseconds), where
# clients read a number.
UNLIMITED_MS = 2**31 - 1
VARIANT_NAMES = {"english": "English draughts", "pool": "Pool checkers"}
# Lichess's speed categories by estimated duration (base + 40 increments), upper bounds in s.
SPEEDS = (("ultraBullet", 30), ("bullet", 180), ("blitz", 480), ("rapid", 1500))


def variant(key: str) -> dict[str, str]:
    return {"key": key, "name": VARIANT_NAMES.get(key, key)}


def speed(base_s: int | None, increment_s: int) -> str:
    """Lichess's speed category; a game with no clock counts as `correspondence`, as there,
    as does one of days per move."""
    if base_s is None or days_of(base_s) is not None:
        return "correspondence"
    estimate = base_s + 40 * increment_s
    return next((name for name, below in SPEEDS if estimate < below), "classical")


def time_control(base_s: int | None, increment_s: int) -> dict[str, Any]:
    if base_s is None:
        return {"type": "unlimited"}
    days = days_of(base_s)
    if days is not None:
        return {"type": "correspondence", "daysPerTurn": days}
    minutes = f"{base_s // 60}" if base_s % 60 == 0 else f"{base_s / 60:g}"
    return {
        "type": "clock",
        "limit": base_s,
        "increment": increment_s,
        "show": f"{minutes}+{increment_s}",
    }


def challenge(shown: dict[str, Any]) -> dict[str, Any]:
    """A challenge as `challenges.payload` shows it, with lichess's `color`, `destUser`,
    `speed` and `timeControl` beside ours."""
    clock = shown["clock"]
    base, increment = (clock["base"], clock["increment"]) if clock is not None else (None, 0)
    return shown | {
        "color": shown["colour"],
        "destUser": shown["dest"],
        "speed": speed(base, increment),
        "timeControl": time_control(base, increment),
    }


def player(seat: dict[str, Any]) -> dict[str, Any]:
    """A side of a game (`id`, `name`, `rating`…) with lichess's `username` too."""
    return seat | {"username": seat["name"]}


def game_for(
    game: dict[str, Any], user_id: int, base_s: int | None, increment_s: int
) -> dict[str, Any]:
    """What lichess's `gameStart` and `gameFinish` say of a game (a `games.game_payload`) to
    one of its players: `gameId`, `fullId`, `color`, `fen`, `isMyTurn`, `lastMove`,
    `opponent` (with `username` and `rating`), `rated`, `speed`, `perf`, `variant`,
    `secondsLeft` (only with a clock, as lichess) and `hasMoved`."""
    colour = "black" if game["black"]["id"] == user_id else "white"
    opponent = game["white"] if colour == "black" else game["black"]
    moves: list[str] = game["moves"]
    playing = game["status"] == GameStatus.PLAYING
    first = "white" if game["start_fen"] and game["start_fen"].startswith("W") else "black"
    # Plies made by `colour`: the first mover made the odd-numbered ones.
    mine = (len(moves) + (1 if colour == first else 0)) // 2
    shape = speed(base_s, increment_s)
    facts: dict[str, Any] = {
        "gameId": game["id"],
        "fullId": str(game["id"]),
        "color": colour,
        "fen": game["fen"],
        "hasMoved": mine > 0,
        "isMyTurn": playing and game["turn"] == colour,
        "lastMove": moves[-1] if moves else "",
        "opponent": player(opponent),
        "rated": game["rated"],
        "speed": shape,
        "perf": shape,
        "variant": variant(game["variant"]),
        "source": "friend",
        "compat": {"bot": True, "board": False},
    }
    if game["clocks"] is not None:
        facts["secondsLeft"] = game["clocks"][colour] // 1000
    return facts
