"""The administration API, `/api/admin/...`: rooms, tables, games, users, audit log, status.

Every route sits behind the router-level `AdminUser` check (401 without a valid token, 403 for
anyone but an administrator), so a route added here cannot forget it. Actions answer with the
audit entry they wrote; the use cases are in `app.moderation.admin`.
"""

from __future__ import annotations

import asyncio
from datetime import datetime
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Depends, Path, Query, Request, status
from sqlalchemy.ext.asyncio import AsyncSession

from app import __version__
from app.api.common.deps import (
    AdminUser,
    BeatsDep,
    LiveDep,
    MoveRateDep,
    SessionDep,
    Spectators,
    SpectatorsDep,
    get_admin_user,
)
from app.api.common.errors import ApiError, ErrorBody
from app.api.common.params import (
    DIGITS,
    ISO_DATETIME,
    MAX_ID,
    NAME_PATTERN,
    GameId,
)
from app.api.health import broker_ok, database_ok
from app.api.schemas.admin import (
    AdjudicateRequest,
    AdminRoomPublic,
    AdminTablePublic,
    AuditEntryPublic,
    AuditPage,
    CloseRequest,
    ReasonRequest,
    RoomCreate,
    RoomsList,
    RoomUpdate,
    StatusPublic,
    TablesList,
)
from app.db.models import AuditEntry, Room, User
from app.errors import Code
from app.moderation import admin
from app.moderation import rooms as admin_rooms
from app.moderation.admin import AuditFilter, AuditRecord
from app.moderation.rooms import RoomSettings
from app.notify import mailer
from app.play.clocks import clock_payload
from app.timeutil import as_utc


def admin_router() -> APIRouter:
    """A router of administrators' routes: under `/api/admin`, for administrators only."""
    return APIRouter(
        prefix="/api/admin",
        tags=["admin"],
        dependencies=[Depends(get_admin_user)],
        responses={
            401: {"model": ErrorBody, "description": "No valid token (or the account is banned)."},
            403: {"model": ErrorBody, "description": "The account is not an administrator."},
            422: {"model": ErrorBody, "description": "A malformed body or parameter."},
        },
    )


router = admin_router()

NOT_FOUND: dict[int | str, dict[str, Any]] = {
    404: {"model": ErrorBody, "description": "No such room, table, game or user."}
}
REFUSED: dict[int | str, dict[str, Any]] = {
    409: {
        "model": ErrorBody,
        "description": "Not possible in the target's state: `room_closed`, `table_closed`, "
        "`game_over`, `slug_taken`, `already_banned`, `not_banned`, `own_account`, "
        "`ai_account`.",
    },
    **NOT_FOUND,
}

RoomId = Annotated[int, Path(ge=1, le=MAX_ID, description="Room id."), DIGITS]
TableId = Annotated[int, Path(ge=1, le=MAX_ID, description="Table id."), DIGITS]
UserId = Annotated[int, Path(ge=1, le=MAX_ID, description="User id."), DIGITS]


def _entry(record: AuditRecord) -> AuditEntryPublic:
    entry = record.entry
    return AuditEntryPublic.model_validate(
        {
            "id": entry.id,
            "at": entry.at,
            "actor_id": entry.actor_id,
            "actor": record.actor,
            "action": entry.action,
            "target_type": entry.target_type,
            "target_id": entry.target_id,
            "target_name": record.target,
            "details": entry.details,
            "note": entry.note,
        }
    )


async def answer(session: AsyncSession, entry: AuditEntry, actor: User) -> AuditEntryPublic:
    """What an action answers: the audit entry it wrote, as the log shows it."""
    return _entry(await admin.audit_record(session, entry, actor))


def _counted(tables: list[dict[str, Any]], watching: Spectators) -> list[dict[str, Any]]:
    """The tables with the people watching them through this process."""
    return [table | {"spectators": watching.spectators(table)} for table in tables]


def _room(room: Room, tables: list[dict[str, Any]]) -> AdminRoomPublic:
    clock = clock_payload(room.clock_base_s, room.clock_increment_s)
    return AdminRoomPublic.model_validate(
        {
            "id": room.id,
            "slug": room.slug,
            "name": room.name,
            "variant": room.variant,
            "clock": clock,
            "table_limit": room.table_limit,
            "open": room.is_open,
            "listed": room.is_listed,
            "created_at": room.created_at,
            "closed_at": room.closed_at,
            "tables": len(tables),
            "players": len({p["id"] for t in tables for p in t["players"]}),
            "spectators": sum(t["spectators"] for t in tables),
        }
    )


