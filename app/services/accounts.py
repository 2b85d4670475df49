"""Accounts: registration, log-in with throttling, guests, bearer tokens, admins.

Tokens are random strings handed to the client once; only their SHA-256 is stored, so a leaked
database does not let anyone act as a player. Failed log-ins are counted per name (whether or not
the account exists, so the throttle reveals nothing) in `login_failures`.
"""

from __future__ import annotations

import asyncio
import hashlib
import math
import re
import secrets
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from functools import cache

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError
from sqlalchemy import delete, func, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession

from app.config import Settings
from app.db.models import AuthToken, LoginFailure, User, utcnow
from app.metrics import LOGINS

NAME_RE = re.compile(r"[A-Za-z0-9_-]{3,20}")
GUEST_PREFIX = "guest-"
PASSWORD_MIN_LENGTH = 8
PASSWORD_MIN_DISTINCT = 4  # "aaaaaaaa", "abababab" and the like are refused
MAX_TOKEN_LENGTH = 128
FAILURE_KEY_LENGTH = 64  # login_failures.name

# The most common passwords of at least eight characters, plus this site's obvious guesses.
COMMON_PASSWORDS = frozenset(
    {
        "password", "password1", "password123", "passw0rd", "12345678", "123456789",
        "1234567890", "87654321", "11111111", "00000000", "qwertyui", "qwertyuiop",
        "qwerty123", "1q2w3e4r", "1qaz2wsx", "asdfghjk", "asdfghjkl", "zxcvbnm1",
        "iloveyou", "sunshine", "princess", "football", "baseball", "welcome1", "letmein1",
        "trustno1", "superman", "starwars", "abcd1234", "abc12345", "aa123456", "12341234",
        "monkey123", "dragon123", "checkers", "checkers1", "draughts", "draughts1",
    }
)  # fmt: skip

# OWASP's Argon2id minimum (19 MiB, 2 passes, 1 lane): about 40 ms per check here, against
# 170-400 ms for argon2-cffi's default profile. Hashes made with other parameters are upgraded
# at the next log-in. At most HASH_WORKERS run at once, so a burst of log-ins queues instead of
# taking every core and 19 MiB per attempt.
password_hasher = PasswordHasher(time_cost=2, memory_cost=19 * 1024, parallelism=1)
HASH_WORKERS = 2
_hash_pool = ThreadPoolExecutor(HASH_WORKERS, thread_name_prefix="argon2")


class AccountError(Exception):
    """A refused account operation; `code` is stable and shown to clients."""

    code = "account_error"


class InvalidName(AccountError):
    code = "invalid_name"


class WeakPassword(AccountError):
    code = "weak_password"


class NameTaken(AccountError):
    code = "name_taken"


class BadCredentials(AccountError):
    code = "bad_credentials"


class Banned(AccountError):
    code = "banned"

    def __init__(self, reason: str | None) -> None:
        self.reason = reason
        super().__init__(f"this account is banned: {reason or 'no reason given'}")


class TooManyFailures(AccountError):
    code = "too_many_attempts"

    def __init__(self, retry_after: int) -> None:
        self.retry_after = retry_after
        super().__init__(f"too many failed log-ins for this name; retry in {retry_after} s")


@dataclass(frozen=True)
class Login:
    """A user together with a fresh bearer token (shown once, never stored in clear)."""

    user: User
    token: str
    expires_at: datetime


def as_utc(moment: datetime) -> datetime:
    """SQLite returns naive datetimes; every stored time is UTC."""
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


