"""This process's table feeds: each watched table's events delivered in order to its watchers.

Table events are numbered where they are stored (`app.live.log_store`); a feed delivers them in
order to the connections that watch the table here, whichever way they arrive (announced by a
use case of this process, or rung on the broker by another). A number beyond the next one is a
gap: the feed reads the missed events from the log. The hub also compares the feeds with the
log's heads every sweep (`compare_heads`), so a lost ring (a broker outage) costs a delay,
never an event.
"""

from __future__ import annotations

import asyncio
import functools
import logging
from collections import deque
from collections.abc import Callable, Sequence
from typing import Any

from app.clock import Timer
from app.live.liveplay import LivePlay, StoredEvent, table_channel
from app.metrics import EVENT_LOG_READS
from app.play import following
from app.realtime.connections import Connection, ConnectionState
from app.tables import chat as table_chat

logger = logging.getLogger(__name__)

EVENTS_KEPT = 200  # the last events of each table, for clients that resume
FEED_LINGER_SECONDS = 30.0  # keep a table's feed a while after its last watcher left
CATCH_UP_BATCH = 500  # events read from the log at a time
# An event that arrives ahead of one still missing is held this long for the missing one's ring
# before the log is read: the rings of two processes writing one table in turn (both players
# asking for a rematch at once, say) often cross, and the ring is cheaper than a query.
GAP_WAIT_SECONDS = 0.1
# The events after which who sits at a table may have changed (its spectators are counted again).
SEATING_KINDS = frozenset({"table_update", "game_started"})
SPECTATORS_EVERY_SECONDS = 1.0  # at most one spectator-count update per table to the lobby


class TableFeed:
    """One table as this process serves it: the number of its latest event delivered here, the
    last events (for clients that resume), and its watchers with the number each has had."""

    def __init__(self, table_id: int) -> None:
        self.table_id = table_id
        self.version = 0
        self.events: deque[StoredEvent] = deque(maxlen=EVENTS_KEPT)
        self.watchers: dict[Connection, int] = {}
        self.ready: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self.task: asyncio.Task[None] | None = None
        self.catching_up: asyncio.Task[None] | None = None
        # Events that arrived ahead of a missing one (by number, with whether they are foreign),
        # and the timer that reads the log if the missing one's ring does not come.
        self.early: dict[int, tuple[StoredEvent, bool]] = {}
        self.gap_timer: Timer | None = None
        self.linger: Timer | None = None
        self.held_rings: list[str] = []  # rings come before the log's head was read
        # The table as the lobby last heard of it from here (None: not since the feed began),
        # whether it left the lobby, the spectator count the lobby was given, when, and a
        # pending update of that count.
        self.summary: dict[str, Any] | None = None
        self.unlisted = False
        self.spectators_shown = 0
        self.spectators_at = -SPECTATORS_EVERY_SECONDS
        self.spectators_timer: Timer | None = None


