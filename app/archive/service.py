"""The game archive: history queries with keyset pagination, and PDN / NDJSON rendering.

Pages are ordered by (started_at, id) and continued with an opaque cursor holding the last row's
key, so games that arrive while a client pages through the history never shift a page: nothing is
skipped or repeated. The queries themselves are `app.archive.store`'s (a player's games read as two
index range scans, merged); this module checks filters, looks names up and shapes the rows.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, field, fields
from datetime import datetime
from typing import Any

from sqlalchemy import Row
from sqlalchemy.ext.asyncio import AsyncSession

from app.accounts.service import find_user
from app.archive import counts_store as archive_counts
from app.archive import store as stored
from app.archive.store import RELATIVE as _RELATIVE
from app.archive.store import Branches
from app.archive.store import Colour as Colour
from app.archive.store import GameFilter as GameFilter
from app.archive.store import Order as Order
from app.archive.visibility import ANYONE, Viewer, may_see, visible_to
from app.db.models import MAX_ID, User
from app.errors import Code, ServiceError
from app.ratings import display, provisional
from app.rules import Result
from app.rules.pdn import MAX_TAG_LENGTH, MAX_TAGS
from app.status import GameStatus
from app.tables import rooms_store as rooms
from app.timeutil import as_utc

RELATIVE_RESULTS = ("win", "loss", "draw")


class ArchiveError(ServiceError):
    """A query the archive cannot answer as asked (400 unless said otherwise)."""


class NotFoundError(ArchiveError):
    def __init__(self, message: str) -> None:
        super().__init__(Code.NOT_FOUND, message)


@dataclass(frozen=True, slots=True)
class GameRating:
    """One side's rating before a rated game (whole points), whether it was provisional then,
    and what the game did to it."""

    rating: int
    provisional: bool
    diff: int


def _game_rating(before: float | None, rd: float | None, after: float | None) -> GameRating | None:
    if before is None or rd is None or after is None:
        return None
    return GameRating(display(before), provisional(rd), display(after) - display(before))


@dataclass
class GameSummary:
    """A game as listed in a history page; `black_rating`/`white_rating` for a game that moved
    ratings."""

    id: int
    variant: str
    status: str
    result: str
    termination: str | None
    black: str | None
    white: str | None
    rated: bool
    room: str | None
    room_name: str | None
    source: str
    start_fen: str | None
    clock_base_s: int | None
    clock_increment_s: int
    ply_count: int
    started_at: datetime
    last_move_at: datetime | None
    finished_at: datetime | None
    tournament: int | None
    black_rating: GameRating | None = None
    white_rating: GameRating | None = None


@dataclass
class GameRecord(GameSummary):
    """A game with its PDN tags and its moves, as shown alone or exported."""

    tags: dict[str, str] = field(default_factory=dict)
    moves: list[str] = field(default_factory=list)  # PDN move texts, ply 1 first
    clocks_ms: list[int | None] = field(default_factory=list)  # mover's time left, per ply
    played_at: list[datetime | None] = field(default_factory=list)


@dataclass
class GamePage:
    games: list[GameSummary]
    next_cursor: str | None
    total: int | None
    total_exact: bool = True  # False: the database's estimate (no index serves the count)


@dataclass
class VariantStats:
    games: int = 0
    wins: int = 0
    losses: int = 0
    draws: int = 0
    playing: int = 0


@dataclass
class PlayerProfile:
    name: str
    kind: str
    created_at: datetime
    last_seen_at: datetime | None
    games: int
    variants: dict[str, VariantStats]


# --- cursors -------------------------------------------------------------------------------


def encode_cursor(order: Order, started_at: datetime, game_id: int) -> str:
    raw = f"{order}|{as_utc(started_at).isoformat()}|{game_id}".encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def decode_cursor(cursor: str, order: Order) -> tuple[datetime, int]:
    """The (started_at, id) key after which a page continues; ArchiveError `bad_cursor` if the
    text is not a cursor this server issued for this sort order."""
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)).decode()
        cursor_order, started, game_id = raw.split("|")
        key = (as_utc(datetime.fromisoformat(started)), int(game_id))
        if not 0 < key[1] <= MAX_ID:
            raise ValueError(game_id)
    except (ValueError, OverflowError, binascii.Error, UnicodeDecodeError):
        raise ArchiveError(Code.BAD_CURSOR, "cursor is not one this server issued") from None
    if cursor_order != order:
        raise ArchiveError(Code.BAD_CURSOR, f"cursor was issued for order={cursor_order}")
    return key


# --- queries -------------------------------------------------------------------------------


@dataclass(frozen=True)
class ResolvedFilter:
    """A filter with names turned into ids, split into one condition list per index to scan."""

    branches: Branches


async def _user(session: AsyncSession, name: str) -> User:
    """The player called `name`, ignoring case as account names do."""
    user = await find_user(session, name)
    if user is None:
        raise NotFoundError(f"no player named {name!r}")
    return user


async def resolve_filter(
    session: AsyncSession, flt: GameFilter, viewer: Viewer = ANYONE
) -> ResolvedFilter:
    """Check a filter and look up the names in it: ArchiveError for filters that do not fit
    together, NotFoundError for an unknown player or room. Done before an export starts
    streaming, so such errors are still proper error responses. Only games `viewer` may see
    match (`app.archive.visibility`)."""
    if flt.since is not None and flt.until is not None and flt.since > flt.until:
        raise ArchiveError(Code.BAD_REQUEST, "since must not be after until")
    room_id = None
    if flt.room is not None:
        room_id = await rooms.room_id_of(session, flt.room)
        if room_id is None:
            raise NotFoundError(f"no room {flt.room!r}")

    if flt.player is None:
        if flt.opponent is not None or flt.colour is not None:
            raise ArchiveError(Code.BAD_REQUEST, "opponent and colour need player")
        if flt.result in RELATIVE_RESULTS:
            raise ArchiveError(Code.BAD_REQUEST, f"result={flt.result} needs player")
        return ResolvedFilter(stored.game_branches(flt, room_id, visible_to(viewer)))

    player_id = (await _user(session, flt.player)).id
    opponent_id = None if flt.opponent is None else (await _user(session, flt.opponent)).id
    sight = visible_to(viewer, player_id)
    return ResolvedFilter(stored.player_branches(flt, room_id, player_id, opponent_id, sight))


_SUMMARY_FIELDS = tuple(f.name for f in fields(GameSummary))[:-2]


def _summary(row: Sequence[Any]) -> dict[str, Any]:
    """A row of `SUMMARY_COLUMNS` as `GameSummary`'s fields."""
    changes = row[-6:]
    values = dict(zip(_SUMMARY_FIELDS, row[:-6], strict=True))
    values["black_rating"] = _game_rating(*changes[:3])
    values["white_rating"] = _game_rating(*changes[3:])
    for key in ("started_at", "last_move_at", "finished_at"):
        if values[key] is not None:
            values[key] = as_utc(values[key])
    return values


