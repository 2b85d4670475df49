"""Open sockets last no longer than their token: logging out or the token expiring closes them.

Logging out deletes the token's row and rings every server process on the `control` channel,
which closes the sockets opened with that token at once. The broker may be down, so each
process also asks the database, every `SWEEP_SECONDS`, which of its sockets' tokens are gone
or expired (`lapsed`): a ring lost costs about a second, never an open socket.

Sockets are matched by the token's SHA-256, the only form the server keeps.
"""

from __future__ import annotations

from collections.abc import Collection

from app.accounts import store as stored
from app.db.engine import Database
from app.live import messages
from app.live.liveplay import CONTROL_CHANNEL, LivePlay
from app.timeutil import as_utc, utcnow

LOGGED_OUT = "logged out"
EXPIRED = "token expired"
BATCH = 500  # token hashes looked up per query


async def logged_out(live: LivePlay, token_hash: str) -> None:
    """Ring every process (this one included) to close the sockets of a token just revoked."""
    await live.publish(CONTROL_CHANNEL, messages.logout(token_hash))


async def lapsed(db: Database, token_hashes: Collection[str]) -> dict[str, str]:
    """Of these tokens (by hash), those no longer valid, with why: revoked (the row is gone:
    logged out) or expired."""
    wanted = list(token_hashes)
    now = utcnow()
    found: dict[str, str] = {}
    async with db.session() as session:
        for start in range(0, len(wanted), BATCH):
            batch = wanted[start : start + BATCH]
            expiries = await stored.token_expiries(session, batch)
            known = {token_hash: as_utc(expires_at) for token_hash, expires_at in expiries.items()}
            for token_hash in batch:
                expires_at = known.get(token_hash)
                if expires_at is None:
                    found[token_hash] = LOGGED_OUT
                elif expires_at <= now:
                    found[token_hash] = EXPIRED
    return found
