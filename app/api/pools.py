"""REST: the quick-pairing pools, with how many wait in each (one waits and is paired over
/ws: `seek`, `cancel_seek`)."""

from __future__ import annotations

from typing import Literal

from fastapi import APIRouter
from pydantic import BaseModel

from app.api.common.deps import LiveDep
from app.api.schemas.common import Clock
from app.matchmaking import pools as pairing

router = APIRouter(prefix="/api/pools", tags=["pools"])


class PoolPublic(BaseModel):
    id: str  # what `seek` names, e.g. "english-5+3"
    name: str  # e.g. "English 5+3"
    variant: Literal["english", "pool"]
    clock: Clock
    category: str  # the rating category its games move when rated
    waiting: int  # players waiting in it now


@router.get("")
async def list_pools(live: LiveDep) -> list[PoolPublic]:
    """The pools, in the order clients should show them."""
    return [PoolPublic.model_validate(pool) for pool in await pairing.waiting(live)]
