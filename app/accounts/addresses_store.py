"""Storage of the addresses registered accounts used (`account_addresses`): one row per account
and address, with when it was first and last seen. What they mean for rated games is
`app.ratings.fair_play`'s business."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import select, update
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.ext.asyncio import AsyncConnection
from sqlalchemy.orm import aliased

from app.db.models import AccountAddress
from app.live.log_store import Executor


async def note(db: Executor, user_id: int, address: str, at: datetime) -> None:
    """The account used `address` at `at` (a row added, or its `last_seen` moved on)."""
    address = address[:64]
    bind = db if isinstance(db, AsyncConnection) else db.get_bind()
    insert = postgresql.insert if bind.dialect.name == "postgresql" else sqlite.insert
    await db.execute(
        insert(AccountAddress)
        .values(user_id=user_id, address=address, first_seen=at, last_seen=at)
        .on_conflict_do_nothing(index_elements=["user_id", "address"])
    )
    await db.execute(
        update(AccountAddress)
        .where(
            AccountAddress.user_id == user_id,
            AccountAddress.address == address,
            AccountAddress.last_seen < at,
        )
        .values(last_seen=at)
    )


async def shared_since(db: Executor, one: int, other: int, since: datetime) -> bool:
    """Whether the two accounts both used one address since `since`."""
    mine, theirs = aliased(AccountAddress), aliased(AccountAddress)
    found = await db.scalar(
        select(mine.address)
        .join(theirs, theirs.address == mine.address)
        .where(
            mine.user_id == one,
            theirs.user_id == other,
            mine.last_seen >= since,
            theirs.last_seen >= since,
        )
        .limit(1)
    )
    return found is not None
