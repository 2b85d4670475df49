"""Dependencies of the REST routes, as `Annotated` aliases: `SessionDep`, `CurrentUser`…

They take an `HTTPConnection`, so the session and settings ones also work in websocket routes.
A bearer token that is sent but not valid is refused (401) even where login is optional: the
client should learn that its token expired rather than silently play as nobody.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass
from typing import Annotated, Any, Protocol

from fastapi import Depends
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from sqlalchemy.ext.asyncio import AsyncSession
from starlette.requests import HTTPConnection

from app.accounts.service import user_for_token
from app.api.common.errors import ApiError
from app.config import Settings
from app.db.models import User
from app.errors import Code
from app.live.heartbeat import Heartbeat
from app.live.liveplay import LivePlay
from app.live.move_rate import MoveRate
from app.play.players import PlayerRef

bearer = HTTPBearer(
    auto_error=False, description="The token from /api/auth/login, register or guest."
)


async def get_session(conn: HTTPConnection) -> AsyncIterator[AsyncSession]:
    async with conn.app.state.db.session() as session:
        yield session


def get_app_settings(conn: HTTPConnection) -> Settings:
    settings: Settings = conn.app.state.settings
    return settings


SessionDep = Annotated[AsyncSession, Depends(get_session)]
SettingsDep = Annotated[Settings, Depends(get_app_settings)]
BearerDep = Annotated[HTTPAuthorizationCredentials | None, Depends(bearer)]


async def get_archive_session(
    conn: HTTPConnection, session: SessionDep
) -> AsyncIterator[AsyncSession]:
    """A session on the archive's database (ARCHIVE_DATABASE_URL, a read replica, if set), for
    reads that may lag the main database by a replica's delay. Without a replica it is the
    request's one session: a second would wait for the first's lock on SQLite."""
    if conn.app.state.archive_db is conn.app.state.db:
        yield session
        return
    async with conn.app.state.archive_db.session() as archive_session:
        yield archive_session


ArchiveSessionDep = Annotated[AsyncSession, Depends(get_archive_session)]


def unauthorized(message: str) -> ApiError:
    return ApiError(Code.UNAUTHORIZED, message, headers={"WWW-Authenticate": "Bearer"})


async def get_optional_user(
    conn: HTTPConnection, session: SessionDep, credentials: BearerDep
) -> User | None:
    if credentials is None:
        if "authorization" in conn.headers:
            raise unauthorized("the Authorization header must be 'Bearer <token>'")
        return None
    user = await user_for_token(session, credentials.credentials)
    if user is None:
        raise unauthorized("the token is unknown or expired, or the account is banned")
    return user


async def get_current_user(user: Annotated[User | None, Depends(get_optional_user)]) -> User:
    if user is None:
        raise unauthorized("log in first: send 'Authorization: Bearer <token>'")
    return user


async def get_admin_user(user: Annotated[User, Depends(get_current_user)]) -> User:
    if user.role != "admin":
        raise ApiError(Code.FORBIDDEN, "only administrators may do this")
    return user


OptionalUser = Annotated[User | None, Depends(get_optional_user)]
CurrentUser = Annotated[User, Depends(get_current_user)]
AdminUser = Annotated[User, Depends(get_admin_user)]


@dataclass(frozen=True, slots=True)
class Caller:
    """The signed-in user, read once."""

    id: int
    name: str
    is_bot: bool

    @property
    def player(self) -> PlayerRef:
        return PlayerRef(self.id, self.name)


async def get_caller(user: CurrentUser, session: SessionDep) -> Caller:
    """The signed-in user, with the request's session given back at once: for routes whose
    services open sessions of their own (live play) or that stream for long. On SQLite every
    transaction takes the write lock, which those sessions would otherwise wait for."""
    caller = Caller(user.id, user.name, user.is_bot)
    await session.close()
    return caller


CallerDep = Annotated[Caller, Depends(get_caller)]


# --- what the live-play lifespan part serves, for the REST face ------------------------------


def get_live(conn: HTTPConnection) -> LivePlay:
    live: LivePlay = conn.app.state.live
    return live


def get_beats(conn: HTTPConnection) -> Heartbeat:
    beats: Heartbeat = conn.app.state.beats
    return beats


def get_move_rate(conn: HTTPConnection) -> MoveRate:
    return get_live(conn).moves


class SocketCounts(Protocol):
    """This process's long-lived connections (websockets and event streams) as `/healthz`
    reports them, and their caps (the websocket face's gate, `app.realtime.limits`)."""

    @property
    def open(self) -> int: ...

    @property
    def max_connections(self) -> int: ...

    @property
    def open_files(self) -> int: ...

    def enter(self, host: str) -> str | None: ...

    def leave(self, host: str) -> None: ...

    def enter_user(self, user_id: int) -> str | None: ...

    def leave_user(self, user_id: int) -> None: ...


def get_socket_counts(conn: HTTPConnection) -> SocketCounts:
    gate: SocketCounts = conn.app.state.ws_gate
    return gate


class Spectators(Protocol):
    """How many people watch a table without a seat through this process (the websocket
    face counts them; a figure only this process knows, kept out of anything stored)."""

    def spectators(self, table: Mapping[str, Any]) -> int: ...


def get_spectators(conn: HTTPConnection) -> Spectators:
    hub: Spectators = conn.app.state.hub
    return hub


LiveDep = Annotated[LivePlay, Depends(get_live)]
BeatsDep = Annotated[Heartbeat, Depends(get_beats)]
MoveRateDep = Annotated[MoveRate, Depends(get_move_rate)]
SocketCountsDep = Annotated[SocketCounts, Depends(get_socket_counts)]
SpectatorsDep = Annotated[Spectators, Depends(get_spectators)]