def hash_token(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def validate_name(name: str) -> str:
    if not NAME_RE.fullmatch(name):
        raise InvalidName("a name is 3 to 20 characters: letters, digits, '_' and '-'")
    if name.lower().startswith(GUEST_PREFIX):
        raise InvalidName(f"names starting with {GUEST_PREFIX!r} are kept for guests")
    return name


def check_password(password: str, name: str) -> None:
    """Refuse passwords an attacker would try first."""
    if len(password) < PASSWORD_MIN_LENGTH:
        raise WeakPassword(f"a password needs at least {PASSWORD_MIN_LENGTH} characters")
    lowered = password.lower()
    if lowered in COMMON_PASSWORDS:
        raise WeakPassword("this password is among the most common ones")
    if len(set(lowered)) < PASSWORD_MIN_DISTINCT:
        raise WeakPassword(f"a password needs at least {PASSWORD_MIN_DISTINCT} distinct characters")
    if name.lower() in lowered:
        raise WeakPassword("a password must not contain the name")


async def hash_password(password: str) -> str:
    """Argon2 takes tens of milliseconds on purpose: keep it off the event loop."""
    return await asyncio.get_running_loop().run_in_executor(
        _hash_pool, password_hasher.hash, password
    )


async def _verify(password_hash: str, password: str) -> bool:
    loop = asyncio.get_running_loop()
    try:
        return await loop.run_in_executor(
            _hash_pool, password_hasher.verify, password_hash, password
        )
    except (VerificationError, InvalidHashError):
        return False


@cache
def _decoy_hash() -> str:
    """Verified against when the name is unknown, so both cases take the same time."""
    return password_hasher.hash(secrets.token_urlsafe(16))


async def find_user(session: AsyncSession, name: str) -> User | None:
    """The account with this name, ignoring case (names are unique regardless of case).

    The exact spelling is looked up first: it uses the unique index, and is what clients send.
    """
    user = await session.scalar(select(User).where(User.name == name))
    if user is None:
        result = await session.scalars(select(User).where(func.lower(User.name) == name.lower()))
        user = result.first()
    return user


async def _issue_token(session: AsyncSession, settings: Settings, user: User) -> Login:
    token = secrets.token_urlsafe(32)
    expires_at = utcnow() + timedelta(hours=settings.token_ttl_hours)
    session.add(AuthToken(token_hash=hash_token(token), user_id=user.id, expires_at=expires_at))
    return Login(user=user, token=token, expires_at=expires_at)


async def register(session: AsyncSession, settings: Settings, name: str, password: str) -> Login:
    """Create a player account and log it in, in one transaction."""
    validate_name(name)
    check_password(password, name)
    if await find_user(session, name) is not None:
        raise NameTaken(f"the name {name!r} is taken")
    await session.commit()  # hold no transaction (on SQLite: the write lock) while hashing
    password_hash = await hash_password(password)
    user = User(name=name, password_hash=password_hash, kind="registered", last_seen_at=utcnow())
    session.add(user)
    try:
        await session.flush()
        login = await _issue_token(session, settings, user)
        await session.commit()
    except IntegrityError as exc:  # the same name registered concurrently
        await session.rollback()
        raise NameTaken(f"the name {name!r} is taken") from exc
    LOGINS.labels("registered").inc()
    return login


async def start_guest(session: AsyncSession, settings: Settings) -> Login:
    """A passwordless account named like `guest-7f3a2c`, usable until its token expires."""
    for _ in range(5):
        name = GUEST_PREFIX + secrets.token_hex(3)
        if await find_user(session, name) is not None:
            continue
        user = User(name=name, kind="guest", last_seen_at=utcnow())
        session.add(user)
        try:
            await session.flush()
        except IntegrityError:
            await session.rollback()
            continue
        login = await _issue_token(session, settings, user)
        await session.commit()
        LOGINS.labels("guest").inc()
        return login
    raise RuntimeError("could not draw a free guest name")


async def _retry_after(session: AsyncSession, settings: Settings, key: str) -> int | None:
    """Seconds until another attempt on `key` is allowed, or None if one is allowed now."""
    now = utcnow()
    window = timedelta(seconds=settings.login_window_seconds)
    recent = (
        await session.scalars(
            select(LoginFailure.at)
            .where(LoginFailure.name == key, LoginFailure.at > now - window)
            .order_by(LoginFailure.at)
        )
    ).all()
    if len(recent) < settings.login_max_failures:
        return None
    # Allowed again once enough of the recent failures have left the window.
    frees_at = as_utc(recent[len(recent) - settings.login_max_failures]) + window
    return max(1, math.ceil((frees_at - now).total_seconds()))


async def _record_failure(session: AsyncSession, settings: Settings, key: str) -> None:
    cutoff = utcnow() - timedelta(seconds=settings.login_window_seconds)
    await session.execute(
        delete(LoginFailure).where(LoginFailure.name == key, LoginFailure.at <= cutoff)
    )
    session.add(LoginFailure(name=key))
    await session.commit()


async def log_in(session: AsyncSession, settings: Settings, name: str, password: str) -> Login:
    """Check the password and issue a token; throttled per name, refused to banned accounts."""
    key = name.lower()[:FAILURE_KEY_LENGTH]
    retry_after = await _retry_after(session, settings, key)
    if retry_after is not None:
        LOGINS.labels("throttled").inc()
        raise TooManyFailures(retry_after)
    user = await find_user(session, name)
    await session.commit()  # hold no transaction (on SQLite: the write lock) while hashing
    if user is None or user.password_hash is None:
        decoy = await asyncio.get_running_loop().run_in_executor(_hash_pool, _decoy_hash)
        await _verify(decoy, password)
        ok = False
    else:
        ok = await _verify(user.password_hash, password)
    if not ok or user is None:
        await _record_failure(session, settings, key)
        LOGINS.labels("bad_credentials").inc()
        raise BadCredentials("wrong name or password")
    if user.banned:
        LOGINS.labels("banned").inc()
        raise Banned(user.ban_reason)
    if user.password_hash is not None and password_hasher.check_needs_rehash(user.password_hash):
        user.password_hash = await hash_password(password)
    now = utcnow()
    user.last_seen_at = now
    await session.execute(delete(LoginFailure).where(LoginFailure.name == key))
    await session.execute(
        delete(AuthToken).where(AuthToken.user_id == user.id, AuthToken.expires_at <= now)
    )
    login = await _issue_token(session, settings, user)
    await session.commit()
    LOGINS.labels("ok").inc()
    return login


async def log_out(session: AsyncSession, token: str) -> None:
    """Revoke one token (the one the client logs out with)."""
    await session.execute(delete(AuthToken).where(AuthToken.token_hash == hash_token(token)))
    await session.commit()


async def user_for_token(session: AsyncSession, token: str) -> User | None:
    """The user a bearer token belongs to; None if unknown, expired or the user is banned."""
    if not token or len(token) > MAX_TOKEN_LENGTH:
        return None
    result = await session.scalars(
        select(User)
        .join(AuthToken, AuthToken.user_id == User.id)
        .where(
            AuthToken.token_hash == hash_token(token),
            AuthToken.expires_at > utcnow(),
            User.banned.is_(False),
        )
    )
    return result.first()


async def create_admin(session: AsyncSession, name: str, password: str | None) -> User:
    """Promote the registered account `name` to admin, or create it with `password`.

    Raises InvalidName for guests and imported names (they cannot log in), and WeakPassword
    when a new account needs a password and the one given is missing or weak.
    """
    user = await find_user(session, name)
    if user is not None:
        if user.kind != "registered":
            raise InvalidName(f"{user.name!r} is a {user.kind} account, which cannot log in")
        user.role = "admin"
        await session.commit()
        return user
    validate_name(name)
    if password is None:
        raise WeakPassword("a new account needs a password")
    check_password(password, name)
    user = User(name=name, password_hash=await hash_password(password), role="admin")
    session.add(user)
    await session.commit()
    return user