class Feeds:
    """The feeds of the tables watched here, by table id; `watchers_changed` is told when a
    feed's watchers change (the lobby counts spectators)."""

    def __init__(self, live: LivePlay, watchers_changed: Callable[[TableFeed], None]) -> None:
        self.live = live
        self.feeds: dict[int, TableFeed] = {}
        self.watchers_changed = watchers_changed

    def get(self, table_id: int) -> TableFeed | None:
        return self.feeds.get(table_id)

    def stop(self) -> list[asyncio.Task[Any]]:
        """Stop every feed's timers; their tasks, for the caller to cancel and await."""
        for feed in self.feeds.values():
            for timer in (feed.linger, feed.spectators_timer, feed.gap_timer):
                if timer is not None:
                    timer.cancel()
        return [t for f in self.feeds.values() for t in (f.task, f.catching_up) if t is not None]

    def deliver(self, events: Sequence[StoredEvent]) -> None:
        """Stored events, from this process's use cases (`LivePlay.announce`)."""
        for event in events:
            feed = self.feeds.get(event.table_id)
            if feed is not None and feed.ready.done():
                self._offer(feed, event)

    def _offer(self, feed: TableFeed, event: StoredEvent, *, foreign: bool = False) -> None:
        """Deliver the table's next event; ignore one already delivered; hold one that comes
        ahead of some missing, and read the log if they do not come within
        `GAP_WAIT_SECONDS`. `foreign`: stored by another process (rung on the broker or read
        from the log), so this process's copy of the game may need it too."""
        if event.seq <= feed.version:
            return
        if event.seq > feed.version + 1:
            feed.early[event.seq] = (event, foreign)
            if feed.gap_timer is None:
                feed.gap_timer = self.live.clock.call_later(
                    GAP_WAIT_SECONDS, functools.partial(self._gap_unfilled, feed)
                )
            return
        self._apply(feed, event, foreign)
        while feed.early:
            held = feed.early.pop(feed.version + 1, None)
            if held is None:
                break
            self._apply(feed, *held)
        if not feed.early and feed.gap_timer is not None:
            feed.gap_timer.cancel()
            feed.gap_timer = None

    def _gap_unfilled(self, feed: TableFeed) -> None:
        feed.gap_timer = None
        if feed.early:
            self.catch_up(feed)

    def _apply(self, feed: TableFeed, event: StoredEvent, foreign: bool) -> None:
        """Deliver the table's next event (numbered one after the last delivered)."""
        feed.early.pop(event.seq, None)
        feed.version = event.seq
        if foreign:
            following.follow(self.live, event)
        # Kept as text for clients that resume: the fields as made (a move's legal moves, its
        # clocks) would stay alive with it and swell every full garbage collection.
        feed.events.append(event.kept())
        frame = event.frame
        hidden = table_chat.hidden_from(event)  # a spectators' line kept from the players
        for conn, seen in tuple(feed.watchers.items()):
            if seen == event.seq - 1:
                if not hidden or conn.user is None or conn.user.id not in hidden:
                    conn.send_text(frame)
                else:
                    conn.send_text(table_chat.withheld_frame(event))
                feed.watchers[conn] = event.seq
            elif seen < event.seq - 1:  # it missed some: bring it up from the log
                del feed.watchers[conn]
                self.live.spawn(self.bring_up(conn, feed, seen))
        if event.kind in SEATING_KINDS:  # who sits there may have changed: count again
            self.watchers_changed(feed)

    def catch_up(self, feed: TableFeed) -> None:
        if feed.catching_up is None or feed.catching_up.done():
            feed.catching_up = asyncio.create_task(self._read_missed(feed))

    async def _read_missed(self, feed: TableFeed) -> None:
        try:
            while True:
                EVENT_LOG_READS.inc()
                missed = await self.live.log_since(feed.table_id, feed.version, CATCH_UP_BATCH)
                for event in missed:
                    self._offer(feed, event, foreign=True)
                if len(missed) < CATCH_UP_BATCH:
                    return
        except Exception:  # the next comparison of heads tries again
            logger.warning("cannot read table %d's events yet", feed.table_id, exc_info=True)

    async def feed(self, table_id: int) -> TableFeed:
        feed = self.feeds.get(table_id)
        if feed is None:
            feed = TableFeed(table_id)
            self.feeds[table_id] = feed
            feed.task = asyncio.create_task(self._run_feed(feed), name=f"feed-{table_id}")
        await asyncio.shield(feed.ready)
        return feed

    async def _run_feed(self, feed: TableFeed) -> None:
        """Follow the table's ring on the broker, subscribed before its log's head is read so
        that nothing falls in between."""
        channel = table_channel(feed.table_id)
        # The rings go to `_ring` as the broker's reader gets them: no queue, so none is dropped
        # for falling behind (SubscriberDropped); the subscription only waits for its end.
        async with self.live.broker.subscribe(channel, functools.partial(self._ring, feed)) as sub:
            try:
                feed.version = await self.live.log_head(feed.table_id)
            except Exception as exc:
                feed.ready.set_exception(exc)
                self.drop(feed)
                return
            feed.ready.set_result(None)
            held, feed.held_rings = feed.held_rings, []
            for ring in held:
                self._ring(feed, ring)
            async for _ in sub:
                pass

    def _ring(self, feed: TableFeed, ring: str) -> None:
        """A ring of the table's channel, handed over by the broker's reader as it comes; held
        until the log's head is known."""
        if not feed.ready.done():
            feed.held_rings.append(ring)
        else:
            self._offer(feed, StoredEvent.of_ring(feed.table_id, ring), foreign=True)

    async def bring_up(self, conn: Connection, feed: TableFeed, seen: int) -> None:
        """Send a connection the table's events after `seen` (kept here or read from the log),
        then let it follow the table with everyone."""
        while conn.state is ConnectionState.OPEN and feed.table_id in conn.tables:
            if seen >= feed.version:
                feed.watchers[conn] = seen  # no await since the comparison: nothing missed
                self.watchers_changed(feed)
                return
            kept = [e for e in feed.events if e.seq > seen]
            if not kept or kept[0].seq != seen + 1:
                kept = await self.live.log_since(feed.table_id, seen, CATCH_UP_BATCH)
            before = seen
            for event in kept:
                if event.seq == seen + 1:
                    conn.send_text(table_chat.frame_for(event, conn.user_id))
                    seen = event.seq
            if seen == before:  # the log has nothing newer (cannot be): follow from here
                feed.watchers[conn] = seen
                return

    def leave(self, conn: Connection, feed: TableFeed) -> None:
        if feed.watchers.pop(conn, None) is not None:
            self.watchers_changed(feed)

    def linger(self, feed: TableFeed) -> None:
        if feed.linger is None:
            feed.linger = self.live.clock.call_later(
                FEED_LINGER_SECONDS, functools.partial(self.drop, feed)
            )

    def drop(self, feed: TableFeed) -> None:
        feed.linger = None
        if feed.watchers:
            return
        if self.feeds.get(feed.table_id) is feed:
            del self.feeds[feed.table_id]
        if feed.spectators_timer is not None:
            feed.spectators_timer.cancel()
        if feed.gap_timer is not None:
            feed.gap_timer.cancel()
        for task in (feed.task, feed.catching_up):
            if task is not None and task is not asyncio.current_task():
                task.cancel()

    async def compare_heads(self) -> None:
        if not self.feeds:
            return
        heads = await self.live.log_heads(list(self.feeds))
        for table_id, head in heads.items():
            feed = self.feeds.get(table_id)
            if feed is not None and head > feed.version:
                # Behind the log: most often its last rings are on their way (a busy table's
                # always are, for a moment); read the log if they do not come in time.
                self.live.clock.call_later(
                    GAP_WAIT_SECONDS, functools.partial(self._still_behind, feed, head)
                )

    def _still_behind(self, feed: TableFeed, head: int) -> None:
        if feed.version < head and self.feeds.get(feed.table_id) is feed:
            self.catch_up(feed)
