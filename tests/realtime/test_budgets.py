"""The token bucket both message limits use, and the budgets of client addresses (pure: no
server; times are given to the bucket explicitly)."""

from __future__ import annotations

import pytest

from app.realtime import budgets
from app.realtime import protocol as p
from app.realtime.connections import TokenBucket


def test_take_refuses_past_the_burst_and_spends_nothing_then() -> None:
    bucket = TokenBucket(10.0, 20.0, at=0.0)
    assert all(bucket.take(now=0.0) for _ in range(20))
    assert not bucket.take(now=0.0)
    assert bucket.take(now=0.1)  # one unit back after a tenth of a second
    assert not bucket.take(5.0, now=0.2)  # a costly message needs its whole cost
    assert bucket.take(1.0, now=0.2)


def test_reserve_grants_past_the_burst_after_waits_in_the_order_asked() -> None:
    bucket = TokenBucket(10.0, 20.0, at=0.0)
    assert [bucket.reserve(now=0.0) for _ in range(20)] == [0.0] * 20
    waits = [bucket.reserve(now=0.0) for _ in range(3)]
    assert waits == pytest.approx([0.1, 0.2, 0.3])
    assert bucket.reserve(5.0, now=0.0) == pytest.approx(0.8)  # behind the three, for 5 units
    assert bucket.reserve(now=2.0) == pytest.approx(0.0)  # the debt (8 units) paid back


@pytest.mark.parametrize(
    "message", [p.Watch(type="watch", table=1), p.SubscribeLobby(type="subscribe_lobby")]
)
def test_a_snapshot_costs_more_than_a_ping(message: p.Message) -> None:
    ping = p.Ping(type="ping")
    assert budgets.cost(message) > budgets.cost(ping) == budgets.cost(None) == 1.0


def test_an_address_s_sockets_share_its_budget_and_reconnecting_does_not_refill_it() -> None:
    shared = budgets.AddressBudgets(10.0)
    first, second, other = shared.enter("10.0.0.1"), shared.enter("10.0.0.1"), shared.enter("::1")
    assert first.bucket is second.bucket is not other.bucket
    assert first.bucket is not None
    first.bucket.tokens = -50.0  # in debt
    shared.leave("10.0.0.1")
    shared.leave("10.0.0.1")
    again = shared.enter("10.0.0.1")
    assert again.bucket is first.bucket and again.bucket.tokens < 0


async def test_no_budget_when_the_setting_is_0() -> None:
    unlimited = budgets.AddressBudgets(0.0)
    budget = unlimited.enter("10.0.0.1")
    assert budget is budgets.UNLIMITED and budget.bucket is None
    await budget.spend(1e9)  # at once
    unlimited.leave("10.0.0.1")
    assert len(unlimited) == 0
