"""Game analysis on request (docs/analysis.md): asked for once per game, by one of its players
or by anyone for a public game; made once, by whichever server process takes it from the
queue; served to everyone who may see the game after.

Fair use: one analysis waiting at a time per user, `ANALYSES_PER_DAY` a day per user and
`ANALYSES_PER_ADDRESS_PER_DAY` per client address (`rate_limited`, with the seconds to wait).
The work is done by `app.analysis.runner`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sqlalchemy.ext.asyncio import AsyncSession

from app.accounts import limits
from app.analysis import chances
from app.analysis import store as stored
from app.archive import service as archive
from app.archive.visibility import Viewer
from app.db.models import GameAnalysis
from app.errors import Code
from app.live.liveplay import LivePlay, PlayError
from app.status import GameStatus
from app.timeutil import as_unix

DAY_S = 86_400


@dataclass(frozen=True)
class Asker:
    """Who asks for an analysis: their account (and whether an administrator), their address."""

    user_id: int
    admin: bool
    address: str


def ply_payload(ply: Any) -> dict[str, Any]:
    return {
        "ply": ply.ply,
        "move": ply.move,
        "eval": ply.value.payload() | {"text": ply.value.text()},
        "wdl": list(chances.wdl(ply.value)),
        "best": ply.best,
        "pv": list(ply.pv),
        "label": ply.label,
    }


def view(row: GameAnalysis, ahead: int | None = None) -> dict[str, Any]:
    """An analysis as served: its status and progress, then (done) its plies and accuracy."""
    done = row.status == stored.DONE
    return {
        "game": row.game_id,
        "status": row.status,
        "nodes": row.nodes,
        "progress": {"done": row.done, "total": row.total},
        "ahead": ahead,
        "requested_at": int(as_unix(row.requested_at) * 1000),
        "finished_at": int(as_unix(row.finished_at) * 1000) if row.finished_at else None,
        "start": row.start if done else None,
        "plies": row.plies if done else [],
        "accuracy": ({"black": row.accuracy_black, "white": row.accuracy_white} if done else None),
        "error": row.error,
    }


async def _game(live: LivePlay, game_id: int, viewer: Viewer) -> Any:
    async with live.db.session() as session:
        try:
            return await archive.get_game(session, game_id, viewer)
        except archive.NotFoundError:
            raise PlayError(Code.NOT_FOUND, f"no game {game_id}") from None


async def get(live: LivePlay, game_id: int, viewer: Viewer) -> dict[str, Any]:
    """The game's analysis as far as it has got; `not_found` if the game cannot be seen or was
    never analysed."""
    await _game(live, game_id, viewer)
    async with live.db.session() as session:
        row = await stored.get(session, game_id)
        if row is None:
            raise PlayError(Code.NOT_FOUND, f"game {game_id} has not been analysed")
        ahead = None
        if row.status == stored.QUEUED:
            ahead = await stored.ahead_of(session, row.requested_at)
        return view(row, ahead)


async def plies_of(session: AsyncSession, game_id: int) -> list[dict[str, Any]] | None:
    """A game's analysed plies, if its analysis is done (for the PDN export)."""
    row = await stored.get(session, game_id)
    return row.plies if row is not None and row.status == stored.DONE else None


async def request(live: LivePlay, asker: Asker, game_id: int) -> tuple[dict[str, Any], bool]:
    """Ask for a game's analysis: (its view, whether it was queued now). A game analysed, or
    being analysed, is simply shown; one that failed is queued again."""
    viewer = Viewer(asker.user_id, asker.admin)
    game = await _game(live, game_id, viewer)
    if game.status == GameStatus.PLAYING:
        raise PlayError(Code.CONFLICT, f"game {game_id} is still being played")
    if not game.moves:
        raise PlayError(Code.CONFLICT, f"game {game_id} has no move to analyse")
    settings = live.settings
    now = live.clock.now()
    async with live.db.session() as session:
        row = await stored.get(session, game_id)
        if row is not None and row.status != stored.FAILED:
            return view(row), False
        if await stored.waiting_of(session, asker.user_id) and not asker.admin:
            raise PlayError(Code.RATE_LIMITED, "one analysis at a time: wait for yours to finish")
        counted = [
            (
                limits.key("analysis", str(asker.user_id)),
                limits.Bucket(settings.analyses_per_day, DAY_S),
            ),
            (
                limits.key("analysis-address", asker.address),
                limits.Bucket(settings.analyses_per_address_per_day, DAY_S),
            ),
        ]
        wait = None if asker.admin else await limits.take_all(session, counted, now)
        if wait is not None:
            await session.rollback()
            raise PlayError(Code.RATE_LIMITED, "the day's analyses are used up", retry_after=wait)
        if row is None:
            row = await stored.add(
                session, game_id, asker.user_id, settings.analysis_nodes, len(game.moves) + 1, now
            )
        else:  # failed before: again
            row.status, row.requested_by, row.requested_at = stored.QUEUED, asker.user_id, now
            row.done, row.error, row.nodes = 0, None, settings.analysis_nodes
        await session.commit()
        ahead = await stored.ahead_of(session, row.requested_at)
        return view(row, ahead), True
