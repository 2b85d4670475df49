"""Abuse limits counted in the database, so that every server process counts the same attempts.

Each counter is a `rate_limits` row. An attempt is *reserved* — counted — in the transaction
that decides whether it may go on, before the work it limits (a password check, a new
account): `INSERT … ON CONFLICT (key) DO UPDATE` creates or locks the row in one statement
(PostgreSQL locks the row it conflicts with until the commit; SQLite runs one write
transaction at a time), so of many concurrent attempts each sees the ones before it and no
more than the limit go on. Rows are locked in key order, so two attempts never wait for each
other in a cycle; pruning skips locked rows, so it never waits at all. Those statements are
`app.accounts.limits_store`; this module decides what the counts mean.

Two ways of counting:

- A leaky bucket (per address, per name, accounts per address): `hits` drains at
  `capacity / period` per second since `at`. A new hit is allowed while the level plus one
  stays within `capacity`; otherwise Retry-After is the time the bucket takes to drain enough.
  So `capacity` hits may come at once, then one every `period / capacity` seconds.
- A lock (per name and address pair): from `login_max_failures` failures on, the pair waits
  `login_window_seconds * 2^(failures - login_max_failures)` after its latest failure (capped at
  `login_lockout_max_seconds`), so each guess after a lock doubles the next wait. Its failures
  are forgotten one window after any lock has run out, and cleared by a successful log-in.

The log-in policy: a failed log-in counts against its pair, its address (across names) and its
name (across addresses). The name's limit only delays addresses that failed on that name and
never logged into it: an attack on a name from many addresses then costs the attacker one
address per guess, while the owner still gets in from a new address, or from one they logged in
from before, and is never locked out by strangers.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy.ext.asyncio import AsyncSession

from app.accounts import limits_store as stored
from app.accounts.limits_store import Counter
from app.config import Settings
from app.timeutil import as_utc, utcnow

KEY_PART_LENGTH = 64  # of an address or a name in a key (rate_limits.key holds 160)
MAX_DOUBLINGS = 40  # 2**40 windows is far beyond any cap


@dataclass(frozen=True)
class Bucket:
    """A leaky bucket: `capacity` hits, draining completely in `period` seconds."""

    capacity: int
    period: int

    def level(self, counter: Counter, now: datetime) -> float:
        if counter.at is None:
            return 0.0
        elapsed = max(0.0, (now - as_utc(counter.at)).total_seconds())
        return max(0.0, counter.hits - elapsed * self.capacity / self.period)

    def wait(self, level: float) -> int | None:
        """Seconds before one more hit fits, or None if it fits now."""
        excess = level + 1 - self.capacity
        if excess <= 0:
            return None
        return max(1, math.ceil(excess * self.period / self.capacity))

    def empty_at(self, level: float, now: datetime) -> datetime:
        return now + timedelta(seconds=level * self.period / self.capacity)


def _key(kind: str, *parts: str) -> str:
    return kind + ":" + "/".join(part[:KEY_PART_LENGTH] for part in parts)


async def _store(
    session: AsyncSession,
    counter: Counter,
    expires_at: datetime,
) -> None:
    if counter.trusted_until is not None:
        expires_at = max(expires_at, as_utc(counter.trusted_until))
    await stored.store(session, counter, expires_at)


async def prune(session: AsyncSession) -> None:
    """Delete counters that no longer hold anything (a batch; each attempt prunes again)."""
    await stored.prune(session, utcnow())
    await session.commit()


# --- accounts per address ----------------------------------------------------------------


async def take(session: AsyncSession, kind: str, address: str, bucket: Bucket) -> int | None:
    """Count one more `kind` (say, a guest account) for `address` and commit; or, when its
    bucket is full, change nothing and return the seconds to wait."""
    now = utcnow()
    counter = (await stored.lock(session, [_key(kind, address)], now)).popitem()[1]
    level = bucket.level(counter, now)
    retry_after = bucket.wait(level)
    if retry_after is not None:
        await session.rollback()
        return retry_after
    counter.hits, counter.at = level + 1, now
    await _store(session, counter, bucket.empty_at(level + 1, now))
    await session.commit()
    await prune(session)
    return None


async def take_all(
    session: AsyncSession, counted: list[tuple[str, Bucket]], now: datetime
) -> int | None:
    """Count one more hit on each (key, bucket) in the caller's transaction, which commits it
    with the work it limits; or, when a bucket is full, change nothing and return the seconds
    to wait (the caller rolls back). Keys come from `key(kind, *parts)`."""
    counters = await stored.lock(session, [k for k, _ in counted], now)
    levels = [(counters[k], bucket, bucket.level(counters[k], now)) for k, bucket in counted]
    waits = [bucket.wait(level) for _, bucket, level in levels]
    retry_after = max((wait for wait in waits if wait is not None), default=None)
    if retry_after is not None:
        return retry_after
    for counter, bucket, level in levels:
        counter.hits, counter.at = level + 1, now
        await _store(session, counter, bucket.empty_at(level + 1, now))
    return None


def key(kind: str, *parts: str) -> str:
    """A counter's key: its kind, then what it counts (an address, a name, user ids)."""
    return _key(kind, *parts)


