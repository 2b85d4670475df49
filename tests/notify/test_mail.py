"""E-mail, sent to a real SMTP server (aiosmtpd) on loopback: an address is confirmed by its
link before anything else goes to it; a correspondence move and a move's time alarm are
mailed with the game's link and a one-click unsubscribe that is honoured; a dead SMTP server
delays mail and loses none; a server process killed while it sends (or before) sends each mail
once when it is back."""

from __future__ import annotations

import asyncio
import contextlib
import email
import email.policy
import re
from collections.abc import AsyncIterator, Iterator
from email.message import EmailMessage
from pathlib import Path
from typing import Any

import pytest
from aiosmtpd.controller import Controller
from sqlalchemy import select

from app.config import Settings
from app.correspondence.service import SWEEP_SECONDS
from app.db.models import OutboxMail
from tests.conftest import make_settings
from tests.support.inproc import served_here
from tests.support.server import Served, ServerProcess, free_port, http_client
from tests.support.ws import connect, member_token, start_game

DAY = 86_400
SITE = "http://checkers.test"
WAIT_SECONDS = 15.0


class Inbox:
    """What the SMTP server took: each message parsed, in order."""

    def __init__(self) -> None:
        self.messages: list[EmailMessage] = []

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:  # noqa: N802
        message = email.message_from_bytes(envelope.content, policy=email.policy.default)
        assert isinstance(message, EmailMessage)
        self.messages.append(message)
        return "250 OK"

    def to(self, address: str) -> list[EmailMessage]:
        return [m for m in self.messages if m["To"] == address]

    async def wait_for(self, count: int, address: str) -> list[EmailMessage]:
        """Once `address` has `count` messages (or fail)."""
        give_up = asyncio.get_running_loop().time() + WAIT_SECONDS
        while len(self.to(address)) < count:
            assert asyncio.get_running_loop().time() < give_up, self.to(address)
            await asyncio.sleep(0.05)
        return self.to(address)


@contextlib.contextmanager
def smtp_server(inbox: Inbox, port: int | None = None) -> Iterator[int]:
    port = port or free_port()
    controller = Controller(inbox, hostname="127.0.0.1", port=port)
    controller.start()
    try:
        yield port
    finally:
        controller.stop()


def mail_settings(db_url: str, port: int, **more: Any) -> Settings:
    return make_settings(
        database_url=db_url,
        smtp_host="127.0.0.1",
        smtp_port=port,
        smtp_security="none",
        public_url=SITE,
        mail_retry_min_seconds=1.0,
        **more,
    )


@contextlib.asynccontextmanager
async def mailing(db_url: str) -> AsyncIterator[tuple[Served, Inbox, int]]:
    inbox = Inbox()
    with smtp_server(inbox) as port:
        async with served_here(mail_settings(db_url, port)) as server:
            yield server, inbox, port


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def link(message: EmailMessage, path: str) -> str:
    body = message.get_content()
    found = re.search(re.escape(SITE) + re.escape(path) + r"\S+", body)
    assert found is not None, body
    return found.group(0)


async def confirmed(server: Served, inbox: Inbox, token: str, address: str) -> None:
    """`confirmed_at` the server's address."""
    await confirmed_at(server.url, inbox, token, address)


