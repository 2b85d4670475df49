"""Mail that cannot stop the site's mail, nor reach whom it should not (issue 45): an address is
one plain addr-spec or is refused; a mail that fails is tried a bounded number of times and
given up, visibly, without holding up the others or filling the log; a recipient gets a few
confirmation mails a day whoever asks; and opening a confirmation link confirms nothing until
its page's button is pressed.

In-process (`served_here`) with a real SMTP server (aiosmtpd) on loopback."""

from __future__ import annotations

import asyncio
import contextlib
import email
import email.policy
import logging
import re
from collections.abc import AsyncIterator, Awaitable, Callable
from email.message import EmailMessage
from typing import Any

import pytest
from aiosmtpd.controller import Controller
from prometheus_client import REGISTRY
from sqlalchemy import select

from app.db.models import OutboxMail
from app.live.liveplay import LivePlay
from app.notify import inbox as notices
from app.notify import mailer
from app.notify import store as stored
from tests.conftest import make_settings
from tests.support.admin_client import admin_client, ok
from tests.support.inproc import served_here
from tests.support.ports import free_port
from tests.support.server import Served
from tests.support.ws import member_token

SITE = "http://checkers.test"
WAIT_SECONDS = 10.0
ENCODED_WORD = "=?utf-8?q?v=40a.example=0D=0ABcc:=20z=40y.example?=@x.com"  # the report's


class Sink:
    """An SMTP server's takings: each mail's envelope recipients and message. It refuses, for
    now (451), the recipients in `refuse`."""

    def __init__(self, refuse: frozenset[str] = frozenset()) -> None:
        self.mails: list[tuple[list[str], EmailMessage]] = []
        self.refuse = refuse

    async def handle_RCPT(  # noqa: N802
        self, server: Any, session: Any, envelope: Any, address: str, options: list[str]
    ) -> str:
        if address in self.refuse:
            return "451 4.3.0 try again later"
        envelope.rcpt_tos.append(address)
        return "250 OK"

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:  # noqa: N802
        message = email.message_from_bytes(envelope.content, policy=email.policy.default)
        assert isinstance(message, EmailMessage)
        self.mails.append((list(envelope.rcpt_tos), message))
        return "250 OK"

    def recipients(self) -> list[str]:
        return [address for rcpt_tos, _ in self.mails for address in rcpt_tos]

    def to(self, address: str) -> list[EmailMessage]:
        return [message for rcpt_tos, message in self.mails if address in rcpt_tos]


@contextlib.asynccontextmanager
async def mailing(db_url: str, sink: Sink, **more: Any) -> AsyncIterator[Served]:
    """The app, in this process, mailing through an SMTP server that hands mail to `sink`."""
    port = free_port()
    controller = Controller(sink, hostname="127.0.0.1", port=port)
    controller.start()
    settings = make_settings(
        database_url=db_url,
        smtp_host="127.0.0.1",
        smtp_port=port,
        smtp_security="none",
        public_url=SITE,
        mail_retry_min_seconds=1.0,
        **more,
    )
    try:
        async with served_here(settings) as served:
            yield served
    finally:
        controller.stop()


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def live_of(server: Served) -> LivePlay:
    live: LivePlay = server.app.state.live
    return live


async def outbox(server: Served) -> list[OutboxMail]:
    async with live_of(server).db.session() as session:
        return list((await session.scalars(select(OutboxMail).order_by(OutboxMail.id))).all())


async def until(done: Callable[[], Awaitable[bool]], nudge: Callable[[], None]) -> None:
    """Wait until `done()` (or fail), calling `nudge` between looks."""
    give_up = asyncio.get_running_loop().time() + WAIT_SECONDS
    while not await done():
        assert asyncio.get_running_loop().time() < give_up
        nudge()
        await asyncio.sleep(0.05)


def given_up_total(kind: str) -> float:
    return REGISTRY.get_sample_value("checkers_mail_given_up_total", {"kind": kind}) or 0.0


def naming(records: list[logging.LogRecord], mail_id: int) -> list[logging.LogRecord]:
    """The log records that name the mail `mail_id`."""
    return [r for r in records if re.search(rf"\bmail {mail_id}\b", r.getMessage())]


async def queue_mails(server: Served, addresses: list[str], kind: str = "your_move") -> None:
    """Write mails to the outbox as the server once did, whatever their address (rows stored
    before addresses were checked), oldest first."""
    live = live_of(server)
    now = live.clock.now()
    async with live.db.session() as session:
        for n, address in enumerate(addresses):
            values = {
                "key": f"{kind}:old:{n}",
                "user_id": None,
                "to_address": address,
                "kind": kind,
                "subject": f"Mail {n}",
                "body": "Your move.\n",
                "unsubscribe": None,
                "created_at": now,
                "next_try_at": now,
            }
            assert await stored.queue(session, values)
        await session.commit()
    live.mail_wanted.set()


