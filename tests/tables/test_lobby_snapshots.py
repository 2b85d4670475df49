"""New lobby subscribers share snapshot reads, and never one that could miss an update."""

from __future__ import annotations

import asyncio

from app.realtime.lobby import LobbySnapshots


class Reads:
    """A lobby read that waits until let go, and counts how often it was made."""

    def __init__(self) -> None:
        self.count = 0
        self.go = asyncio.Event()
        self.fail = False

    async def __call__(self) -> str:
        self.count += 1
        number = self.count
        await self.go.wait()
        if self.fail:
            raise ConnectionError("the database is down")
        return f"snapshot {number}"


async def test_a_crowd_arriving_at_once_shares_one_read() -> None:
    reads = Reads()
    snapshots = LobbySnapshots(reads)
    crowd = [asyncio.create_task(snapshots.get()) for _ in range(50)]
    await asyncio.sleep(0)
    reads.go.set()
    assert set(await asyncio.gather(*crowd)) == {"snapshot 1"}
    assert reads.count == 1
    assert await snapshots.get() == "snapshot 1"  # and the next second's newcomers too
    assert reads.count == 1


async def test_an_update_sent_during_a_read_makes_later_subscribers_read_again() -> None:
    reads = Reads()
    snapshots = LobbySnapshots(reads)
    early = asyncio.create_task(snapshots.get())
    await asyncio.sleep(0)
    snapshots.changed()  # an update the early read may not hold; the early subscriber gets it
    late = asyncio.create_task(snapshots.get())  # subscribed after it: must not get that read
    await asyncio.sleep(0)
    reads.go.set()
    assert await early == "snapshot 1"
    assert await late == "snapshot 2"
    assert await snapshots.get() == "snapshot 2"
    snapshots.changed()
    assert await snapshots.get() == "snapshot 3"


async def test_a_snapshot_is_served_again_for_its_age_only() -> None:
    reads = Reads()
    reads.go.set()
    snapshots = LobbySnapshots(reads, max_age=0.0)
    assert await snapshots.get() == "snapshot 1"
    assert await snapshots.get() == "snapshot 2"


async def test_a_failed_read_fails_its_waiters_and_the_next_subscriber_reads_again() -> None:
    reads = Reads()
    reads.fail = True
    snapshots = LobbySnapshots(reads)
    waiting = [asyncio.create_task(snapshots.get()) for _ in range(3)]
    await asyncio.sleep(0)
    reads.go.set()
    for outcome in await asyncio.gather(*waiting, return_exceptions=True):
        assert isinstance(outcome, ConnectionError)
    reads.fail = False
    assert await snapshots.get() == "snapshot 2"


async def test_a_subscriber_leaving_does_not_cancel_the_read_of_the_others() -> None:
    reads = Reads()
    snapshots = LobbySnapshots(reads)
    leaving = asyncio.create_task(snapshots.get())
    staying = asyncio.create_task(snapshots.get())
    await asyncio.sleep(0)
    leaving.cancel()
    reads.go.set()
    assert await staying == "snapshot 1"
    assert reads.count == 1


async def test_a_subscriber_sent_an_update_during_its_read_gets_a_snapshot_read_after_it() -> None:
    """A subscriber hears the lobby's updates from the moment it subscribes: one sent while
    its snapshot is read reaches it first, so a snapshot read before that update (which may
    not hold it) would undo it on the page: such a subscriber gets a snapshot read after."""
    reads = Reads()
    snapshots = LobbySnapshots(reads)
    subscriber = asyncio.create_task(snapshots.for_subscriber())
    await asyncio.sleep(0)
    snapshots.changed()  # sent to the subscriber before its snapshot
    reads.go.set()
    assert await subscriber == "snapshot 2"
    assert reads.count == 2
