"""The analysis board (docs/analysis.md): any position of either variant, moves played freely
from it (each checked by the rules), and the engine's line at a depth asked for, searched in the
analysis processes (`app.analysis.runner`); the client asks for one depth after another
to see the line deepen, and stops when it likes."""

from __future__ import annotations

from typing import Any

from app.accounts import limits
from app.analysis import chances
from app.analysis.game import position_line
from app.analysis.runner import AnalysisRunner
from app.errors import Code
from app.live.liveplay import LivePlay, PlayError
from app.rules import Game, RulesError

BOARD_SEARCHES_PER_MINUTE = 120  # per client address: one a second for a deepening line, twice


def board_position(variant: str, start_fen: str | None, moves: list[str]) -> tuple[Game, list[str]]:
    """The analysis board's position: the game from `start_fen` through `moves` (each checked;
    `bad_request` naming the first that is not legal), and the moves as canonical text."""
    try:
        game = Game(variant, start_fen, automatic_draws=True)
    except (RulesError, ValueError) as exc:
        raise PlayError(Code.BAD_REQUEST, f"not a position: {exc}") from None
    for number, text in enumerate(moves, 1):
        try:
            game.play(text)
        except RulesError as exc:
            raise PlayError(Code.BAD_REQUEST, f"move {number} ({text}): {exc}") from None
    return game, [str(m) for m in game.moves]


def board_view(game: Game, moves: list[str]) -> dict[str, Any]:
    outcome = game.outcome()
    return {
        "variant": game.variant.name,
        "start_fen": game.start_fen,
        "moves": moves,
        "fen": game.fen(),
        "turn": game.position.turn.value,
        "legal_moves": game.legal_move_texts(),
        "result": outcome.result().value if outcome is not None else None,
        "termination": outcome.termination.value if outcome is not None else None,
        "line": None,
    }


async def board(
    live: LivePlay,
    runner: AnalysisRunner,
    address: str,
    variant: str,
    start_fen: str | None,
    moves: list[str],
    depth: int | None,
) -> dict[str, Any]:
    """The analysis board's answer: the position after `moves` with its legal moves and, given
    `depth`, the engine's line to that depth (searched in the analysis processes)."""
    game, texts = board_position(variant, start_fen, moves)
    shown = board_view(game, texts)
    if depth is None or shown["result"] is not None:
        return shown
    async with live.db.session() as session:
        bucket = limits.Bucket(BOARD_SEARCHES_PER_MINUTE, 60)
        wait = await limits.take_all(
            session, [(limits.key("board-search", address), bucket)], live.clock.now()
        )
        if wait is not None:
            await session.rollback()
            raise PlayError(Code.RATE_LIMITED, "too many searches: wait a moment", retry_after=wait)
        await session.commit()
    # One search at a time per address (the page asks for one depth after another): a client
    # that sends many at once does not fill the analysis processes' queue.
    if address in runner.board_searches:
        raise PlayError(Code.RATE_LIMITED, "one search at a time: wait for the last one")
    runner.board_searches.add(address)
    try:
        found = await runner.run(position_line, game.variant.name, start_fen, texts, depth)
    finally:
        runner.board_searches.discard(address)
    shown["line"] = {
        "depth": found.depth,
        "eval": found.value.payload() | {"text": found.value.text()},
        "wdl": list(chances.wdl(found.value)),
        "best": found.best,
        "pv": list(found.pv),
    }
    return shown