# --- rooms ---------------------------------------------------------------------------------


@router.get("/rooms", response_model=RoomsList)
async def list_rooms(session: SessionDep, live: LiveDep, watching: SpectatorsDep) -> RoomsList:
    """Every room, hidden and closed ones too, with its open tables, players and spectators."""
    states = await admin.list_rooms(session, live)
    rooms = [_room(state.room, _counted(state.tables, watching)) for state in states]
    return RoomsList(data=rooms, count=len(rooms))


@router.post(
    "/rooms",
    status_code=status.HTTP_201_CREATED,
    response_model=AdminRoomPublic,
    responses=REFUSED,
)
async def create_room(body: RoomCreate, session: SessionDep, actor: AdminUser) -> AdminRoomPublic:
    """Create a room; if `listed`, lobby snapshots show it from now on."""
    base_s, increment_s = body.clock.seconds() if body.clock else (None, 0)
    settings = RoomSettings(
        name=body.name,
        variant=body.variant,
        clock_base_s=base_s,
        clock_increment_s=increment_s,
        table_limit=body.table_limit,
        is_open=body.open,
        is_listed=body.listed,
    )
    room = await admin_rooms.create_room(session, actor, body.slug, settings, body.reason)
    return _room(room, [])


@router.patch("/rooms/{room_id}", response_model=AdminRoomPublic, responses=NOT_FOUND)
async def update_room(
    room_id: RoomId,
    body: RoomUpdate,
    session: SessionDep,
    live: LiveDep,
    watching: SpectatorsDep,
    actor: AdminUser,
) -> AdminRoomPublic:
    """Rename or configure a room: only the fields sent change, for tables opened from now on.

    `open: false` stops new tables while the games there go on; `open: true` reopens a room,
    even one that was closed. `listed: false` hides it from the lobby.
    """
    sent = body.model_fields_set
    changes: dict[str, Any] = {}
    for field, column in (
        ("name", "name"),
        ("variant", "variant"),
        ("table_limit", "table_limit"),
        ("open", "is_open"),
        ("listed", "is_listed"),
    ):
        if field in sent:
            changes[column] = getattr(body, field)
    if "clock" in sent:
        base_s, increment_s = body.clock.seconds() if body.clock else (None, 0)
        changes["clock_base_s"], changes["clock_increment_s"] = base_s, increment_s
    room = await admin_rooms.update_room(session, actor, room_id, changes, body.reason)
    tables = await admin.live_tables(session, live, room.id)
    return _room(room, _counted(tables, watching))


@router.post("/rooms/{room_id}/close", response_model=AuditEntryPublic, responses=REFUSED)
async def close_room(
    room_id: RoomId, body: CloseRequest, session: SessionDep, live: LiveDep, actor: AdminUser
) -> AuditEntryPublic:
    """Close a room: no new tables; every table closes and its game in progress ends with
    `result` (termination `admin`). Players, spectators and the lobby are told, with the reason.
    Reopen it with `PATCH {"open": true}`."""
    entry = await admin_rooms.close_room(session, live, actor, room_id, body.result, body.reason)
    return await answer(session, entry, actor)


# --- tables and games ----------------------------------------------------------------------


@router.get("/tables", response_model=TablesList, responses=NOT_FOUND)
async def list_tables(
    session: SessionDep,
    live: LiveDep,
    watching: SpectatorsDep,
    room: Annotated[
        int | None,
        Query(ge=1, le=MAX_ID, description="Only this room's tables."),
        DIGITS,
    ] = None,
) -> TablesList:
    """Tables not closed, private ones included (with their invite code), oldest first."""
    found = _counted(await admin.live_tables(session, live, room), watching)
    data = [AdminTablePublic.model_validate(t) for t in found]
    return TablesList(data=data, count=len(data))


@router.post("/tables/{table_id}/close", response_model=AuditEntryPublic, responses=REFUSED)
async def close_table(
    table_id: TableId, body: CloseRequest, session: SessionDep, live: LiveDep, actor: AdminUser
) -> AuditEntryPublic:
    """Close a table; its game in progress ends with `result` (`*`: aborted). Everyone there
    gets `game_ended` and `table_closed` with the reason."""
    entry = await admin.close_table(session, live, actor, table_id, body.result, body.reason)
    return await answer(session, entry, actor)


