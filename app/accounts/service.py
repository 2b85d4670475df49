"""Accounts: registration, log-in with throttling, guests, bearer tokens, admins.

Tokens are random strings handed to the client once; only their SHA-256 is stored, so a leaked
database does not let anyone act as a player. Log-ins, registrations and guests are limited per
client address (and log-ins per name too) by `app.accounts.limits`.
"""

from __future__ import annotations

import asyncio
import hashlib
import re
import secrets
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import datetime, timedelta

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError
from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession

from app.accounts import addresses_store, limits
from app.accounts import store as stored
from app.accounts.store import find_user as find_user
from app.config import Settings
from app.db.models import User
from app.errors import Code, ServiceError
from app.metrics import LOGINS
from app.status import UserKind
from app.timeutil import utcnow

NAME_RE = re.compile(r"[A-Za-z0-9_-]{3,20}")
GUEST_PREFIX = "guest-"
PASSWORD_MIN_LENGTH = 8
PASSWORD_MIN_DISTINCT = 4  # "aaaaaaaa", "abababab" and the like are refused
MAX_TOKEN_LENGTH = 128

# Names that would pass for the site's own voice, refused to new accounts (existing ones keep
# theirs), compared after `reserved_form`: so "Admin", "ad-min" and "admin_2" are refused too.
RESERVED_NAMES = frozenset(
    {
        "admin", "administrator", "root", "system", "sysop", "moderator", "mod", "staff",
        "support", "help", "helpdesk", "official", "owner", "operator", "superuser", "security",
        "webmaster", "postmaster", "hostmaster", "checkers", "draughts", "server", "null",
        "none", "nil", "undefined", "anonymous", "anon", "guest", "unknown", "everyone",
        "ai", "ailevel", "computer",
    }
)  # fmt: skip

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


class AccountError(ServiceError):
    """A refused account operation."""


class InvalidName(AccountError):
    def __init__(self, message: str) -> None:
        super().__init__(Code.INVALID_NAME, message)


class WeakPassword(AccountError):
    def __init__(self, message: str) -> None:
        super().__init__(Code.WEAK_PASSWORD, message)


class NameTaken(AccountError):
    def __init__(self, message: str) -> None:
        super().__init__(Code.NAME_TAKEN, message)


class BadCredentials(AccountError):
    def __init__(self, message: str) -> None:
        super().__init__(Code.BAD_CREDENTIALS, message)


class Banned(AccountError):
    def __init__(self, reason: str | None) -> None:
        self.reason = reason
        message = f"this account is banned: {reason or 'no reason given'}"
        super().__init__(Code.BANNED, message)


class Throttled(AccountError):
    """Refused for now; `retry_after` seconds later it may succeed."""

    def __init__(self, code: Code, retry_after: int, message: str) -> None:
        super().__init__(code, f"{message}; retry in {retry_after} s", retry_after=retry_after)


class TooManyFailures(Throttled):
    def __init__(self, retry_after: int) -> None:
        super().__init__(Code.TOO_MANY_ATTEMPTS, retry_after, "too many failed log-ins")


class TooManyAccounts(Throttled):
    def __init__(self, retry_after: int, kind: str) -> None:
        message = f"too many new {kind} accounts from your address"
        super().__init__(Code.TOO_MANY_ACCOUNTS, retry_after, message)


@dataclass(frozen=True)
class Login:
    """A user together with a fresh bearer token (shown once, never stored in clear)."""

    user: User
    token: str
    expires_at: datetime


