"""The computer opponent as a player: playing its moves (a game against it is started by
`app.tables.opening.start_ai_game`).

The AI is one user per level ("AI level 1" … "AI level 8", kind `ai`: no password, they cannot
log in). Its moves go through `games.play_move` like anyone's; its draw answers and resignations
through `decisions`. Its searches (`app.engine.search`) never run in the event loop: those of
the weak levels, capped at 1,200 nodes or fewer (`ai_search.QUICK_NODES`, a few milliseconds),
in a thread of this process, so they never wait behind the strong levels' long searches; the
others in a bounded process pool (`AI_WORKERS` processes per server process). A game has at most
one search at a time, and searches beyond the pool's size wait their turn in a `FairQueue`,
taken in turn per player, so one player's many games cannot starve the others'. A user may play
at most AI_GAMES_PER_USER games against the AI at once, an address AI_GAMES_PER_ADDRESS
(`app.tables.opening.start_ai_game`).

Which process plays: each game against the AI names its driver (`games.ai_driver`, a heartbeat
instance): the process that started it. Every `sweep_seconds` each process takes over, with a
conditional write, the AI games whose driver is no longer alive (`heartbeat.alive`: on
PostgreSQL a crashed process's advisory lock goes at once), and looks again at the games it
drives; so an AI game survives its process's crash or restart like any game, and the AI's turn
is searched again after a restart. Between sweeps the driver is woken by the events it announces
(the human's move, a draw offer), so a reply does not wait for the sweep.

How the AI behaves (see docs/protocol.md):

- it thinks for its level's movetime, less when its clock is low (at most a twentieth of the
  time it has left), so it moves well within the first-move deadline;
- a draw offer is accepted from move 40 on (ply 80) when a short search scores the position
  about equal or worse for it (at most `ai_search.DRAW_SCORE`, a quarter of a man),
  declined otherwise;
- at levels 6-8 it resigns once its searches have scored the position below `RESIGN_SCORE`
  (five men down) `RESIGN_AFTER` times in a row;
- it never claims a win against an absent player, never aborts, and always accepts a rematch
  (`seating.rematch`).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import multiprocessing
import os
from collections.abc import Callable, Sequence
from concurrent.futures import Executor, ProcessPoolExecutor, ThreadPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import replace

from app.computer import search as ai_search
from app.computer import store as stored_ai
from app.computer.queue import FairQueue
from app.engine import Limits, SearchResult, level_limits, search
from app.errors import Code
from app.live import heartbeat
from app.live.liveplay import LivePlay, PlayError, table_channel
from app.live.log_store import StoredEvent
from app.play import cache as game_cache
from app.play import decisions, games
from app.play.players import LiveGame, PlayerRef
from app.rules import Color
from app.status import GameStatus

logger = logging.getLogger(__name__)

LEVELS = range(1, 9)
RESIGN_FROM_LEVEL = 6
RESIGN_SCORE = -500
RESIGN_AFTER = 3

_WAKING = frozenset(("move", "draw_offered"))  # the events that may need the computer's answer


class AIPlayers:
    """The AI's driver in one server process; started and stopped by the app's lifespan."""

    def __init__(self, live: LivePlay, workers: int, *, at_start: bool = False) -> None:
        self.live = live
        self.workers = workers
        self.at_start = at_start
        # Its search processes: started by the first search (or at start with `at_start`).
        self.pool: Executor | None = None
        self.queue = FairQueue(workers)  # the searches waiting for one of those processes
        self._quick: ThreadPoolExecutor | None = None  # the weak levels' searches
        self.driving: dict[int, int] = {}  # game → table, the games this process plays
        self._tables: dict[int, int] = {}  # table → game
        self._busy: set[int] = set()  # games with a turn in hand
        self._again: set[int] = set()  # woken while busy: look again after this turn
        self.hopeless: dict[int, int] = {}  # game → consecutive hopeless searches
        self._wake = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        # With a shared broker: per table driven here, a task following its ring, so that a
        # human whose socket is on another process is answered without waiting for the sweep.
        self._follows: dict[int, asyncio.Task[None]] = {}
        self._unsubscribe: Callable[[], None] = lambda: None

    async def start(self) -> None:
        async with self.live.db.session() as session:
            self.live.ai_levels = await stored_ai.players(session)
        if self.at_start:
            self._processes().submit(ai_search.warm)
        self._unsubscribe = self.live.subscribe(self)
        self._task = asyncio.create_task(self._run(), name="ai-driver")

    def _processes(self) -> Executor:
        """The search processes, started now if they are not yet."""
        if self.pool is None:
            self.pool = self._new_pool()
        return self.pool

    def _new_pool(self) -> Executor:
        # Spawned (not forked from a process running an event loop and threads), and watching
        # this process so as to end with it.
        return ProcessPoolExecutor(
            self.workers,
            mp_context=multiprocessing.get_context("spawn"),
            initializer=ai_search.search_process,
            initargs=(os.getpid(),),
        )

    async def stop(self) -> None:
        self._unsubscribe()
        tasks = [t for t in (self._task, *self._follows.values()) if t is not None]
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task
        if self.pool is not None:
            self.pool.shutdown(wait=False, cancel_futures=True)
        if self._quick is not None:
            self._quick.shutdown(wait=False, cancel_futures=True)

    # --- who plays which game -----------------------------------------------------------

    async def _run(self) -> None:
        while True:
            try:
                await self.survey()
            except asyncio.CancelledError:
                raise
            except Exception:
                logger.warning("cannot look for games against the computer yet", exc_info=True)
            with contextlib.suppress(TimeoutError):
                async with self.live.clock.timeout(self.live.settings.sweep_seconds):
                    await self._wake.wait()
            self._wake.clear()

    async def survey(self) -> None:
        """Take over the AI games whose driver is gone, and look at every game driven here."""
        live = self.live
        if not live.instance or not live.ai_levels:
            return
        mine: dict[int, int] = {}
        async with live.db.session() as session:
            found = await stored_ai.drivers(session, list(live.ai_levels))
            alive: set[str] | None = None
            for game_id, table_id, driver in found:
                if driver == live.instance:
                    mine[game_id] = table_id
                    continue
                if driver is not None:
                    if alive is None:
                        now = self.live.clock.now()
                        alive = await heartbeat.alive(session, now, live.settings.heartbeat_seconds)
                    if driver in alive:
                        continue
                if await stored_ai.claim(session, game_id, live.instance, driver):
                    logger.info("playing the computer's moves in game %d from now on", game_id)
                    mine[game_id] = table_id
            await session.commit()
        self.driving = mine
        self._tables = {table_id: game_id for game_id, table_id in mine.items()}
        for game_id in list(self.hopeless):
            if game_id not in mine:
                del self.hopeless[game_id]
        if live.broker.shared:
            self._follow_tables()
        for game_id in mine:
            self.nudge(game_id)

    def _follow_tables(self) -> None:
        for table_id in set(self._follows) - set(self._tables):
            self._follows.pop(table_id).cancel()
        for table_id in set(self._tables) - set(self._follows):
            self._follows[table_id] = asyncio.create_task(self._follow(table_id))

    async def _follow(self, table_id: int) -> None:
        """Wake the table's game on every move or draw offer rung for it (by any process)."""
        while True:
            try:
                async with self.live.broker.subscribe(table_channel(table_id)) as sub:
                    async for ring in sub:
                        if StoredEvent.of_ring(table_id, ring).kind in _WAKING:
                            game_id = self._tables.get(table_id)
                            if game_id is not None:
                                self.nudge(game_id)
                    return
            except asyncio.CancelledError:
                raise
            except Exception:  # the broker is down or this follower fell behind: the sweep
                await self.live.clock.sleep(self.live.settings.sweep_seconds)  # covers meanwhile

    def deliver(self, stored: Sequence[StoredEvent]) -> None:
        """Events announced here: the human's move or draw offer in a game played here wakes
        its driver; a game started (perhaps against the AI) wakes the survey."""
        for event in stored:
            if event.kind == "game_started":
                if self._against_ai(event):
                    self._wake.set()
            elif event.kind in _WAKING:
                game_id = self._tables.get(event.table_id)
                if game_id is not None:
                    self.nudge(game_id)

    def _against_ai(self, event: StoredEvent) -> bool:
        """Whether a `game_started` is a game against the computer (only those need the
        survey: people's games, most of them, start without a query)."""
        game = event.data["game"]
        return any(self.live.is_ai(game[side]["id"]) for side in ("black", "white"))

    def nudge(self, game_id: int) -> None:
        """Look at a game driven here: answer a draw offer, move if it is the AI's turn."""
        if game_id in self._busy:
            self._again.add(game_id)
            return
        self._busy.add(game_id)
        self.live.spawn(self._turns(game_id))

    async def _turns(self, game_id: int) -> None:
        try:
            while True:
                self._again.discard(game_id)
                try:
                    await self._turn(game_id)
                except asyncio.CancelledError:
                    raise
                except Exception:
                    logger.warning("the computer could not play in game %d", game_id, exc_info=True)
                if game_id not in self._again:
                    return
        finally:
            self._busy.discard(game_id)

    # --- one turn -------------------------------------------------------------------------

    async def _turn(self, game_id: int) -> None:
        live = self.live
        if game_id not in self.driving:
            return
        lg = await game_cache.read(live, game_id)
        if lg is None or lg.status != GameStatus.PLAYING:
            self.driving.pop(game_id, None)
            return
        colour = Color.BLACK if live.is_ai(lg.black.id) else Color.WHITE
        ai, human = (lg.black, lg.white) if colour is Color.BLACK else (lg.white, lg.black)
        level = live.ai_levels[ai.id]
        if lg.draw_offer is colour.other and await self._answer_draw(lg, ai, colour, human.id):
            return  # accepted: the game is over
        if lg.game.position.turn is not colour or lg.game.outcome() is not None:
            return
        left = None
        if lg.clock is not None and lg.game.ply >= 2:
            left = lg.clock.left(colour, colour, self.live.clock.time())
        limits = replace(level_limits(level), movetime_ms=ai_search.movetime_ms(level, left))
        result = await self._search(lg, limits, human.id)
        if level >= RESIGN_FROM_LEVEL and self._hopeless(game_id, result.score):
            with contextlib.suppress(PlayError):
                await decisions.resign(live, ai.id, game_id)
            return
        try:
            await games.play_move(live, ai.id, game_id, result.move, lg.game.ply)
        except PlayError as exc:
            if exc.code is Code.STALE_PLY:
                self._again.add(game_id)  # the game moved on meanwhile: look again

    def _hopeless(self, game_id: int, score: int) -> bool:
        """Count this search's score; True when the AI should resign."""
        if score >= RESIGN_SCORE:
            self.hopeless.pop(game_id, None)
            return False
        count = self.hopeless[game_id] = self.hopeless.get(game_id, 0) + 1
        return count >= RESIGN_AFTER

    async def _answer_draw(self, lg: LiveGame, ai: PlayerRef, colour: Color, human: int) -> bool:
        """Accept or decline the standing offer (see `ai_search.accepts_draw`); True if accepted."""
        accept = False
        if lg.game.ply >= ai_search.DRAW_FROM_PLY:
            result = await self._search(lg, Limits(movetime_ms=ai_search.DRAW_SEARCH_MS), human)
            score: int | None = None
            if result.depth > 0:
                score = result.score if lg.game.position.turn is colour else -result.score
            accept = ai_search.accepts_draw(lg.game.ply, score)
        try:
            await decisions.answer_draw(self.live, ai.id, lg.id, accept=accept)
        except PlayError:  # withdrawn or ended meanwhile
            return False
        return accept

    async def _search(self, lg: LiveGame, limits: Limits, player: int) -> SearchResult:
        """Search the game's position: a quick search in this process's thread at once, any
        other in the pool when `player` (the human) has its turn for a free worker."""
        loop = asyncio.get_running_loop()
        args = (lg.game.fen(), lg.variant, limits, ai_search.history(lg))
        if ai_search.quick(limits):
            if self._quick is None:
                self._quick = ThreadPoolExecutor(1, thread_name_prefix="ai-quick")
            return await loop.run_in_executor(self._quick, search, *args)
        async with self.queue.slot(player):
            try:
                return await loop.run_in_executor(self._processes(), search, *args)
            except BrokenProcessPool:  # a worker died (killed, out of memory): a new pool
                logger.warning("the computer's search processes died; starting new ones")
                self.pool = self._new_pool()
                return await loop.run_in_executor(self.pool, search, *args)
