"""Reads of the game archive: the filtered, keyset-paged queries of history and export.

Only reads. A filter becomes one list of conditions per index to scan (`Branches`): a player's
games are two index range scans (as Black, as White), each limited, then merged, which keeps a
history page cheap even for a player with 100,000 games (docs/benchmarks.md, Archive). Rows come
back as the columns of `SUMMARY_COLUMNS` (then any extra ones asked for); turning them into
summaries and records is `app.archive.service`'s business.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from typing import Any, Literal

from sqlalchemy import (
    ColumnElement,
    Row,
    Select,
    Subquery,
    false,
    func,
    or_,
    select,
    true,
    tuple_,
    union_all,
)
from sqlalchemy.dialects.postgresql import aggregate_order_by
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import aliased

from app.accounts.store import LISTED
from app.db.models import Game, GameTable, Move, RatingChange, Room, User
from app.rules import Result
from app.status import UserKind
from app.timeutil import as_utc

Order = Literal["desc", "asc"]
Colour = Literal["black", "white"]
Branches = list[list[ColumnElement[bool]]]  # one condition list per index scan, OR-ed

# What each relative result means in the PDN result of a game, seen from Black or from White.
RELATIVE = {
    "black": {"win": Result.BLACK_WINS, "loss": Result.WHITE_WINS, "draw": Result.DRAW},
    "white": {"win": Result.WHITE_WINS, "loss": Result.BLACK_WINS, "draw": Result.DRAW},
}


@dataclass(frozen=True)
class Sight:
    """Which games a listing may show: the public ones, and every private game
    (`all_private`) or the private games `member` played (None: no private game).

    Each kind is a branch of its own (`is_private = false`, `is_private = true` with a player),
    so that every branch is a range of one of the `(…, is_private, started_at, id)` indexes: a
    condition mixing the two (public OR mine) would leave the planner a filter instead."""

    all_private: bool = False
    member: int | None = None


PUBLIC_ONLY = Sight()
EVERYTHING = Sight(all_private=True)
PUBLIC = Game.is_private == false()
PRIVATE = Game.is_private == true()
# What every listing and count leaves out: the games aborted before they began (before both
# sides had made a first move), which lichess hides too. They stay stored and answer by their
# id (`game_rows`). Every archive index ends with the termination, so this is read from the
# index like the rest of a branch.


def _not_black(player_id: int) -> ColumnElement[bool]:
    """The game's Black is not `player_id` (or unknown): a game with the player on both sides
    is listed once, from the Black scan (the White index holds black_id, so counting stays
    index-only)."""
    return or_(Game.black_id.is_(None), Game.black_id != player_id)


@dataclass(frozen=True)
class GameFilter:
    """Every filter of the history and export endpoints; None means "any"."""

    player: str | None = None
    opponent: str | None = None
    colour: Colour | None = None
    variant: str | None = None
    result: str | None = None  # a PDN result, or win/loss/draw relative to `player`
    termination: str | None = None
    room: str | None = None  # room slug
    rated: bool | None = None
    status: str | None = None
    since: date | None = None  # inclusive, by start date (UTC)
    until: date | None = None  # inclusive
    min_plies: int | None = None
    ai: bool | None = None  # against the computer (one of its users, kind `ai`), or not
    tournament: int | None = None  # played in this tournament


def _common(flt: GameFilter, room_id: int | None) -> list[ColumnElement[bool]]:
    """The conditions on the game's own columns (a listed game's, `LISTED`, first)."""
    common: list[ColumnElement[bool]] = [LISTED]
    if flt.variant is not None:
        common.append(Game.variant == flt.variant)
    if flt.termination is not None:
        common.append(Game.termination == flt.termination)
    if flt.rated is not None:
        common.append(Game.rated.is_(flt.rated))
    if flt.tournament is not None:
        common.append(Game.tournament_id == flt.tournament)
    if flt.ai is not None:
        computer = select(User.id).where(User.kind == UserKind.AI).scalar_subquery()
        if flt.ai:
            common.append(or_(Game.black_id.in_(computer), Game.white_id.in_(computer)))
        else:  # (a game of imported records may lack a player's id)
            black, white = func.coalesce(Game.black_id, 0), func.coalesce(Game.white_id, 0)
            common.append(~or_(black.in_(computer), white.in_(computer)))
    if flt.status is not None:
        common.append(Game.status == flt.status)
    if flt.min_plies is not None:
        common.append(Game.ply_count >= flt.min_plies)
    if flt.since is not None:
        common.append(Game.started_at >= datetime.combine(flt.since, time(), UTC))
    if flt.until is not None and flt.until < date.max:
        end = datetime.combine(flt.until + timedelta(days=1), time(), UTC)
        common.append(Game.started_at < end)
    if room_id is not None:
        common.append(Game.room_id == room_id)
    return common


def game_branches(flt: GameFilter, room_id: int | None, sight: Sight) -> Branches:
    """The scans of a filter without a player (`flt.result` a PDN result): the public games,
    then the private ones `sight` shows."""
    common = _common(flt, room_id)
    if flt.result is not None:
        common.append(Game.result == flt.result)
    branches = [[*common, PUBLIC]]
    if sight.all_private:
        branches.append([*common, PRIVATE])
    elif sight.member is not None:
        member = sight.member
        branches.append([*common, PRIVATE, Game.black_id == member])
        branches.append([*common, PRIVATE, Game.white_id == member, _not_black(member)])
    return branches


def _player_sights(player_id: int, theirs: Any, opponent_id: int | None, sight: Sight) -> Branches:
    """The extra conditions of each scan of one colour of `player_id`'s games: the public
    games, and the private ones `sight` shows (all of them to the player and to administrators,
    those against the viewer to another player)."""
    sights = [[PUBLIC]]
    if sight.all_private or sight.member == player_id:
        sights.append([PRIVATE])
    elif sight.member is not None and opponent_id in (None, sight.member):
        sights.append([PRIVATE, theirs == sight.member])
    return sights


def player_branches(
    flt: GameFilter,
    room_id: int | None,
    player_id: int,
    opponent_id: int | None,
    sight: Sight,
) -> Branches:
    """A player's games: for each colour `flt.colour` allows, one scan per kind of game
    `sight` shows; `flt.result` may be relative (win/loss/draw)."""
    common = _common(flt, room_id)
    branches: Branches = []
    for colour in ("black", "white"):
        if flt.colour not in (None, colour):
            continue
        mine, theirs = (
            (Game.black_id, Game.white_id) if colour == "black" else (Game.white_id, Game.black_id)
        )
        conds = [*common, mine == player_id]
        if colour == "white" and flt.colour is None:
            conds.append(_not_black(player_id))
        if opponent_id is not None:
            conds.append(theirs == opponent_id)
        if flt.result is not None:
            conds.append(Game.result == RELATIVE[colour].get(flt.result, flt.result))
        branches.extend(
            [*conds, *extra] for extra in _player_sights(player_id, theirs, opponent_id, sight)
        )
    return branches


# --- pages ---------------------------------------------------------------------------------


def _keyset(order: Order, after: tuple[datetime, int] | None) -> list[ColumnElement[bool]]:
    if after is None:
        return []
    key = tuple_(Game.started_at, Game.id)
    bound = tuple_(*after)
    return [key < bound if order == "desc" else key > bound]


def _page_order(order: Order) -> tuple[ColumnElement[Any], ColumnElement[Any]]:
    if order == "desc":
        return Game.started_at.desc(), Game.id.desc()
    return Game.started_at.asc(), Game.id.asc()


def _page(
    branches: Branches, order: Order, after: tuple[datetime, int] | None, limit: int
) -> Subquery:
    """The ids and start times of the next `limit` matching games: one limited index scan per
    branch, merged and limited again."""
    parts = [
        select(Game.id, Game.started_at)
        .where(*conds, *_keyset(order, after))
        .order_by(*_page_order(order))
        .limit(limit)
        .subquery()
        for conds in branches
    ]
    if len(parts) == 1:
        return parts[0]
    merged = union_all(*(select(p.c.id, p.c.started_at) for p in parts)).subquery()
    return (
        select(merged.c.id, merged.c.started_at)
        .order_by(*_page_order_of(merged, order))
        .limit(limit)
        .subquery()
    )


def _page_order_of(page: Subquery, order: Order) -> tuple[ColumnElement[Any], ColumnElement[Any]]:
    if order == "desc":
        return page.c.started_at.desc(), page.c.id.desc()
    return page.c.started_at.asc(), page.c.id.asc()


_BlackChange = aliased(RatingChange)
_WhiteChange = aliased(RatingChange)
# id, variant, status, result, termination, black, white, rated, room slug, room name, source,
# start_fen, clock base and increment, plies, started_at, last_move_at, finished_at; then what
# the game did to each side's rating (rating and RD before, rating after; null unless the game
# moved ratings), Black's then White's.
SUMMARY_COLUMNS = (
    Game.id,
    Game.variant,
    Game.status,
    Game.result,
    Game.termination,
    # The names as scalar subqueries rather than joins: each is one primary-key look-up, and
    # PostgreSQL plans the statement in a third of the time with two relations fewer to order.
    select(User.name).where(User.id == Game.black_id).scalar_subquery(),
    select(User.name).where(User.id == Game.white_id).scalar_subquery(),
    Game.rated,
    Room.slug,
    Room.name,
    Game.source,
    Game.start_fen,
    Game.clock_base_s,
    Game.clock_increment_s,
    Game.ply_count,
    Game.started_at,
    Game.last_move_at,
    Game.finished_at,
    Game.tournament_id,
    _BlackChange.rating_before,
    _BlackChange.rd_before,
    _BlackChange.rating_after,
    _WhiteChange.rating_before,
    _WhiteChange.rd_before,
    _WhiteChange.rating_after,
)
TAGS = Game.tags


def _summary_select(*extra: Any) -> Select[*tuple[Any, ...]]:
    return (
        select(*SUMMARY_COLUMNS, *extra)
        .outerjoin(Room, Room.id == Game.room_id)
        .outerjoin(
            _BlackChange,
            (_BlackChange.game_id == Game.id) & (_BlackChange.user_id == Game.black_id),
        )
        .outerjoin(
            _WhiteChange,
            (_WhiteChange.game_id == Game.id) & (_WhiteChange.user_id == Game.white_id),
        )
    )


async def page_rows(
    session: AsyncSession,
    branches: Branches,
    order: Order,
    after: tuple[datetime, int] | None,
    limit: int,
    *extra: Any,
) -> list[Row[Any]]:
    """The summary columns (then `extra`) of the next `limit` games, in page order."""
    page = _page(branches, order, after, limit)
    stmt = (
        _summary_select(*extra)
        .join(page, page.c.id == Game.id)
        .order_by(*_page_order_of(page, order))
    )
    return list(await session.execute(stmt))


# --- one game ------------------------------------------------------------------------------


async def game_privacy(
    session: AsyncSession, game_id: int
) -> tuple[int | None, int | None, bool, str | None] | None:
    """(black_id, white_id, at a private table, its invite code) of a game; None if none."""
    seen = (
        await session.execute(
            select(Game.black_id, Game.white_id, GameTable.is_private, GameTable.invite_code)
            .outerjoin(GameTable, GameTable.id == Game.table_id)
            .where(Game.id == game_id)
        )
    ).first()
    if seen is None:
        return None
    return seen[0], seen[1], bool(seen[2]), seen[3]


async def game_rows(session: AsyncSession, game_id: int) -> list[Row[Any]]:
    """The summary columns, then the tags, of one game (no row if there is no such game)."""
    return list(await session.execute(_summary_select(TAGS).where(Game.id == game_id)))


MoveLists = tuple[list[str], list[int | None], list[datetime | None]]


async def moves_of(session: AsyncSession, ids: list[int], with_times: bool) -> dict[int, MoveLists]:
    """The moves of the given games (move times only `with_times`: an export does without).
    Postgres folds each game's plies into arrays: one row per game instead of one per ply."""
    moves: dict[int, MoveLists] = {game_id: ([], [], []) for game_id in ids}
    if session.get_bind().dialect.name == "postgresql":
        columns: list[ColumnElement[Any]] = [
            func.array_agg(aggregate_order_by(column, Move.ply))
            for column in (Move.move, Move.clock_ms, Move.played_at)[: 3 if with_times else 2]
        ]
        rows = await session.execute(
            select(Move.game_id, *columns).where(Move.game_id.in_(ids)).group_by(Move.game_id)
        )
        for game_id, texts, clocks, *times in rows:
            moves[game_id] = (
                list(texts),
                list(clocks),
                list(times[0]) if with_times else [None] * len(texts),
            )
        return moves
    ply_rows = await session.execute(
        select(Move.game_id, Move.move, Move.clock_ms, Move.played_at)
        .where(Move.game_id.in_(ids))
        .order_by(Move.game_id, Move.ply)
    )
    for game_id, text, clock_ms, played_at in ply_rows:
        game_texts, game_clocks, game_times = moves[game_id]
        game_texts.append(text)
        game_clocks.append(clock_ms)
        game_times.append(None if played_at is None or not with_times else as_utc(played_at))
    return moves