def hash_token(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def validate_name(name: str) -> str:
    if not NAME_RE.fullmatch(name):
        raise InvalidName("a name is 3 to 20 characters: letters, digits, '_' and '-'")
    if name.lower().startswith(GUEST_PREFIX):
        raise InvalidName(f"names starting with {GUEST_PREFIX!r} are kept for guests")
    return name


def reserved_form(name: str) -> str:
    """The name as compared with RESERVED_NAMES: lower case, no '_' or '-', no trailing digits."""
    return name.lower().replace("_", "").replace("-", "").rstrip("0123456789")


def check_not_reserved(name: str) -> None:
    if reserved_form(name) in RESERVED_NAMES:
        raise InvalidName(f"the name {name!r} is reserved")


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


async def note_address(db: AsyncSession, user_id: int, address: str | None, at: datetime) -> None:
    """A registered account used `address` (None or empty: a local caller, nothing noted): the
    fair-play rules (`app.ratings.fair_play`) read which accounts shared an address."""
    if address:
        await addresses_store.note(db, user_id, address, at)


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


async def _issue_token(session: AsyncSession, settings: Settings, user: User) -> Login:
    token = secrets.token_urlsafe(32)
    expires_at = utcnow() + timedelta(hours=settings.token_ttl_hours)
    stored.add_token(session, hash_token(token), user.id, expires_at)
    return Login(user=user, token=token, expires_at=expires_at)


def _accounts_bucket(settings: Settings, capacity: int) -> limits.Bucket:
    return limits.Bucket(capacity, settings.accounts_window_seconds)


async def register(
    session: AsyncSession,
    settings: Settings,
    name: str,
    password: str,
    address: str | None = None,
) -> Login:
    """Create a player account and log it in, in one transaction.

    At most `registrations_per_address` accounts per `accounts_window_seconds` from one client
    `address` (None: a local caller, not limited); refused names do not count.
    """
    validate_name(name)
    check_not_reserved(name)
    check_password(password, name)
    if await find_user(session, name) is not None:
        raise NameTaken(f"the name {name!r} is taken")
    await session.commit()  # hold no transaction (on SQLite: the write lock) while hashing
    if address is not None:
        bucket = _accounts_bucket(settings, settings.registrations_per_address)
        retry_after = await limits.take(session, "register", address, bucket)
        if retry_after is not None:
            raise TooManyAccounts(retry_after, "player")
    password_hash = await hash_password(password)
    try:
        user = await stored.add_user(
            session,
            name=name,
            password_hash=password_hash,
            kind=UserKind.REGISTERED,
            last_seen_at=utcnow(),
        )
        await note_address(session, user.id, address, utcnow())
        login = await _issue_token(session, settings, user)
        await session.commit()
    except IntegrityError as exc:  # the same name registered concurrently
        await session.rollback()
        if address is not None:
            bucket = _accounts_bucket(settings, settings.registrations_per_address)
            await limits.give_back(session, "register", address, bucket)
        raise NameTaken(f"the name {name!r} is taken") from exc
    LOGINS.labels("registered").inc()
    return login


async def start_guest(session: AsyncSession, settings: Settings, address: str) -> Login:
    """A passwordless account named like `guest-7f3a2c`, usable until its token expires.

    At most `guests_per_address` per `accounts_window_seconds` from one client `address`:
    each guest may host tables, so unlimited guests would let one person fill a room.
    """
    bucket = _accounts_bucket(settings, settings.guests_per_address)
    retry_after = await limits.take(session, "guest", address, bucket)
    if retry_after is not None:
        raise TooManyAccounts(retry_after, "guest")
    for _ in range(5):
        name = GUEST_PREFIX + secrets.token_hex(3)
        if await find_user(session, name) is not None:
            continue
        try:
            user = await stored.add_user(
                session, name=name, kind=UserKind.GUEST, last_seen_at=utcnow()
            )
        except IntegrityError:
            await session.rollback()
            continue
        login = await _issue_token(session, settings, user)
        await session.commit()
        LOGINS.labels("guest").inc()
        return login
    raise RuntimeError("could not draw a free guest name")


async def log_in(
    session: AsyncSession, settings: Settings, name: str, password: str, address: str
) -> Login:
    """Check the password and issue a token; refused to banned accounts.

    Limited per client `address` and name by `limits.reserve_login`, which counts the attempt
    as failed before the password is checked (so concurrent guesses cannot exceed the limits);
    a successful log-in takes that back.
    """
    retry_after = await limits.reserve_login(session, settings, name, address)
    if retry_after is not None:
        LOGINS.labels("throttled").inc()
        raise TooManyFailures(retry_after)
    user = await find_user(session, name)
    await session.commit()  # hold no transaction (on SQLite: the write lock) while hashing
    # An unknown name (or a guest's, which has no password) is refused without a password
    # check: names are public anyway (player pages list them), so answering faster reveals
    # nothing secret, and a flood of made-up names cannot keep the Argon2 workers busy.
    ok = False
    if user is not None and user.password_hash is not None:
        ok = await _verify(user.password_hash, password)
    if not ok or user is None:
        LOGINS.labels("bad_credentials").inc()
        raise BadCredentials("wrong name or password")
    if user.password_hash is not None and password_hasher.check_needs_rehash(user.password_hash):
        user.password_hash = await hash_password(password)
    await limits.login_succeeded(session, settings, name, address)
    if user.banned:
        await session.commit()
        LOGINS.labels("banned").inc()
        raise Banned(user.ban_reason)
    now = utcnow()
    user.last_seen_at = now
    if user.kind == UserKind.REGISTERED:
        await note_address(session, user.id, address, now)
    await stored.delete_expired_tokens(session, user.id, now)
    login = await _issue_token(session, settings, user)
    await session.commit()
    LOGINS.labels("ok").inc()
    return login


async def log_out(session: AsyncSession, token: str) -> None:
    """Revoke one token (the one the client logs out with)."""
    await stored.delete_token(session, hash_token(token))
    await session.commit()


async def user_for_token(session: AsyncSession, token: str) -> User | None:
    """The user a bearer token belongs to; None if unknown, expired or the user is banned."""
    if not token or len(token) > MAX_TOKEN_LENGTH:
        return None
    return await stored.user_by_token(session, hash_token(token), utcnow())


async def create_admin(session: AsyncSession, name: str, password: str | None) -> User:
    """Promote the registered account `name` to admin, or create it with `password`.

    Raises InvalidName for guests and imported names (they cannot log in), and WeakPassword
    when a new account needs a password and the one given is missing or weak.
    """
    user = await find_user(session, name)
    if user is not None:
        if user.kind != UserKind.REGISTERED:
            raise InvalidName(f"{user.name!r} is a {user.kind} account, which cannot log in")
        user.role = "admin"
        await session.commit()
        return user
    validate_name(name)
    if password is None:
        raise WeakPassword("a new account needs a password")
    check_password(password, name)
    password_hash = await hash_password(password)
    user = await stored.add_user(session, name=name, password_hash=password_hash, role="admin")
    await session.commit()
    return user
