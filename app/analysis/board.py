"""The analysis board (docs/analysis.md): any position of either variant, moves played freely
from it (each checked by the rules), and the engine's line at a depth asked for, searched in the
analysis processes (`app.analysis.runner`); the client asks for one depth after another
to see the line deepen, and stops when it likes.

Anyone may ask, without an account, so what one address and everyone together may have in
progress is bounded, and a request beyond a bound is refused at once (`rate_limited`, with
`Retry-After`) rather than queued: a replay of up to 400 moves costs some 15 ms of CPU, a
search seconds. Long replays are made in a process of the board's own, not in the event loop,
where a few dozen at once held up every move of live play (issue 45), and the latest positions
they gave are kept (a page asks for its line again at each depth); a short one costs less than
the request's own handling, and is made at once."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import multiprocessing
import os
from collections import Counter, OrderedDict
from concurrent.futures import Executor, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import Any

from app.accounts import limits
from app.analysis import chances
from app.analysis.game import position_line
from app.analysis.runner import AnalysisRunner
from app.computer.search import watch_parent
from app.config import Settings
from app.errors import Code
from app.live.liveplay import LivePlay, PlayError
from app.rules import Game, RulesError

logger = logging.getLogger(__name__)

BOARD_SEARCHES_PER_MINUTE = 120  # per client address: one a second for a deepening line, twice
BOARD_NICENESS = 10  # the server's event loop first; replays still go on on a busy machine
INLINE_PLIES = 30  # replayed in the event loop: about a millisecond, the request's own cost
KEPT_POSITIONS = 256  # the long lines' positions kept, the least recently asked for dropped
RETRY_AFTER_S = 1  # a bound is about requests in progress: one second frees it, as a rule
# The longest a search is waited for (well within a proxy's 60 s): on a machine whose cores are
# all busy, the analysis processes' idle class can leave it waiting for ever. One still queued
# then is dropped; one already running ends at its node budget.
SEARCH_WAIT_S = 30


class NotAPosition(Exception):
    """A start that is not a position, or a move that is not legal (the message names it);
    raised in the board's process and read back as it is."""


def board_position(variant: str, start_fen: str | None, moves: list[str]) -> tuple[Game, list[str]]:
    """The analysis board's position: the game from `start_fen` through `moves` (each checked;
    `NotAPosition` naming the first that is not legal), and the moves as canonical text."""
    try:
        game = Game(variant, start_fen, automatic_draws=True)
    except (RulesError, ValueError) as exc:
        raise NotAPosition(f"not a position: {exc}") from None
    for number, text in enumerate(moves, 1):
        try:
            game.play(text)
        except RulesError as exc:
            raise NotAPosition(f"move {number} ({text}): {exc}") from None
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


def shown_position(variant: str, start_fen: str | None, moves: list[str]) -> dict[str, Any]:
    """The position after `moves`, as the board shows it (in the board's process unless
    short)."""
    return board_view(*board_position(variant, start_fen, moves))


def board_process(parent: int) -> None:
    """The board's process starts: below the server's priority, and exiting with it."""
    with contextlib.suppress(OSError, AttributeError):
        os.nice(BOARD_NICENESS)
    watch_parent(parent)


def busy(message: str) -> PlayError:
    return PlayError(Code.RATE_LIMITED, message, retry_after=RETRY_AFTER_S)


