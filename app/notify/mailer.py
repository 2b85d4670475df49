"""The e-mail worker: each server process sends the outbox's due mail through the SMTP server.

It leases a few due mails at a time (`app.notify.store.lease`, committed before anything
is sent, so two processes never send one mail at once), sends each, and marks it sent in a
transaction of its own as soon as the SMTP server has taken it. A mail the server refuses or
cannot take (down, unreachable, a temporary error) is tried again later, the waits doubling
from `mail_retry_min_seconds` to `mail_retry_max_seconds`: a dead SMTP server delays mail and,
for `mail_max_attempts` tries, loses none. A process that crashes while it holds leases leaves
them to run out (`MAIL_LEASE_SECONDS`); then another process, or this one started again, sends
those mails.

Whatever goes wrong with one mail is that mail's alone: it is marked and the others are sent.
A mail that cannot be built (an address that is not plain, which no try will change) is given
up at once, any other after its last try: `failed_at` and `last_error` say so, counted in
`checkers_mail_given_up_total` and by the admin status. Each try is logged in one line with the
mail's id; a traceback only for a failure of an unexpected kind, on its first try, and for the
worker's own failure, once until it works again.

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
from app.metrics import MAIL_GIVEN_UP
from app.notify import store as stored
from app.notify.mail import plain_address

logger = logging.getLogger(__name__)

BATCH = 10
POLL_SECONDS = 5.0
SMTP_TIMEOUT_SECONDS = 30.0
# What a try may end with when the SMTP server is down, slow or refuses: no traceback.
EXPECTED = (aiosmtplib.SMTPException, OSError, TimeoutError)


class Unsendable(ValueError):
    """A mail no try can send: its address is not a plain one (stored before addresses were
    checked as they are now)."""


def message_of(settings: Settings, mail: OutboxMail) -> EmailMessage:
    """The mail as sent: the same headers at every try."""
    if not plain_address(mail.to_address):
        raise Unsendable("the address is not one plain addr-spec")
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
            message = message_of(settings, mail)
        except Exception as exc:  # the same at every try
            await _give_up(live, mail, exc, exc_info=not isinstance(exc, Unsendable))
            continue
        try:
            await deliver(settings, message)
        except Exception as exc:
            await _not_sent(live, mail, exc)
            continue
        async with live.db.session() as session:
            await stored.sent(session, mail.id, live.clock.now())
            await session.commit()
        sent += 1
    return sent if mails else -1


async def _not_sent(live: LivePlay, mail: OutboxMail, exc: Exception) -> None:
    """Try the mail again later, or, after its last try, give it up."""
    settings = live.settings
    tries = mail.attempts + 1
    if tries >= settings.mail_max_attempts:
        await _give_up(live, mail, exc, exc_info=False)
        return
    delay = retry_delay(settings, tries)
    logger.warning(
        "mail %d not sent, try %d of %d (%s: %s); next try in %.0f s",
        mail.id,
        tries,
        settings.mail_max_attempts,
        type(exc).__name__,
        exc,
        delay,
        exc_info=tries == 1 and not isinstance(exc, EXPECTED),
    )
    async with live.db.session() as session:
        next_try = live.clock.now() + timedelta(seconds=delay)
        await stored.failed(session, mail.id, next_try, f"{type(exc).__name__}: {exc}")
        await session.commit()


async def _give_up(live: LivePlay, mail: OutboxMail, exc: Exception, *, exc_info: bool) -> None:
    """Try the mail no more (logged once, with its id; counted)."""
    error = f"{type(exc).__name__}: {exc}"
    tries = mail.attempts + 1
    logger.error(
        "mail %d (%s) given up at try %d: %s", mail.id, mail.kind, tries, error, exc_info=exc_info
    )
    async with live.db.session() as session:
        await stored.give_up(session, mail.id, live.clock.now(), error)
        await session.commit()
    MAIL_GIVEN_UP.labels(mail.kind).inc()


async def backlog(live: LivePlay) -> tuple[int, int]:
    """How many mails wait to be sent, and how many were given up (kept as long as sent mail)."""
    async with live.db.session() as session:
        return await stored.backlog(session)


async def run(live: LivePlay) -> None:
    """Send due mail whenever some is written here (`live.mail_wanted`) and every
    `POLL_SECONDS` (mail written by other processes, tries come due), whatever fails."""
    failing = False
    while True:
        try:
            taken = await send_due(live)
        except asyncio.CancelledError:
            raise
        except Exception:
            if not failing:  # once until it works again, not once a poll
                logger.warning("the mail worker failed; retrying", exc_info=True)
            failing = True
        else:
            if failing:
                logger.warning("the mail worker works again")
            failing = False
            if taken >= 0:
                continue  # a lease was taken: there may be more
        live.mail_wanted.clear()
        with contextlib.suppress(TimeoutError):
            await live.clock.wait_for(live.mail_wanted.wait(), POLL_SECONDS)