async def list_games(
    session: AsyncSession,
    flt: GameFilter,
    viewer: Viewer = ANYONE,
    *,
    limit: int = 20,
    cursor: str | None = None,
    order: Order = "desc",
    with_total: bool = True,
) -> GamePage:
    """One page of the games matching `flt` that `viewer` may see, and the cursor of the next
    page (None on the last)."""
    after = None if cursor is None else decode_cursor(cursor, order)
    resolved = await resolve_filter(session, flt, viewer)
    games = [
        GameSummary(**_summary(row))
        for row in await stored.page_rows(session, resolved.branches, order, after, limit + 1)
    ]
    next_cursor = None
    if len(games) > limit:
        games = games[:limit]
        next_cursor = encode_cursor(order, games[-1].started_at, games[-1].id)
    if not with_total:
        return GamePage(games, next_cursor, None)
    total, exact = await archive_counts.count(session, resolved.branches)
    return GamePage(games, next_cursor, total, exact)


def bounded_tags(tags: dict[str, Any]) -> dict[str, str]:
    """A stored game's tags as shown: the import's bounds (`app.rules.pdn`) hold for games
    imported before them too, so a tag never makes a response large (values cut with "…",
    names too, at most MAX_TAGS of them)."""

    def cut(text: str) -> str:
        return text if len(text) <= MAX_TAG_LENGTH else text[: MAX_TAG_LENGTH - 1] + "…"

    return {cut(str(k)): cut(str(v)) for k, v in list(tags.items())[:MAX_TAGS]}


async def _records(
    session: AsyncSession, rows: Sequence[Row[Any]], with_times: bool = True
) -> list[GameRecord]:
    """Summary rows with the tags column last, completed with their moves."""
    moves = await stored.moves_of(session, [row[0] for row in rows], with_times)
    records = []
    for row in rows:
        texts, clocks, times = moves[row[0]]
        records.append(
            GameRecord(
                **_summary(row[:-1]),
                tags=bounded_tags(row[-1] or {}),
                moves=texts,
                clocks_ms=clocks,
                played_at=times,
            )
        )
    return records


