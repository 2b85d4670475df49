"""Conditional moves (lichess's forecasts) in correspondence games: while the opponent is to
move, a player may store lines of the opponent's move and their reply in turn ("if they play
X, I play Y; then if Z, W"), at most `MAX_LINES` lines of `MAX_PLIES` plies, each checked
against the rules when stored. When the opponent's move is the first move of some lines, the
reply of the first of them is played at once, as the player's own move, and what follows in
the lines that led to it is kept for the next move; lines that no longer fit are dropped, and
all of them when none fits. Only their owner ever sees them (they are in no event). Checking
the lines takes the event loop's time, so a player stores them a few times a minute at most
(`conditional_saves_per_minute`).
"""

from __future__ import annotations

import copy
import logging
from typing import Any

from app.accounts import limits
from app.correspondence import store as stored
from app.errors import Code
from app.live.liveplay import LivePlay, PlayError, no_game
from app.play import games
from app.play import store as stored_games
from app.play.clocks import is_correspondence
from app.play.state import turn_of
from app.rules import Color, Game, RulesError, get_variant
from app.status import GameStatus

logger = logging.getLogger(__name__)

MAX_LINES = 30
MAX_PLIES = 30


def _checked(game: Game, lines: list[list[str]]) -> list[list[str]]:
    """The lines in the rules' own notation, each played out from `game`'s position (on a
    copy); a line that breaks the rules is refused, naming it."""
    out: list[list[str]] = []
    for number, line in enumerate(lines, 1):
        if not 2 <= len(line) <= MAX_PLIES or len(line) % 2:
            raise PlayError(
                Code.BAD_MESSAGE,
                f"line {number}: their move and your reply in turn, 2 to {MAX_PLIES} plies",
            )
        board = copy.deepcopy(game)
        played: list[str] = []
        for text in line:
            if board.outcome() is not None:
                raise PlayError(Code.BAD_MESSAGE, f"line {number}: the game is over before {text}")
            try:
                played.append(str(board.play(text)))
            except RulesError as exc:
                raise PlayError(Code.ILLEGAL_MOVE, f"line {number}: {text}: {exc}") from exc
        out.append(played)
    return out


async def _position(live: LivePlay, user_id: int, game_id: int) -> tuple[Any, Game, Color]:
    """The game (row, position) and the user's colour; refused unless it is a correspondence
    game in progress that the user plays."""
    async with live.db.session() as session:
        loaded = await stored_games.load(session, game_id)
    if loaded is None or user_id not in (loaded.row.black_id, loaded.row.white_id):
        raise no_game(game_id)
    row = loaded.row
    if not is_correspondence(row.clock_base_s):
        raise PlayError(Code.BAD_MESSAGE, "conditional moves are for correspondence games")
    if row.status != GameStatus.PLAYING:
        raise PlayError(Code.GAME_OVER, f"game {game_id} has ended")
    game = Game(get_variant(row.variant), start_fen=row.start_fen)
    for text in loaded.moves:
        game.play(text)
    colour = Color.BLACK if row.black_id == user_id else Color.WHITE
    return row, game, colour


async def show(live: LivePlay, user_id: int, game_id: int) -> dict[str, Any]:
    """The user's conditional moves in the game (none: `lines` empty)."""
    row, _, _ = await _position(live, user_id, game_id)
    async with live.db.session() as session:
        found = await stored.conditional(session, game_id, user_id)
    fits = found is not None and found.ply == row.ply_count
    return {"game": game_id, "ply": row.ply_count, "lines": found.lines if fits and found else []}


async def store(
    live: LivePlay, user_id: int, game_id: int, lines: list[list[str]]
) -> dict[str, Any]:
    """Store the user's conditional moves (instead of any before; none: forget them), while
    the opponent is to move."""
    if len(lines) > MAX_LINES:
        raise PlayError(Code.BAD_MESSAGE, f"at most {MAX_LINES} lines")
    await _count_save(live, user_id)
    row, game, colour = await _position(live, user_id, game_id)
    if turn_of(row) is colour:
        raise PlayError(Code.NOT_YOUR_TURN, "conditional moves wait for your opponent's move")
    checked = _checked(game, lines)
    async with live.db.session() as session:
        await stored.put_conditional(
            session, game_id, user_id, row.ply_count, checked, live.clock.now()
        )
        await session.commit()
    return {"game": game_id, "ply": row.ply_count, "lines": checked}


async def _count_save(live: LivePlay, user_id: int) -> None:
    """Count a store of the user's conditional moves, across their games, before its lines
    are checked; `rate_limited` (with Retry-After) past `conditional_saves_per_minute`."""
    bucket = limits.Bucket(live.settings.conditional_saves_per_minute, 60)
    async with live.db.session() as session:
        counted = [(limits.key("conditional", str(user_id)), bucket)]
        wait = await limits.take_all(session, counted, live.clock.now())
        if wait is not None:
            await session.rollback()
            raise PlayError(
                Code.RATE_LIMITED, "conditional moves stored too often: wait", retry_after=wait
            )
        await session.commit()


async def after_move(live: LivePlay, game_id: int, owner: int, ply: int, move: str) -> None:
    """The opponent of `owner` has made `move`, the game's `ply`-th: play `owner`'s reply if a
    line of theirs begins with it, keeping what follows; drop what no longer fits."""
    async with live.db.session() as session:
        found = await stored.conditional(session, game_id, owner, lock=True)
        if found is None:
            return
        fitting = [line for line in found.lines if found.ply == ply - 1 and line[0] == move]
        if not fitting:
            await stored.put_conditional(session, game_id, owner, ply, [], live.clock.now())
            await session.commit()
            return
        reply = fitting[0][1]
        rest = [line[2:] for line in fitting if line[1] == reply and len(line) > 2]
        await stored.put_conditional(session, game_id, owner, ply + 1, rest, live.clock.now())
        await session.commit()
    try:
        await games.play_move(live, owner, game_id, reply, ply)
    except PlayError as exc:  # the game ended meanwhile, say: nothing more to play
        logger.info("conditional move %s of game %d not played: %s", reply, game_id, exc)
        async with live.db.session() as session:
            await stored.put_conditional(session, game_id, owner, ply, [], live.clock.now())
            await session.commit()
