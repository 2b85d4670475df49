"""An account's e-mail: its address, confirmed by a link before anything else is sent to it;
the kinds of notice it wants no mail of; and the one-click unsubscribe of a kind from a mail.

An address given must be a plain one (`mail.plain_address`). It waits (`email_pending`) with
the SHA-256 of a random token; the mail sent to it links to a page
(`/api/account/email/confirm?token=…`) whose button, posted, makes it the account's address and
gives the account a new key for its unsubscribe links (`email_key`: links mailed to an earlier
address stop working). Opening the link confirms nothing, so a mail scanner that opens it does
not give the address to whoever asked. Confirmation mails are limited per account
(`CONFIRMATIONS`) and per recipient, whoever asks (`confirmations_per_recipient` a day), so
that no one can mail an address over and over from accounts of their own.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from typing import Any

from app.accounts import limits
from app.db.models import User
from app.errors import Code
from app.live.liveplay import LivePlay, PlayError
from app.notify import mail
from app.notify import store as stored

# Confirmation mails an account may ask for: 5 at once, then one every 12 minutes.
CONFIRMATIONS = limits.Bucket(capacity=5, period=3600)
DAY = 86_400


def _hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def recipient_key(address: str) -> str:
    """The counter of confirmation mails to `address`: one per mailbox, letter case and a
    `+tag` ignored; hashed, so that the counters name no address."""
    local, _, domain = address.lower().rpartition("@")
    return _hash(f"{local.split('+', 1)[0]}@{domain}")


def view(live: LivePlay, user: User) -> dict[str, Any]:
    return {
        "enabled": live.settings.mail_enabled,
        "address": user.email,
        "pending": user.email_pending,
        "off": [kind for kind in user.email_off or [] if kind in mail.MAIL_KINDS],
        "kinds": [{"kind": kind, "name": mail.MAIL_KIND_NAMES[kind]} for kind in mail.MAIL_KINDS],
    }


async def show(live: LivePlay, user_id: int) -> dict[str, Any]:
    async with live.db.session() as session:
        user = await session.get(User, user_id)
        assert user is not None
        return view(live, user)


async def set_address(live: LivePlay, user_id: int, address: str) -> dict[str, Any]:
    """Give the account an address to confirm: a mail with the link goes to it."""
    address = address.strip()
    if not mail.plain_address(address):
        raise PlayError(
            Code.BAD_MESSAGE,
            f"{address[:80]!r} is not a plain e-mail address: write it as name@example.org, "
            "alone (no name, quotes, comma or spaces)",
        )
    if not live.settings.mail_enabled:
        raise PlayError(Code.CONFLICT, "this server sends no mail (SMTP_HOST is not set)")
    token = secrets.token_urlsafe(32)
    per_recipient = limits.Bucket(live.settings.confirmations_per_recipient, DAY)
    async with live.db.session() as session:
        user = await session.get(User, user_id, with_for_update=True)
        assert user is not None
        counted = [
            (limits.key("email_confirm", str(user_id)), CONFIRMATIONS),
            (limits.key("email_confirm_to", recipient_key(address)), per_recipient),
        ]
        wait = await limits.take_all(session, counted, live.clock.now())
        if wait is not None:
            raise PlayError(
                Code.RATE_LIMITED,
                f"too many confirmation mails from this account or to this address: try again "
                f"in {wait} s",
                retry_after=wait,
            )
        user.email_pending, user.email_token_hash = address, _hash(token)
        await mail.queue_confirmation(live, session, user.id, user.name, address, token)
        shown = view(live, user)
        await session.commit()
    live.mail_wanted.set()
    return shown


async def waiting(live: LivePlay, token: str) -> tuple[str, str] | None:
    """The account's name and the address that wait with `token`, changing nothing (the
    confirmation link's page); None for a token unknown (or used)."""
    async with live.db.session() as session:
        user = await stored.by_email_token(session, _hash(token), lock=False)
        if user is None or user.email_pending is None:
            return None
        return user.name, user.email_pending


async def confirm(live: LivePlay, token: str) -> bool:
    """Confirm the address waiting with `token` (the button of the link's page); False for a
    token unknown (or used)."""
    async with live.db.session() as session:
        user = await stored.by_email_token(session, _hash(token))
        if user is None or user.email_pending is None:
            return False
        user.email, user.email_pending, user.email_token_hash = user.email_pending, None, None
        user.email_key = secrets.token_hex(32)
        await session.commit()
    return True


async def remove(live: LivePlay, user_id: int) -> dict[str, Any]:
    """Forget the account's address (and one waiting): no mail is sent to it any more."""
    async with live.db.session() as session:
        await stored.forget_email(session, user_id)
        await session.commit()
    return await show(live, user_id)


async def set_off(live: LivePlay, user_id: int, off: list[str]) -> dict[str, Any]:
    """The kinds of notice the account wants no mail of (the others it gets)."""
    unknown = sorted(set(off) - set(mail.MAIL_KINDS))
    if unknown:
        raise PlayError(
            Code.BAD_MESSAGE,
            f"unknown kinds {unknown}; the kinds mailed: {', '.join(mail.MAIL_KINDS)}",
        )
    async with live.db.session() as session:
        await stored.set_email_off(session, user_id, sorted(set(off)))
        await session.commit()
    return await show(live, user_id)


async def unsubscribe(live: LivePlay, user_id: int, kind: str, sig: str) -> bool:
    """A mail's one-click unsubscribe: no more mail of `kind`; False if the link is not one the
    server signed for the account's present address."""
    if kind not in mail.MAIL_KINDS:
        return False
    async with live.db.session() as session:
        user = await session.get(User, user_id, with_for_update=True)
        if user is None or user.email_key is None:
            return False
        if not hmac.compare_digest(mail.signature(user.email_key, user_id, kind), sig):
            return False
        user.email_off = sorted({*(user.email_off or []), kind})
        await session.commit()
    return True