async def give_back(session: AsyncSession, kind: str, address: str, bucket: Bucket) -> None:
    """Undo one `take` whose attempt came to nothing (a name found taken after all)."""
    now = utcnow()
    counter = (await stored.lock(session, [_key(kind, address)], now)).popitem()[1]
    level = max(0.0, bucket.level(counter, now) - 1)
    counter.hits, counter.at = level, now
    await _store(session, counter, bucket.empty_at(level, now))
    await session.commit()


# --- log-in ------------------------------------------------------------------------------


@dataclass(frozen=True)
class LoginCounters:
    pair: Counter
    address: Counter
    name: Counter


async def _lock_login(
    session: AsyncSession, name: str, address: str, now: datetime
) -> LoginCounters:
    name = name.lower()
    keys = (
        _key("login-pair", address, name),
        _key("login-address", address),
        _key("login-name", name),
    )
    counters = await stored.lock(session, keys, now)
    return LoginCounters(*(counters[key] for key in keys))


def _lock_seconds(failures: int, settings: Settings) -> float:
    over = failures - settings.login_max_failures
    if over < 0:
        return 0.0
    doubled = settings.login_window_seconds * 2 ** min(over, MAX_DOUBLINGS)
    return float(min(settings.login_lockout_max_seconds, doubled))


def _pair_failures(pair: Counter, now: datetime, settings: Settings) -> int:
    """The pair's failures that still count (forgotten a window after any lock ran out)."""
    if pair.at is None:
        return 0
    failures = int(pair.hits)
    remembered = _lock_seconds(failures, settings) + settings.login_window_seconds
    if now >= as_utc(pair.at) + timedelta(seconds=remembered):
        return 0
    return failures


def _buckets(settings: Settings) -> tuple[Bucket, Bucket]:
    window = settings.login_window_seconds
    return (
        Bucket(settings.login_address_max_failures, window),
        Bucket(settings.login_name_max_failures, window),
    )


async def reserve_login(
    session: AsyncSession, settings: Settings, name: str, address: str
) -> int | None:
    """Count a log-in attempt as failed before its password is checked, and commit; or, when a
    limit is reached, change nothing and return the seconds to wait.

    `login_succeeded` takes the count back. Counting first is what bounds concurrent guesses.
    """
    now = utcnow()
    counters = await _lock_login(session, name, address, now)
    address_bucket, name_bucket = _buckets(settings)
    failures = _pair_failures(counters.pair, now, settings)
    address_level = address_bucket.level(counters.address, now)
    name_level = name_bucket.level(counters.name, now)
    waits = [address_bucket.wait(address_level)]
    if failures >= settings.login_max_failures:
        assert counters.pair.at is not None
        locked_until = as_utc(counters.pair.at) + timedelta(
            seconds=_lock_seconds(failures, settings)
        )
        if now < locked_until:
            waits.append(max(1, math.ceil((locked_until - now).total_seconds())))
    trusted = counters.pair.trusted_until is not None and as_utc(counters.pair.trusted_until) > now
    if failures > 0 and not trusted:
        waits.append(name_bucket.wait(name_level))
    retry_after = max((wait for wait in waits if wait is not None), default=None)
    if retry_after is not None:
        await session.rollback()
        return retry_after

    failures += 1
    counters.pair.hits, counters.pair.at = float(failures), now
    remembered = _lock_seconds(failures, settings) + settings.login_window_seconds
    await _store(session, counters.pair, now + timedelta(seconds=remembered))
    counters.address.hits, counters.address.at = address_level + 1, now
    await _store(session, counters.address, address_bucket.empty_at(address_level + 1, now))
    # However hard a name is attacked, the delay it imposes stays within the lockout cap.
    most = name_bucket.capacity * (1 + settings.login_lockout_max_seconds / name_bucket.period)
    name_level = min(name_level + 1, most)
    counters.name.hits, counters.name.at = name_level, now
    await _store(session, counters.name, name_bucket.empty_at(name_level, now))
    await session.commit()
    await prune(session)
    return None


async def login_succeeded(
    session: AsyncSession, settings: Settings, name: str, address: str
) -> None:
    """Take back the attempt `reserve_login` counted, clear the pair's failures and trust the
    pair (for as long as a token lives) when its name is attacked; the caller commits."""
    now = utcnow()
    counters = await _lock_login(session, name, address, now)
    trusted_until = now + timedelta(hours=settings.token_ttl_hours)
    counters.pair.hits, counters.pair.at, counters.pair.trusted_until = 0.0, None, trusted_until
    await _store(session, counters.pair, trusted_until)
    for counter, bucket in zip((counters.address, counters.name), _buckets(settings), strict=True):
        level = max(0.0, bucket.level(counter, now) - 1)
        counter.hits, counter.at = level, now
        await _store(session, counter, bucket.empty_at(level, now))