async def test_a_move_is_mailed_to_a_confirmed_address_with_a_one_click_unsubscribe(
    db_url: str,
) -> None:
    async with mailing(db_url) as (server, inbox, _):
        tokens = [await member_token(server.url, name) for name in ("mara", "milo")]
        async with connect(server.url, tokens[0]) as mara, connect(server.url, tokens[1]) as milo:
            match = await start_game(mara, milo, clock={"days": 3})
            await match.play("11-15")  # milo has no address yet: nothing is mailed
            async with server.http() as http:
                asked = await http.put(
                    "/api/account/email",
                    json={"address": "milo@example.org"},
                    headers=bearer(tokens[1]),
                )
            confirmation = (await inbox.wait_for(1, "milo@example.org"))[0]
            await match.play("22-18")
            await match.play("15x22")  # not confirmed yet: still nothing but the confirmation
            assert asked.status_code == 200
            page = await server.http().post(
                link(confirmation, "/api/account/email/confirm?token=").removeprefix(SITE)
            )
            assert page.status_code == 200
            await match.play("25x18")
            await match.play("12-16")
            mails = await inbox.wait_for(2, "milo@example.org")
            mailed = mails[1]
            assert mailed["Subject"] == "Your move against mara (correspondence, table 1)."
            assert f"{SITE}/#/table/{match.table['id']}" in mailed.get_content()
            assert mailed["Message-ID"].startswith("<outbox-")
            unsubscribe = mailed["List-Unsubscribe"].strip("<>")
            assert mailed["List-Unsubscribe-Post"] == "List-Unsubscribe=One-Click"
            assert unsubscribe in mailed.get_content()
            assert "kind=your_move" in unsubscribe
            async with server.http() as http:
                shown = await http.get(unsubscribe.removeprefix(SITE))
                assert shown.status_code == 200 and "<form" in shown.text  # the GET does nothing
                forged = await http.post(
                    re.sub("sig=[0-9a-f]+", "sig=00", unsubscribe.removeprefix(SITE))
                )
                assert forged.status_code == 404
                done = await http.post(
                    unsubscribe.removeprefix(SITE), data={"List-Unsubscribe": "One-Click"}
                )
                assert done.status_code == 200 and "Unsubscribed" in done.text
                email_view = (
                    await http.get("/api/account/email", headers=bearer(tokens[1]))
                ).json()
                assert email_view["off"] == ["your_move"]
            await match.play("24-20", "8-11")
            await asyncio.sleep(1.0)
            assert len(inbox.to("milo@example.org")) == 2  # unsubscribed: no third
            async with server.http() as http:
                notices = (await http.get("/api/notifications", headers=bearer(tokens[1]))).json()
            assert sum(n["kind"] == "your_move" for n in notices["data"]) == 4  # still in the inbox
            assert len(inbox.to("mara@example.org")) == 0


async def test_the_time_alarm_is_mailed_once(db_url: str) -> None:
    async with mailing(db_url) as (server, inbox, _):
        tokens = [await member_token(server.url, name) for name in ("nia", "noe")]
        await confirmed(server, inbox, tokens[0], "nia@example.org")
        async with connect(server.url, tokens[0]) as nia, connect(server.url, tokens[1]) as noe:
            match = await start_game(nia, noe, clock={"days": 1})
            await match.play("11-15", "22-18")
            mails = await inbox.wait_for(2, "nia@example.org")  # the confirmation, your move
            server.clock.advance(0.85 * DAY)
            while len(inbox.to("nia@example.org")) < 3:  # the sweep runs every 30 s
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(inbox.wait_for(3, "nia@example.org"), 0.3)
                server.clock.advance(SWEEP_SECONDS + 1)
            mails = inbox.to("nia@example.org")
            assert mails[2]["Subject"] == "Time is running out for your move against noe."
            server.clock.advance(0.1 * DAY)
            await asyncio.sleep(1.0)
            assert len(inbox.to("nia@example.org")) == 3


async def outbox(server: Served) -> list[OutboxMail]:
    async with server.app.state.live.db.session() as session:
        return list((await session.scalars(select(OutboxMail).order_by(OutboxMail.id))).all())


async def test_a_dead_smtp_server_delays_mail_and_loses_none(db_url: str) -> None:
    inbox = Inbox()
    port = free_port()
    settings = mail_settings(db_url, port, mail_retry_max_seconds=2.0)
    async with served_here(settings) as server:
        tokens = [await member_token(server.url, name) for name in ("oda", "oli")]
        with smtp_server(inbox, port):
            await confirmed(server, inbox, tokens[1], "oli@example.org")
        # The SMTP server is down: the move's mail waits, tried again and again.
        async with connect(server.url, tokens[0]) as oda, connect(server.url, tokens[1]) as oli:
            match = await start_game(oda, oli, clock={"days": 3})
            await match.play("11-15")
            give_up = asyncio.get_running_loop().time() + WAIT_SECONDS
            while not [
                m for m in await outbox(server) if m.kind == "your_move" and m.attempts >= 2
            ]:
                assert asyncio.get_running_loop().time() < give_up
                await asyncio.sleep(0.1)
            waiting = [m for m in await outbox(server) if m.kind == "your_move"]
            assert waiting[0].sent_at is None and "Error" in (waiting[0].last_error or "")
            with smtp_server(inbox, port):  # back: the next try sends it
                mails = await inbox.wait_for(2, "oli@example.org")
                await asyncio.sleep(2.5)  # a try more, had it not been marked sent
        assert [m["Subject"] for m in inbox.to("oli@example.org")] == [
            "Confirm your address for checkers",
            "Your move against oda (correspondence, table 1).",
        ]
        assert mails[1]["Message-ID"] == f"<outbox-{waiting[0].id}.your_move@checkers.test>"
        assert all(m.sent_at is not None for m in await outbox(server))