class Board:
    """The analysis board's share of one server process: its replay process, and what is in
    progress (requests per client address, replays and searches in all), each bounded by a
    setting."""

    def __init__(self, runner: AnalysisRunner, settings: Settings) -> None:
        self.runner = runner
        self.per_address = settings.board_requests_per_address
        self.replays_queued = settings.board_replays_queued
        self.searches_queued = settings.board_searches_queued
        self.asking: Counter[str] = Counter()  # requests in progress per client address
        self.searching: set[str] = set()  # addresses with a search in progress (one each)
        self.replays = 0  # waiting for or being made in the board's process
        self.kept: OrderedDict[tuple[Any, ...], dict[str, Any]] = OrderedDict()  # by line
        self.pool: Executor | None = None

    def stop(self) -> None:
        if self.pool is not None:
            self.pool.shutdown(wait=False, cancel_futures=True)

    async def position(
        self,
        live: LivePlay,
        address: str,
        variant: str,
        start_fen: str | None,
        moves: list[str],
        depth: int | None,
    ) -> dict[str, Any]:
        """The board's answer: the position after `moves` with its legal moves and, given
        `depth`, the engine's line to that depth. A search is one at a time per address and
        `searches_queued` in all, from the request's start: one that cannot be has no replay."""
        if self.asking[address] >= self.per_address:
            raise busy(f"at most {self.per_address} analysis board requests at once")
        search = depth is not None
        if search and address in self.searching:
            raise busy("one search at a time: wait for the last one")
        if search and len(self.searching) >= self.searches_queued:
            raise busy("the engine is busy: try again in a moment")
        self.asking[address] += 1
        if search:
            self.searching.add(address)
        try:
            shown = await self._replayed(variant, start_fen, moves)
            if depth is not None and shown["result"] is None:
                shown["line"] = await self._line(live, address, shown, depth)
            return shown
        finally:
            self.asking[address] -= 1
            if not self.asking[address]:
                del self.asking[address]
            if search:
                self.searching.discard(address)

    async def _replayed(
        self, variant: str, start_fen: str | None, moves: list[str]
    ) -> dict[str, Any]:
        if len(moves) <= INLINE_PLIES:
            try:
                return shown_position(variant, start_fen, moves)
            except NotAPosition as exc:
                raise PlayError(Code.BAD_REQUEST, str(exc)) from None
        key = (variant, start_fen, tuple(moves))
        if (kept := self.kept.get(key)) is not None:
            self.kept.move_to_end(key)
            return dict(kept)  # (the caller adds the line to its copy)
        if self.replays >= self.replays_queued:
            raise busy("the analysis board is busy: try again in a moment")
        self.replays += 1
        try:
            shown = await self._in_process(variant, start_fen, moves)
        except NotAPosition as exc:
            raise PlayError(Code.BAD_REQUEST, str(exc)) from None
        finally:
            self.replays -= 1
        self.kept[key] = shown
        if len(self.kept) > KEPT_POSITIONS:
            self.kept.popitem(last=False)
        return dict(shown)

    async def _in_process(
        self, variant: str, start_fen: str | None, moves: list[str]
    ) -> dict[str, Any]:
        loop = asyncio.get_running_loop()
        try:
            return await loop.run_in_executor(
                self._processes(), shown_position, variant, start_fen, moves
            )
        except BrokenProcessPool:
            logger.warning("the analysis board's process died; starting another")
            self.pool = None
            return await loop.run_in_executor(
                self._processes(), shown_position, variant, start_fen, moves
            )

    def _processes(self) -> Executor:
        if self.pool is None:
            self.pool = ProcessPoolExecutor(
                1,
                mp_context=multiprocessing.get_context("spawn"),
                initializer=board_process,
                initargs=(os.getpid(),),
            )
        return self.pool

    async def _line(
        self, live: LivePlay, address: str, shown: dict[str, Any], depth: int
    ) -> dict[str, Any]:
        """The engine's line in the position shown, searched in the analysis processes (at
        most 120 a minute per address), waited for at most `SEARCH_WAIT_S`."""
        try:
            async with live.db.session() as session:
                bucket = limits.Bucket(BOARD_SEARCHES_PER_MINUTE, 60)
                wait = await limits.take_all(
                    session, [(limits.key("board-search", address), bucket)], live.clock.now()
                )
                if wait is not None:
                    await session.rollback()
                    raise PlayError(
                        Code.RATE_LIMITED, "too many searches: wait a moment", retry_after=wait
                    )
                await session.commit()
            variant, start_fen, moves = shown["variant"], shown["start_fen"], shown["moves"]
            found = await asyncio.wait_for(
                self.runner.run(position_line, variant, start_fen, moves, depth), SEARCH_WAIT_S
            )
        except TimeoutError:
            raise busy("the engine is busy: try again in a moment") from None
        return {
            "depth": found.depth,
            "eval": found.value.payload() | {"text": found.value.text()},
            "wdl": list(chances.wdl(found.value)),
            "best": found.best,
            "pv": list(found.pv),
        }