# --- 1. an address is one plain addr-spec ----------------------------------------------------

NOT_PLAIN = [
    ENCODED_WORD,  # decoded, a CR LF and a Bcc: header; building its mail raised ValueError
    "=?utf-8?b?dkB4LmNvbQ==?=@x.com",
    "v@x.com,root",  # mailed root too
    "v@x.com;w@y.com",
    "Vic <v@x.com>",
    '"v w"@x.com',
    "v@x.com(comment)",
    "v\x00@x.com",  # PostgreSQL refuses a NUL: it was a 500
    "v@x.com\r\nBcc: z@y.example",
    "v\u2028@x.com",
    "v@@x.com",
    "v@x..com",
]


async def test_an_address_that_is_not_one_plain_addr_spec_is_refused(db_url: str) -> None:
    sink = Sink()
    async with mailing(db_url, sink) as server:
        token = await member_token(server.url, "vic")
        async with server.http() as http:
            for address in NOT_PLAIN:
                answer = await http.put(
                    "/api/account/email", json={"address": address}, headers=bearer(token)
                )
                assert answer.status_code == 400, (address, answer.text)
                assert answer.json()["error"] == "bad_message"
                assert "not a plain e-mail address" in answer.json()["message"]
            shown = (await http.get("/api/account/email", headers=bearer(token))).json()
            assert (shown["address"], shown["pending"]) == (None, None)
            assert await outbox(server) == []
            # A plain address, however unusual its characters, is taken as it is.
            plain = "Vic.O'Brien+games@mail.example.org"
            answer = await http.put(
                "/api/account/email", json={"address": plain}, headers=bearer(token)
            )
            assert answer.status_code == 200, answer.text
            await until(lambda: _has(sink, plain), lambda: None)
            assert sink.recipients() == [plain]


async def _has(sink: Sink, address: str) -> bool:
    return bool(sink.to(address))


# --- 1. a failing mail is given up, and holds up no other --------------------------------------


