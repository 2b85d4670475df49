"""Bot accounts: a registered account that has played no game may become a bot, for good, as
on lichess. A bot plays through the bot API (`app.api.bot`) and does not wait in the
quick-pairing pools: people who ask to be paired expect a person."""

from __future__ import annotations

from sqlalchemy.ext.asyncio import AsyncSession

from app.accounts import store as stored_accounts
from app.db.models import User
from app.errors import Code, ServiceError
from app.live.liveplay import LivePlay
from app.status import UserKind
from app.timeutil import as_datetime

# A bot seen this recently (its event stream notes it every few seconds) is online.
ONLINE_SECONDS = 30.0


class BotError(ServiceError):
    """A refused bot API request."""

    http_status = 400


async def upgrade(session: AsyncSession, user_id: int) -> None:
    """Make the account a bot; refused for guests and for accounts that have played."""
    user = await stored_accounts.lock_user(session, user_id)
    if user is None:
        raise BotError(Code.NOT_FOUND, "no such account")
    if user.is_bot:
        return
    if user.kind != UserKind.REGISTERED:
        raise BotError(Code.BOT_NEEDS_ACCOUNT, "only a registered account can become a bot")
    if await stored_accounts.has_games(session, user_id):
        raise BotError(
            Code.BOT_HAS_GAMES, "only an account that has played no game can become a bot"
        )
    await stored_accounts.make_bot(session, user_id)
    await session.commit()


def check_bot(is_bot: bool) -> None:
    """Refuse (`not_a_bot`, 403) the bot API to an account that is not a bot."""
    if not is_bot:
        raise BotError(
            Code.NOT_A_BOT,
            "this is for bot accounts: upgrade with POST /api/bot/account/upgrade",
        )


async def online(live: LivePlay, limit: int) -> list[User]:
    """The bots online now, by name: an event stream open (seen lately) or a websocket."""
    async with live.db.session() as session:
        alive = await live.alive.get(session, live.settings.heartbeat_seconds)
        since = as_datetime(live.clock.time() - ONLINE_SECONDS)
        return await stored_accounts.bots_online(session, since, alive | {live.instance}, limit)
