"""Limits on games against the computer, so that one person cannot keep its workers busy."""

from __future__ import annotations

from app.computer import store as stored_ai
from app.errors import Code
from app.live.liveplay import LivePlay, PlayError
from app.live.log_store import Executor
from app.play.players import PlayerRef


async def limit_ai_games(
    live: LivePlay, db: Executor, user: PlayerRef, address: str | None
) -> None:
    """Refuse a new game against the computer beyond AI_GAMES_PER_USER games of `user`'s or
    AI_GAMES_PER_ADDRESS started from `address` in progress (`too_many_ai_games`), so that
    one person cannot keep the computer's workers busy. The caller holds `user`'s row; the
    address's lock makes its starts at once count each other."""
    settings = live.settings
    if address is not None:
        await stored_ai.lock_address(db, address)
        await stored_ai.forget_addresses(db)
    playing = await stored_ai.playing_against(db, user.id, list(live.ai_levels))
    if playing >= settings.ai_games_per_user:
        raise PlayError(
            Code.TOO_MANY_AI_GAMES,
            f"you already play {playing} games against the computer: finish one first",
        )
    if address is not None and await stored_ai.playing_from(db, address) >= (
        most := settings.ai_games_per_address
    ):
        raise PlayError(
            Code.TOO_MANY_AI_GAMES,
            f"{most} games against the computer are in progress from your address: "
            "finish one first",
        )