@router.post("/games/{game_id}/adjudicate", response_model=AuditEntryPublic, responses=REFUSED)
async def adjudicate_game(
    game_id: GameId, body: AdjudicateRequest, session: SessionDep, live: LiveDep, actor: AdminUser
) -> AuditEntryPublic:
    """End a game in progress with the stated result (termination `admin`); the players and
    spectators get `game_ended` with the reason."""
    entry = await admin.end_game(session, live, actor, game_id, body.result, body.reason)
    return await answer(session, entry, actor)


@router.post("/games/{game_id}/abort", response_model=AuditEntryPublic, responses=REFUSED)
async def abort_game(
    game_id: GameId, body: ReasonRequest, session: SessionDep, live: LiveDep, actor: AdminUser
) -> AuditEntryPublic:
    """Abort a game in progress: result `*`, termination `admin`, no winner."""
    entry = await admin.end_game(session, live, actor, game_id, "*", body.reason)
    return await answer(session, entry, actor)


# --- users ---------------------------------------------------------------------------------


# --- fair play ----------------------------------------------------------------------------


# --- audit log and status ------------------------------------------------------------------


def _utc(moment: datetime | None) -> datetime | None:
    """Stored times are UTC (SQLite keeps no zone): compare in UTC; a time without a zone is
    taken as UTC."""
    if moment is None:
        return None
    try:
        return as_utc(moment)
    except OverflowError:  # 0001-01-01T00:00+01:00 is before the first UTC moment
        raise ApiError(Code.UNPROCESSABLE, f"{moment.isoformat()} is out of range") from None


@router.get(
    "/audit",
    response_model=AuditPage,
    responses={400: {"model": ErrorBody, "description": "A bad cursor."}},
)
async def audit_log(
    session: SessionDep,
    actor: Annotated[
        str | None,
        Query(max_length=64, pattern=NAME_PATTERN, description="Administrator's name."),
    ] = None,
    action: Annotated[
        str | None,
        Query(
            max_length=40,
            pattern=NAME_PATTERN,
            description="An action (`user.ban`) or a family (`user.`).",
        ),
    ] = None,
    target_type: Annotated[
        Literal["room", "table", "game", "user", "tournament"] | None, Query()
    ] = None,
    target_id: Annotated[str | None, Query(max_length=64, pattern=NAME_PATTERN)] = None,
    since: Annotated[
        datetime | None, Query(description="At or after (ISO 8601)."), ISO_DATETIME
    ] = None,
    until: Annotated[datetime | None, Query(description="Before (ISO 8601)."), ISO_DATETIME] = None,
    limit: Annotated[int, Query(ge=1, le=200), DIGITS] = 50,
    cursor: Annotated[str | None, Query(max_length=20)] = None,
) -> AuditPage:
    """Who did what to what, when and why; newest first, filtered by every parameter given."""
    flt = AuditFilter(actor, action, target_type, target_id, _utc(since), _utc(until))
    page = await admin.audit_log(session, flt, limit, cursor)
    return AuditPage(data=[_entry(record) for record in page.entries], next_cursor=page.next_cursor)


@router.get("/status", response_model=StatusPublic)
async def server_status(
    request: Request, session: SessionDep, live: LiveDep, beats: BeatsDep, rate: MoveRateDep
) -> StatusPublic:
    """Health of the database and the broker (as `/healthz`), the load of the whole server
    (this process's connections and moves now, the other processes' as of their last beat),
    and its mail: waiting, and given up."""
    app = request.app
    live_games, open_tables = await admin.live_counts(session)
    others, load = await admin.others_load(session, beats.instance, beats.interval)
    # The database check opens a connection of its own: end this session's transaction first
    # (SQLite lets one transaction at a time hold the database).
    await session.commit()
    mail_waiting, mail_given_up = await mailer.backlog(live)
    database, broker = await asyncio.gather(database_ok(app.state.db), broker_ok(app.state.broker))
    here = beats.load()  # this process's connections and users, as its beats write them
    moves, window = rate.last_minute()
    return StatusPublic(
        status="ok" if database and broker else "down",
        database="ok" if database else "down",
        broker="ok" if broker else "down",
        broker_kind="redis" if app.state.settings.redis_url else "memory",
        processes=1 + others,
        connections=here.connections + load.connections,
        connected_users=here.connected_users + load.connected_users,
        live_games=live_games,
        open_tables=open_tables,
        moves_last_minute=moves + load.moves_last_minute,
        moves_window_seconds=round(window, 1),
        mail_waiting=mail_waiting,
        mail_given_up=mail_given_up,
        version=__version__,
    )