# --- players -------------------------------------------------------------------------------


async def player_totals(
    session: AsyncSession, player_id: int, colour: Colour, sight: Sight
) -> list[Row[*tuple[Any, ...]]]:
    """(variant, status, result, games, latest start) of a player's listed games as `colour`
    that `sight` shows (as White, those against someone else only: a game against oneself
    counts once, as Black); one row per group and kind of game (public, private), to be
    summed."""
    mine, theirs = (
        (Game.black_id, Game.white_id) if colour == "black" else (Game.white_id, Game.black_id)
    )
    conds = [mine == player_id, LISTED]
    if colour == "white":
        conds.append(_not_black(player_id))
    parts = [
        select(Game.variant, Game.status, Game.result, func.count(), func.max(Game.started_at))
        .where(*conds, *extra)
        .group_by(Game.variant, Game.status, Game.result)
        for extra in _player_sights(player_id, theirs, None, sight)
    ]
    statement = parts[0] if len(parts) == 1 else union_all(*parts)
    return list(await session.execute(statement))


async def public_finished_ids(session: AsyncSession, *, min_plies: int) -> list[int]:
    """The ids of the finished public games of at least `min_plies` plies, oldest first (the
    puzzles' scan of the archive: `checkers puzzles generate --archive`)."""
    found = await session.scalars(
        select(Game.id)
        .where(Game.finished_at.is_not(None), ~Game.is_private, Game.ply_count >= min_plies)
        .order_by(Game.id)
    )
    return list(found)
