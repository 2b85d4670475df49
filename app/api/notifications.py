"""REST: your inbox (`/api/notifications`), your e-mail (`/api/account/email`), and the links
mailed (confirm an address, unsubscribe from a kind with one click). See
docs/notifications.md."""

from __future__ import annotations

from dataclasses import dataclass
from html import escape
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Depends, Query
from fastapi.responses import HTMLResponse
from pydantic import BaseModel, ConfigDict, Field

from app.api.common.deps import CurrentUser, LiveDep, SessionDep
from app.api.common.errors import ErrorBody
from app.api.common.params import DIGITS, MAX_ID
from app.errors import Code
from app.live.liveplay import PlayError
from app.notify import email_settings
from app.notify import inbox as notifications
from app.notify.mail import MAIL_KIND_NAMES
from app.status import UserKind

router = APIRouter(tags=["notifications"])

Kind = notifications.Kind
MailKind = Literal["your_move", "time_alarm"]


class NotificationPublic(BaseModel):
    """A notice: its `kind`, what it is about (`data`: `game`, `table`, `opponent`…, or
    `challenge`, or `tournament`), in words (`text`), when (`at`, Unix ms), and whether read."""

    id: int
    kind: Kind
    data: dict[str, Any]
    text: str
    at: int
    read: bool


class InboxPublic(BaseModel):
    unread: int = Field(description="Your unread notices, all of them.")
    data: list[NotificationPublic] = Field(description="Newest first.")


class Unread(BaseModel):
    unread: int


class ReadBody(BaseModel):
    """The notices to mark read; omitted or null: all of yours."""

    model_config = ConfigDict(extra="forbid")

    ids: list[Annotated[int, Field(ge=1, le=MAX_ID)]] | None = Field(default=None, max_length=100)


class MailKindPublic(BaseModel):
    kind: MailKind
    name: str


class EmailPublic(BaseModel):
    """Your e-mail: whether this server sends mail at all, your confirmed `address`, one
    `pending` its confirmation link, the kinds mailed (`kinds`) and those you turned `off`."""

    enabled: bool
    address: str | None
    pending: str | None
    off: list[MailKind]
    kinds: list[MailKindPublic]


class AddressBody(BaseModel):
    model_config = ConfigDict(extra="forbid")

    address: str = Field(min_length=3, max_length=254)


class KindsBody(BaseModel):
    model_config = ConfigDict(extra="forbid")

    off: list[MailKind] = Field(max_length=10, description="The kinds you want no mail of.")


REGISTERED: dict[int | str, dict[str, Any]] = {
    403: {"model": ErrorBody, "description": "A guest's account (`forbidden`)."}
}


@dataclass(frozen=True, slots=True)
class Account:
    id: int
    registered: bool


async def get_account(user: CurrentUser, session: SessionDep) -> Account:
    """The signed-in user, read once; the request's session is given back at once (the
    services open their own, which on SQLite would wait for its write lock)."""
    account = Account(user.id, user.kind == UserKind.REGISTERED)
    await session.close()
    return account


AccountDep = Annotated[Account, Depends(get_account)]


def _registered(user: Account) -> int:
    if not user.registered:
        raise PlayError(Code.FORBIDDEN, "e-mail is for registered accounts")
    return user.id


@router.get("/api/notifications", responses={401: {"model": ErrorBody}})
async def inbox(
    user: AccountDep,
    live: LiveDep,
    limit: Annotated[int, Query(ge=1, le=100), DIGITS] = 30,
    before: Annotated[int | None, Query(ge=1, le=MAX_ID, description="An id: older ones.")] = None,
) -> InboxPublic:
    """Your notices, newest first, and how many are unread."""
    return InboxPublic.model_validate(await notifications.inbox(live, user.id, limit, before))


@router.post("/api/notifications/read", responses={401: {"model": ErrorBody}})
async def read(user: AccountDep, live: LiveDep, body: ReadBody | None = None) -> Unread:
    """Mark notices read (`ids`, or all); how many stay unread."""
    ids = body.ids if body is not None else None
    return Unread.model_validate(await notifications.read(live, user.id, ids))


@router.get("/api/account/email", responses=REGISTERED)
async def email(user: AccountDep, live: LiveDep) -> EmailPublic:
    """Your e-mail address and the mail you get."""
    return EmailPublic.model_validate(await email_settings.show(live, _registered(user)))