async def test_mails_stored_with_bad_addresses_are_given_up_and_the_rest_is_sent(
    db_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    """Rows written before addresses were checked: more than two leases' worth, oldest first,
    that no mail can be built for (or that name other recipients), then a good one."""
    caplog.set_level(logging.INFO, logger="app.notify.mailer")
    sink = Sink()
    bad = [ENCODED_WORD] * (2 * mailer.BATCH + 1) + ["v@x.com,root"]
    before = given_up_total("your_move")
    async with mailing(db_url, sink) as server:
        await queue_mails(server, [*bad, "good@example.org"])

        async def good_sent() -> bool:
            return (await outbox(server))[-1].sent_at is not None

        await until(good_sent, live_of(server).mail_wanted.set)
        rows = await outbox(server)
        assert sink.recipients() == ["good@example.org"]  # root gets nothing
        for row in rows[:-1]:
            assert row.sent_at is None and row.failed_at is not None, row.id
            assert row.attempts == 1 and "plain" in (row.last_error or "")
        assert given_up_total("your_move") - before == len(bad)
        records = [r for r in caplog.records if r.name == "app.notify.mailer"]
        for row in rows[:-1]:  # each failure logged once, with its id, and no traceback
            assert [r.levelno for r in naming(records, row.id)] == [logging.ERROR]
        assert not [r for r in records if r.exc_info]
        # Given up: never leased again.
        live_of(server).clock.advance(3600)
        live_of(server).mail_wanted.set()
        await asyncio.sleep(0.3)
        assert [row.attempts for row in await outbox(server)] == [1] * len(rows)


async def test_a_mail_the_smtp_server_keeps_refusing_is_given_up_after_its_tries(
    db_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="app.notify.mailer")
    sink = Sink(refuse=frozenset({"busy@example.org"}))
    before = given_up_total("your_move")
    more = {"mail_max_attempts": 3, "mail_retry_max_seconds": 1.0}
    async with mailing(db_url, sink, **more) as server:
        clock = live_of(server).clock

        async def tried(times: int) -> bool:
            return any(row.attempts >= times for row in await outbox(server))

        def later() -> None:
            clock.advance(1.1)
            live_of(server).mail_wanted.set()

        await queue_mails(server, ["busy@example.org", "free@example.org"])
        await until(lambda: tried(3), later)
        for _ in range(5):  # time for more tries, had it not been given up
            later()
            await asyncio.sleep(0.1)
        busy, free = await outbox(server)
        assert (busy.attempts, busy.sent_at) == (3, None)
        assert busy.failed_at is not None and "451" in (busy.last_error or "")
        assert free.sent_at is not None and sink.recipients() == ["free@example.org"]
        assert given_up_total("your_move") - before == 1
        records = naming([r for r in caplog.records if r.name == "app.notify.mailer"], busy.id)
        assert [r.levelno for r in records] == [logging.WARNING] * 2 + [logging.ERROR]
        assert not [r for r in records if r.exc_info]
        # Operators see it: counted by the admin status.
        async with admin_client(server.app, server.url) as admin:
            status = ok(await admin.get("/api/admin/status"))
        assert (status["mail_waiting"], status["mail_given_up"]) == (0, 1)
        # Kept as long as sent mail, then pruned with it.
        clock.advance(8 * 86_400)
        await notices.prune(live_of(server))
        assert await outbox(server) == []


async def test_a_failing_worker_logs_its_traceback_once(
    db_url: str, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The worker's own failure (the database gone, say): one traceback, not one a poll."""
    caplog.set_level(logging.INFO, logger="app.notify.mailer")
    sink = Sink()
    async with mailing(db_url, sink) as server:

        async def broken(*args: Any) -> list[OutboxMail]:
            raise ConnectionError("the database is gone")

        monkeypatch.setattr(stored, "lease", broken)
        for _ in range(5):
            live_of(server).mail_wanted.set()
            await asyncio.sleep(0.1)
        monkeypatch.undo()
        await queue_mails(server, ["back@example.org"])
        await until(lambda: _has(sink, "back@example.org"), live_of(server).mail_wanted.set)
    records = [r for r in caplog.records if r.name == "app.notify.mailer"]
    assert len([r for r in records if r.exc_info]) == 1


# --- 2. mail to any address ------------------------------------------------------------------


async def test_confirmation_mails_to_one_recipient_are_limited_whoever_asks(db_url: str) -> None:
    """A few a day to one recipient, from any number of accounts, however the address is
    spelt (letter case, a `+tag`)."""
    async with mailing(db_url, Sink(), confirmations_per_recipient=3) as server:
        tokens = [await member_token(server.url, f"asker{n}") for n in range(5)]
        spellings = [
            "victim@example.org",
            "Victim@Example.ORG",
            "victim+checkers@example.org",
            "victim@example.org",
            "VICTIM+again@example.org",
        ]
        async with server.http() as http:
            answers = [
                await http.put(
                    "/api/account/email", json={"address": address}, headers=bearer(token)
                )
                for token, address in zip(tokens, spellings, strict=True)
            ]
            assert [a.status_code for a in answers] == [200, 200, 200, 429, 429]
            assert answers[3].json()["error"] == "rate_limited"
            assert int(answers[3].headers["Retry-After"]) > 3600  # one more in 8 hours
            shown = (await http.get("/api/account/email", headers=bearer(tokens[3]))).json()
            assert shown["pending"] is None
            # Another recipient is not held up by this one.
            other = await http.put(
                "/api/account/email",
                json={"address": "other@example.org"},
                headers=bearer(tokens[3]),
            )
            assert other.status_code == 200, other.text
        confirmations = [m.to_address for m in await outbox(server) if m.kind == "confirm"]
        assert confirmations == [*spellings[:3], "other@example.org"]


async def test_opening_a_confirmation_link_confirms_nothing_until_its_button_is_pressed(
    db_url: str,
) -> None:
    """A mail scanner that opens the link confirms nothing: the page asks for a click."""
    sink = Sink()
    async with mailing(db_url, sink) as server:
        token = await member_token(server.url, "vera")
        async with server.http() as http:
            given = await http.put(
                "/api/account/email", json={"address": "vera@example.org"}, headers=bearer(token)
            )
            assert given.status_code == 200, given.text
            await until(lambda: _has(sink, "vera@example.org"), lambda: None)
            body = sink.to("vera@example.org")[0].get_content()
            found = re.search(re.escape(SITE) + r"(/api/account/email/confirm\?token=\S+)", body)
            assert found is not None, body
            link = found.group(1)

            async def shown() -> tuple[str | None, str | None]:
                view = (await http.get("/api/account/email", headers=bearer(token))).json()
                return view["address"], view["pending"]

            for _ in range(2):  # a scanner's prefetch, and another
                page = await http.get(link)
                assert page.status_code == 200
                assert '<form method="post">' in page.text and "<button" in page.text
                assert "vera@example.org" in page.text
                assert await shown() == (None, "vera@example.org")
            done = await http.post(link)
            assert done.status_code == 200 and "Address confirmed" in done.text
            assert await shown() == ("vera@example.org", None)
            assert (await http.post(link)).status_code == 404  # good once
            assert (await http.get(link)).status_code == 404
