"""The e-mail worker: each server process sends the outbox's due mail through the SMTP server.

It leases a few due mails at a time (`app.notify.store.lease`, committed before anything
is sent, so two processes never send one mail at once), sends each, and marks it sent in a
transaction of its own as soon as the SMTP server has taken it. A mail the server refuses or
cannot take (down, unreachable, a temporary error) is tried again later, the waits doubling
from `mail_retry_min_seconds` to `mail_retry_max_seconds`: a dead SMTP server delays mail and
loses none. A process that crashes while it holds leases leaves them to run out
(`MAIL_LEASE_SECONDS`); then another process, or this one started again, sends those mails.

Nothing is sent twice across a crash but in one case no outbox can close: a crash after the
SMTP server took a mail and before its `sent_at` was committed (a window of one local
transaction) sends it again. Every mail has a `Message-ID` made from its outbox row, the same
at each try, by which mail systems recognise a copy.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from datetime import timedelta
from email.message import EmailMessage
from email.utils import formatdate
from urllib.parse import urlsplit

import aiosmtplib

from app.config import Settings
from app.db.models import OutboxMail
from app.live.liveplay import LivePlay
from app.notify import store as stored

logger = logging.getLogger(__name__)

BATCH = 10
POLL_SECONDS = 5.0
SMTP_TIMEOUT_SECONDS = 30.0


def message_of(settings: Settings, mail: OutboxMail) -> EmailMessage:
    """The mail as sent: the same headers at every try."""
    message = EmailMessage()
    message["From"] = settings.mail_from
    message["To"] = mail.to_address
    message["Subject"] = mail.subject
    message["Date"] = formatdate(localtime=False)
    host = urlsplit(settings.site_url).hostname or "localhost"
    message["Message-ID"] = f"<outbox-{mail.id}.{mail.kind}@{host}>"
    if mail.unsubscribe is not None:
        message["List-Unsubscribe"] = f"<{mail.unsubscribe}>"
        message["List-Unsubscribe-Post"] = "List-Unsubscribe=One-Click"
    message.set_content(mail.body)
    return message


async def deliver(settings: Settings, message: EmailMessage) -> None:
    """Hand one mail to the SMTP server; raises if it did not take it."""
    assert settings.smtp_host is not None
    password = settings.smtp_password.get_secret_value() if settings.smtp_password else None
    await aiosmtplib.send(
        message,
        hostname=settings.smtp_host,
        port=settings.smtp_port,
        username=settings.smtp_username,
        password=password,
        use_tls=settings.smtp_security == "tls",
        start_tls=settings.smtp_security == "starttls",
        timeout=SMTP_TIMEOUT_SECONDS,
    )


def retry_delay(settings: Settings, attempts: int) -> float:
    """The wait before the next try of a mail tried `attempts` times (once, at least)."""
    first = settings.mail_retry_min_seconds
    return float(min(first * 2 ** max(0, attempts - 1), settings.mail_retry_max_seconds))


async def send_due(live: LivePlay) -> int:
    """Send the due mails of one lease; how many were taken by the SMTP server."""
    settings = live.settings
    now = live.clock.now()
    async with live.db.session() as session:
        until = now + timedelta(seconds=settings.mail_lease_seconds)
        mails = await stored.lease(session, now, until, BATCH)
        await session.commit()
    sent = 0
    for mail in mails:
        try:
            await deliver(settings, message_of(settings, mail))
        except (aiosmtplib.SMTPException, OSError, TimeoutError) as exc:
            delay = retry_delay(settings, mail.attempts + 1)
            logger.warning("mail %d not sent (%s); next try in %.0f s", mail.id, exc, delay)
            async with live.db.session() as session:
                next_try = live.clock.now() + timedelta(seconds=delay)
                await stored.failed(session, mail.id, next_try, f"{type(exc).__name__}: {exc}")
                await session.commit()
            continue
        async with live.db.session() as session:
            await stored.sent(session, mail.id, live.clock.now())
            await session.commit()
        sent += 1
    return sent if mails else -1


async def run(live: LivePlay) -> None:
    """Send due mail whenever some is written here (`live.mail_wanted`) and every
    `POLL_SECONDS` (mail written by other processes, tries come due), whatever fails."""
    while True:
        try:
            if await send_due(live) >= 0:
                continue  # a lease was taken: there may be more
        except asyncio.CancelledError:
            raise
        except Exception:
            logger.warning("the mail worker failed; retrying", exc_info=True)
        live.mail_wanted.clear()
        with contextlib.suppress(TimeoutError):
            await live.clock.wait_for(live.mail_wanted.wait(), POLL_SECONDS)