async def stalled_smtp() -> tuple[asyncio.Server, int]:
    """An SMTP server that takes connections and never answers: a mail being sent to it
    stays in flight (leased) until the sender gives up."""

    async def hold(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        with contextlib.suppress(Exception):
            await reader.read()
        writer.close()

    port = free_port()
    return await asyncio.start_server(hold, "127.0.0.1", port), port


def mail_env(port: int) -> dict[str, str]:
    return {
        "SMTP_HOST": "127.0.0.1",
        "SMTP_PORT": str(port),
        "SMTP_SECURITY": "none",
        "PUBLIC_URL": SITE,
        "MAIL_LEASE_SECONDS": "1",
        "MAIL_RETRY_MIN_SECONDS": "1",
        "MAIL_RETRY_MAX_SECONDS": "2",
    }


@pytest.mark.outage
@pytest.mark.server
async def test_a_server_killed_while_it_sends_sends_each_mail_once(
    db_url: str, tmp_path: Path
) -> None:
    """A process killed (SIGKILL) while its worker holds mail in flight: started again, it
    sends each mail once the lease has run out, and nothing twice. Real processes, real
    time."""
    inbox = Inbox()
    stalled, stalled_port = await stalled_smtp()
    process = ServerProcess(make_settings(database_url=db_url), tmp_path)
    with smtp_server(inbox) as good_port:
        process.env |= mail_env(good_port)
        await process.start()
        try:
            names = ("pam", "pat", "pip")
            tokens = [await member_token(process.url, name) for name in names]
            for token, name in zip(tokens, names, strict=True):
                await confirmed_at(process.url, inbox, token, f"{name}@example.org")
            await process.stop()
            # Now its mail goes to the stalled server: moves in two games, then the kill.
            process.env |= mail_env(stalled_port)
            await process.start()
            async with (
                connect(process.url, tokens[0]) as pam,
                connect(process.url, tokens[1]) as pat,
                connect(process.url, tokens[2]) as pip,
            ):
                first = await start_game(pam, pat, clock={"days": 3})
                second = await start_game(pam, pip, clock={"days": 3})
                await first.play("11-15")
                await second.play("11-15")
                await asyncio.sleep(1.0)  # the worker leases both and waits on the server
                await process.kill()
            assert len(inbox.messages) == 3  # the confirmations only
            process.env |= mail_env(good_port)
            await process.start()
            await inbox.wait_for(2, "pat@example.org")
            await inbox.wait_for(2, "pip@example.org")
            await asyncio.sleep(3.0)  # a lease and a retry more: nothing comes twice
        finally:
            await process.stop()
            stalled.close()
    subjects = sorted(m["Subject"] for m in inbox.messages if m["Subject"].startswith("Your"))
    assert subjects == [
        "Your move against pam (correspondence, table 1).",
        "Your move against pam (correspondence, table 2).",
    ]
    ids = [m["Message-ID"] for m in inbox.messages]
    assert len(ids) == len(set(ids)) == 5


async def confirmed_at(url: str, inbox: Inbox, token: str, address: str) -> None:
    """Give `address`, open the link mailed to it and press its page's button (once: a second
    time it is refused)."""
    async with http_client(url) as http:
        given = await http.put(
            "/api/account/email", json={"address": address}, headers=bearer(token)
        )
        assert given.status_code == 200, given.text
        assert given.json()["pending"] == address and given.json()["address"] is None
        confirmation = (await inbox.wait_for(1, address))[-1]
        assert confirmation["Subject"] == "Confirm your address for checkers"
        confirm = link(confirmation, "/api/account/email/confirm?token=").removeprefix(SITE)
        page = await http.get(confirm)
        assert page.status_code == 200 and '<form method="post">' in page.text
        page = await http.post(confirm)
        assert page.status_code == 200 and "Address confirmed" in page.text
        assert (await http.post(confirm)).status_code == 404  # a link works once
        shown = (await http.get("/api/account/email", headers=bearer(token))).json()
        assert (shown["address"], shown["pending"], shown["off"]) == (address, None, [])