@router.put(
    "/api/account/email",
    responses=REGISTERED
    | {
        400: {"model": ErrorBody, "description": "Not one plain address (`bad_message`)."},
        409: {"model": ErrorBody, "description": "This server sends no mail (`conflict`)."},
        429: {
            "model": ErrorBody,
            "description": "Too many confirmations from the account or to the address "
            "(`rate_limited`).",
        },
    },
)
async def set_email(body: AddressBody, user: AccountDep, live: LiveDep) -> EmailPublic:
    """Give an address (one plain `name@example.org`): a mail with a confirmation link goes to
    it, and nothing else does until the button of that link's page is pressed (your present
    address, if any, is kept until then)."""
    return EmailPublic.model_validate(
        await email_settings.set_address(live, _registered(user), body.address)
    )


@router.delete("/api/account/email", responses=REGISTERED)
async def remove_email(user: AccountDep, live: LiveDep) -> EmailPublic:
    """Forget your address: no mail is sent to it any more."""
    return EmailPublic.model_validate(await email_settings.remove(live, _registered(user)))


@router.put("/api/account/email/kinds", responses=REGISTERED)
async def email_kinds(body: KindsBody, user: AccountDep, live: LiveDep) -> EmailPublic:
    """The kinds of notice you want no mail of; you get mail of the others."""
    return EmailPublic.model_validate(
        await email_settings.set_off(live, _registered(user), list(body.off))
    )


def _page(title: str, text: str, form: str = "") -> HTMLResponse:
    body = (
        f'<!doctype html><html lang="en"><meta charset="utf-8"><title>{escape(title)}</title>'
        f"<main><h1>{escape(title)}</h1><p>{escape(text)}</p>{form}"
        f'<p><a href="/">Back to the game</a></p></main></html>'
    )
    return HTMLResponse(body)


ConfirmToken = Annotated[str, Query(min_length=10, max_length=100)]


def _used() -> HTMLResponse:
    page = _page("Link not valid", "This link was used already, or replaced by a newer one.")
    page.status_code = 404
    return page


@router.get("/api/account/email/confirm", response_class=HTMLResponse)
async def confirm_page(live: LiveDep, token: ConfirmToken) -> HTMLResponse:
    """The link mailed to an address, opened: a page with the one button that confirms it (a
    link opened by a mail scanner confirms nothing)."""
    waiting = await email_settings.waiting(live, token)
    if waiting is None:
        return _used()
    name, address = waiting
    form = '<form method="post"><button type="submit">Confirm</button></form>'
    text = (
        f"Mail about the games of the account {name} is to go to {address}. Confirm if you "
        "asked for it; if you did not, close this page: no mail goes to an address not confirmed."
    )
    return _page("Confirm your address", text, form)


@router.post("/api/account/email/confirm", response_class=HTMLResponse)
async def confirm(live: LiveDep, token: ConfirmToken) -> HTMLResponse:
    """The button of the link's page: confirms the address (a page says so)."""
    if await email_settings.confirm(live, token):
        return _page("Address confirmed", "You will get the mail you chose about your games.")
    return _used()


@router.get("/api/email/unsubscribe", response_class=HTMLResponse)
async def unsubscribe_page(
    user: Annotated[int, Query(ge=1, le=MAX_ID)],
    kind: Annotated[str, Query(max_length=24)],
    sig: Annotated[str, Query(max_length=64)],
) -> HTMLResponse:
    """The unsubscribe link in a mail, opened: a page with the one button that does it (a link
    opened by a mail scanner unsubscribes nobody)."""
    form = (
        '<form method="post"><input type="hidden" name="List-Unsubscribe" value="One-Click">'
        '<button type="submit">Unsubscribe</button></form>'
    )
    _ = (user, sig)  # posted back with the form, to the same address
    return _page("Unsubscribe", f"No more mail about {_kind_name(kind)}?", form)


@router.post("/api/email/unsubscribe", response_class=HTMLResponse)
async def unsubscribe(
    live: LiveDep,
    user: Annotated[int, Query(ge=1, le=MAX_ID)],
    kind: Annotated[str, Query(max_length=24)],
    sig: Annotated[str, Query(max_length=64)],
) -> HTMLResponse:
    """One-click unsubscribe (RFC 8058: mail programs post here with
    `List-Unsubscribe=One-Click`; the page's button too): no more mail of that kind."""
    if await email_settings.unsubscribe(live, user, kind, sig):
        return _page("Unsubscribed", f"You will get no more mail about {_kind_name(kind)}.")
    page = _page("Link not valid", "This link is not valid for your present address.")
    page.status_code = 404
    return page


def _kind_name(kind: str) -> str:
    return MAIL_KIND_NAMES.get(kind, "this kind of notice")
