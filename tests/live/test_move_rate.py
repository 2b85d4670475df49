"""The move rate of `/api/admin/status` and the heartbeat: counted by live play as it accepts
moves, per process, without reading the Prometheus registry back."""

from __future__ import annotations

from prometheus_client import REGISTRY

from app.live.move_rate import MoveRate


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_moves_are_counted_over_the_last_minute() -> None:
    clock = FakeClock()
    rate = MoveRate(window=60.0, clock=clock)
    assert rate.last_minute() == (0, 0.0)
    for _ in range(3):
        rate.accepted("english")
    clock.now += 30
    rate.accepted("pool")
    assert rate.last_minute() == (4, 30.0)
    clock.now += 31  # the first three are more than a minute old
    assert rate.last_minute() == (1, 60.0)
    clock.now += 60
    assert rate.last_minute() == (0, 60.0)


def test_each_counter_counts_only_its_own_moves_and_feeds_prometheus() -> None:
    """Two apps in one process (as in tests) share the Prometheus registry, not their rates."""
    before = REGISTRY.get_sample_value("checkers_moves_accepted_total", {"variant": "english"})
    here, there = MoveRate(), MoveRate()
    here.accepted("english")
    here.accepted("english")
    assert here.last_minute()[0] == 2
    assert there.last_minute()[0] == 0
    after = REGISTRY.get_sample_value("checkers_moves_accepted_total", {"variant": "english"})
    assert (after or 0) - (before or 0) == 2
