"""Bot accounts: a registered account that has played no game may become a bot, for good, as
on lichess. A bot plays through the bot API (`app.api.bot`) and does not wait in the
quick-pairing pools: people who ask to be paired expect a person."""

from __future__ import annotations

from sqlalchemy.ext.asyncio import AsyncSession

from app.db import accounts as stored_accounts
from app.services.errors import ServiceError


class BotError(ServiceError):
    http_status = 400


async def upgrade(session: AsyncSession, user_id: int) -> None:
    """Make the account a bot; refused for guests and for accounts that have played."""
    user = await stored_accounts.lock_user(session, user_id)
    if user is None:
        raise BotError("not_found", "no such account", http_status=404)
    if user.is_bot:
        return
    if user.kind != "registered":
        raise BotError("bot_needs_account", "only a registered account can become a bot")
    if await stored_accounts.has_games(session, user_id):
        raise BotError("bot_has_games", "only an account that has played no game can become a bot")
    await stored_accounts.make_bot(session, user_id)
    await session.commit()


def check_bot(is_bot: bool) -> None:
    """Refuse (`not_a_bot`, 403) the bot API to an account that is not a bot."""
    if not is_bot:
        raise BotError(
            "not_a_bot",
            "this is for bot accounts: upgrade with POST /api/bot/account/upgrade",
            http_status=403,
        )