async def get_game(session: AsyncSession, game_id: int, viewer: Viewer = ANYONE) -> GameRecord:
    """One game with its moves; NotFoundError, as for a game that does not exist, when
    `viewer` may not see it."""
    seen = await stored.game_privacy(session, game_id)
    if seen is None or not may_see(
        viewer,
        black_id=seen[0],
        white_id=seen[1],
        private=seen[2],
        invite_code=seen[3],
    ):
        raise NotFoundError(f"no game {game_id}")
    rows = await stored.game_rows(session, game_id)
    if not rows:
        raise NotFoundError(f"no game {game_id}")
    return (await _records(session, rows))[0]


async def iter_games(
    session: AsyncSession,
    resolved: ResolvedFilter,
    *,
    order: Order = "desc",
    max_games: int | None = None,
    batch_size: int = 500,
) -> AsyncIterator[GameRecord]:
    """Every game matching the filter with its moves, read `batch_size` games at a time by keyset,
    so an export of a million games holds two batches in memory and no long-lived transaction.

    The next batch is read while the caller renders this one: the database works on it (on
    another core) instead of waiting for the caller to ask."""

    async def batch(after: tuple[datetime, int] | None, size: int) -> tuple[list[GameRecord], bool]:
        """The `size` games after `after`, and whether they are the last."""
        rows = await stored.page_rows(session, resolved.branches, order, after, size, stored.TAGS)
        records = await _records(session, rows, with_times=False) if rows else []
        await session.commit()  # end the read transaction between batches
        return records, len(rows) < size

    def size_after(done: int) -> int:
        return batch_size if max_games is None else min(batch_size, max_games - done)

    done = 0
    if size_after(done) <= 0:
        return
    pending: asyncio.Task[tuple[list[GameRecord], bool]] | None = asyncio.ensure_future(
        batch(None, size_after(done))
    )
    try:
        while pending is not None:
            records, last = await pending
            pending = None
            done += len(records)
            if records and not last and size_after(done) > 0:
                after = (records[-1].started_at, records[-1].id)
                pending = asyncio.ensure_future(batch(after, size_after(done)))
            for done_here, record in enumerate(records, 1):
                yield record
                if pending is not None and done_here % 25 == 0:
                    # Let the read of the next batch go on (its statements are sent and
                    # answered by the loop): without this it would wait for the whole batch.
                    await asyncio.sleep(0)
    finally:
        if pending is not None:
            # The caller stopped early (a client that went away): let the read finish, so the
            # session is left between statements, then drop it.
            try:
                await pending
            except asyncio.CancelledError:
                pending.cancel()
                raise
            except Exception:  # its result is not wanted any more
                pass


# --- players -------------------------------------------------------------------------------


async def player_profile(
    session: AsyncSession, name: str, viewer: Viewer = ANYONE
) -> PlayerProfile:
    """A player's totals per variant, counted from the games (any source) they played that
    `viewer` may see: another's private games are not in the totals, nor in the last seen."""
    user = await _user(session, name)
    sight = visible_to(viewer, user.id)
    stats: dict[str, VariantStats] = {}
    last_game: datetime | None = None
    colours: tuple[Colour, ...] = ("black", "white")
    for colour in colours:
        rows = await stored.player_totals(session, user.id, colour, sight)
        for variant, status, result, count, latest in rows:
            entry = stats.setdefault(variant, VariantStats())
            entry.games += count
            if status == GameStatus.PLAYING:
                entry.playing += count
            elif result == _RELATIVE[colour]["win"]:
                entry.wins += count
            elif result == _RELATIVE[colour]["loss"]:
                entry.losses += count
            elif result == Result.DRAW:
                entry.draws += count
            latest = as_utc(latest)
            last_game = latest if last_game is None else max(last_game, latest)
    seen = [as_utc(t) for t in (user.last_seen_at, last_game) if t is not None]
    return PlayerProfile(
        name=user.name,
        kind=user.kind,
        created_at=as_utc(user.created_at),
        last_seen_at=max(seen) if seen else None,
        games=sum(s.games for s in stats.values()),
        variants=stats,
    )


async def public_finished_ids(session: AsyncSession, *, min_plies: int) -> list[int]:
    """The ids of the finished public games of at least `min_plies` plies, oldest first."""
    return await stored.public_finished_ids(session, min_plies=min_plies)
