"""The mail the server sends, as written to the outbox (`app.notify.store`): a correspondence
move made (`your_move`) and a move's time 80 % used (`time_alarm`), to the confirmed address of
a player who has not turned that kind off; and the link that confirms an address.

Each mail has a `key` naming what it tells (`your_move:GAME:PLY`), unique in the outbox: a mail
is written at most once, whoever writes it and however often. Each notice mail carries a
one-click unsubscribe link for its kind (RFC 8058's `List-Unsubscribe` and
`List-Unsubscribe-Post` headers, and the same link in the text), signed with the account's own
key (`users.email_key`), which changes when the address does.

Mail goes only to a plain address (`plain_address`): one addr-spec that a mail's header reads
back as itself and nothing more.
"""

from __future__ import annotations

import hashlib
import hmac
import re
from email.headerregistry import AddressHeader, HeaderRegistry
from typing import Any
from urllib.parse import urlencode

from sqlalchemy.ext.asyncio import AsyncSession

from app.live.liveplay import LivePlay
from app.notify import store as stored

MAIL_KINDS = ("your_move", "time_alarm")
MAIL_KIND_NAMES = {
    "your_move": "your move in a correspondence game",
    "time_alarm": "time running out in a correspondence game",
}
# An addr-spec of ASCII dot-atoms (RFC 5322) at a host name: `name.tag+x@mail.example.org`.
_ATOM = r"[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+"
_LABEL = r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?"
PLAIN_ADDRESS = re.compile(rf"{_ATOM}(?:\.{_ATOM})*@{_LABEL}(?:\.{_LABEL})+")
MAX_ADDRESS = 254
MAX_LOCAL_PART = 64


def plain_address(text: str) -> bool:
    """Whether mail may go to `text`: one plain addr-spec, which the header parser of Python's
    mail library reads back as itself. No display name, quotes, comment, list, encoded word
    (`=?…?=`), space or control character: once the mail is built, each can turn one address
    into other recipients or header lines, or make the mail impossible to build."""
    if len(text) > MAX_ADDRESS or "=?" in text or not PLAIN_ADDRESS.fullmatch(text):
        return False
    if len(text.rpartition("@")[0]) > MAX_LOCAL_PART:
        return False
    header = HeaderRegistry()("To", text)
    assert isinstance(header, AddressHeader)
    read = [(address.display_name, address.addr_spec) for address in header.addresses]
    return not header.defects and read == [("", text)]


def signature(key: str, user_id: int, kind: str) -> str:
    """The signature of an unsubscribe link (hex HMAC-SHA256 with the account's key)."""
    message = f"unsubscribe:{user_id}:{kind}".encode()
    return hmac.new(key.encode(), message, hashlib.sha256).hexdigest()[:32]


def unsubscribe_url(site: str, key: str, user_id: int, kind: str) -> str:
    query = urlencode({"user": user_id, "kind": kind, "sig": signature(key, user_id, kind)})
    return f"{site}/api/email/unsubscribe?{query}"


def _body(site: str, kind: str, data: dict[str, Any], line: str, unsubscribe: str) -> str:
    table = data.get("table")
    link = f"{site}/#/table/{table}" if table is not None else site
    return (
        f"{line}\n\n"
        f"Play your move: {link}\n\n"
        f"--\nYou get this mail because you asked for mail about {MAIL_KIND_NAMES[kind]}.\n"
        f"Stop these mails with one click: {unsubscribe}\n"
        f"Choose which mails you get: {site}/#/inbox\n"
    )


async def queue_notice(
    live: LivePlay,
    session: AsyncSession,
    user_id: int,
    kind: str,
    data: dict[str, Any],
    line: str,
) -> bool:
    """Write the mail of a notice to the outbox, in the caller's transaction, if its owner has
    a confirmed address and wants that kind; False if nothing was written (no address, the
    kind turned off, or that mail written already)."""
    address, off, key = await stored.recipient(session, user_id)
    if address is None or key is None or kind in off:
        return False
    site = live.settings.site_url
    unsubscribe = unsubscribe_url(site, key, user_id, kind)
    now = live.clock.now()
    return await stored.queue(
        session,
        {
            "key": f"{kind}:{data.get('game')}:{data.get('ply')}",
            "user_id": user_id,
            "to_address": address,
            "kind": kind,
            "subject": line[:200],
            "body": _body(site, kind, data, line, unsubscribe),
            "unsubscribe": unsubscribe,
            "created_at": now,
            "next_try_at": now,
        },
    )


async def queue_confirmation(
    live: LivePlay, session: AsyncSession, user_id: int, name: str, address: str, token: str
) -> None:
    """The mail that confirms `address` for `name`'s account (its link holds `token`)."""
    site = live.settings.site_url
    link = f"{site}/api/account/email/confirm?{urlencode({'token': token})}"
    now = live.clock.now()
    await stored.queue(
        session,
        {
            "key": f"confirm:{hashlib.sha256(token.encode()).hexdigest()[:40]}",
            "user_id": user_id,
            "to_address": address,
            "kind": "confirm",
            "subject": "Confirm your address for checkers",
            "body": (
                f"Hello {name},\n\n"
                f"Confirm that this address is yours, to get the mail you choose about your "
                f"games: open {link} and press its button.\n\n"
                f"If you did not ask for this, ignore this mail: nothing is sent to an address "
                f"that is not confirmed.\n"
            ),
            "unsubscribe": None,
            "created_at": now,
            "next_try_at": now,
        },
    )
