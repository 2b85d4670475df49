"""The ASGI application: `create_app()` wires settings, storage, the broker and the routers."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from pathlib import Path
from typing import Any

from fastapi import FastAPI
from fastapi.responses import Response
from fastapi.staticfiles import StaticFiles
from starlette.types import ASGIApp, Receive, Scope, Send

from app import __version__
from app import lifespan as parts
from app.api import (
    account,
    admin,
    admin_users,
    ai,
    analysis,
    auth,
    bot,
    challenges,
    correspondence,
    games,
    health,
    leaderboard,
    notifications,
    players,
    pools,
    puzzles,
    rooms,
    tournaments,
)
from app.api.common.errors import install_error_handlers
from app.broker import create_broker
from app.clock import Clock
from app.computer.service import AIPlayers
from app.config import Settings, get_settings
from app.db.engine import Database
from app.headers import SecurityHeadersMiddleware
from app.lifespan import LifespanPart, lifespan_part
from app.metrics import HttpMetricsMiddleware
from app.realtime import endpoint as realtime
from app.realtime import limits
from app.realtime.live_play import run_live_play
from app.realtime.uvicorn_log import quiet_uvicorn
from app.redaction import install as redact_tokens_in_logs

WEB_DIR = Path(__file__).parent / "web"


class WebFiles(StaticFiles):
    """The browser client. `no-cache` makes browsers revalidate (a cheap 304 by ETag), so an
    upgraded server never runs with stale modules in a visitor's cache."""

    def file_response(self, *args: Any, **kwargs: Any) -> Response:
        response = super().file_response(*args, **kwargs)
        response.headers["Cache-Control"] = "no-cache"
        return response


@lifespan_part(needs=["settings"], provides=["db", "archive_db"])
@asynccontextmanager
async def open_database(app: FastAPI) -> AsyncIterator[None]:
    """`app.state.db`, and `app.state.archive_db` for the archive's reads: the same database
    unless ARCHIVE_DATABASE_URL names a replica."""
    settings: Settings = app.state.settings
    pool = {
        "pool_size": settings.database_pool_size,
        "max_overflow": settings.database_max_overflow,
    }
    app.state.db = Database(settings.database_url, **pool)
    app.state.archive_db = app.state.db
    if settings.archive_database_url:
        app.state.archive_db = Database(settings.archive_database_url, **pool)
    try:
        yield
    finally:
        if app.state.archive_db is not app.state.db:
            await app.state.archive_db.dispose()
        await app.state.db.dispose()


@lifespan_part(needs=["settings"], provides=["broker"])
@asynccontextmanager
async def open_broker(app: FastAPI) -> AsyncIterator[None]:
    app.state.broker = create_broker(app.state.settings.broker_url)
    await app.state.broker.connect()
    try:
        yield
    finally:
        await app.state.broker.disconnect()


@lifespan_part(needs=["settings", "live"], provides=["ai"])
@asynccontextmanager
async def run_ai(app: FastAPI) -> AsyncIterator[None]:
    """`app.state.ai`: the computer opponent's driver and its pool of search processes (started
    by the first game against the computer, or here with AI_WORKERS_AT_START)."""
    settings: Settings = app.state.settings
    app.state.ai = AIPlayers(
        app.state.live, settings.ai_workers, at_start=settings.ai_workers_at_start
    )
    await app.state.ai.start()
    try:
        yield
    finally:
        await app.state.ai.stop()


# What runs for the life of the server. Each part declares what it needs on `app.state` and
# what it puts there, and `app.lifespan.enter` orders them by that (left in reverse order), so
# the order here does not matter: add a component's own part anywhere.
LIFESPAN_PARTS: tuple[LifespanPart, ...] = (
    open_database,
    open_broker,
    run_live_play,
    run_ai,
    quiet_uvicorn,
)


@asynccontextmanager
async def lifespan(app: FastAPI) -> AsyncIterator[None]:
    async with AsyncExitStack() as stack:
        await parts.enter(stack, app, LIFESPAN_PARTS)
        yield


class CheckersApp(FastAPI):
    """The app, with `/ws` dispatched straight to its handler (behind the connection caps).

    An idle websocket keeps its handler's coroutine suspended for as long as it is open, and
    with it every frame of the stack above: through the middleware, the router and FastAPI's
    route (three exit stacks and a copy of the scope) that was some twenty frames and several
    kilobytes per socket, for nothing — none of it applies to a websocket (HTTP metrics, security
    headers, request bodies, dependency injection). See docs/benchmarks.md, idle websockets.
    """

    live_socket: ASGIApp | None = None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "websocket" and scope["path"] == "/ws" and self.live_socket:
            scope["app"] = self
            await self.live_socket(scope, receive, send)
            return
        await super().__call__(scope, receive, send)


def create_app(settings: Settings | None = None, clock: Clock | None = None) -> CheckersApp:
    """Build the app; `settings` defaults to the environment's (tests pass their own), `clock`
    to real time (tests pass a `FakeClock` to move time on)."""
    settings = settings or get_settings()
    docs = settings.api_docs_served  # API_DOCS: /docs, /redoc and /openapi.json, or none
    app = CheckersApp(
        title="Checkers server",
        version=__version__,
        summary="English draughts and American pool checkers, live over websockets.",
        lifespan=lifespan,
        docs_url="/docs" if docs else None,
        redoc_url="/redoc" if docs else None,
        openapi_url="/openapi.json" if docs else None,
    )
    app.state.settings = settings
    app.state.clock = clock or Clock()
    redact_tokens_in_logs()  # however the app is served (`checkers serve`, uvicorn, tests)
    install_error_handlers(app)
    app.add_middleware(HttpMetricsMiddleware)
    app.add_middleware(SecurityHeadersMiddleware)
    open_files = limits.raise_open_file_limit()
    app.state.ws_gate = limits.ConnectionGate(
        limits.max_connections(settings.ws_max_connections, open_files),
        settings.ws_max_per_ip,
        open_files,
        settings.ws_max_per_user,
    )
    app.live_socket = limits.ConnectionCapMiddleware(realtime.serve, gate=app.state.ws_gate)

    # Routers: one include line per module of app/api (`/ws` is `live_socket`, above).
    app.include_router(health.router)
    app.include_router(auth.router)
    app.include_router(games.router)
    app.include_router(players.router)
    app.include_router(leaderboard.router)
    app.include_router(admin.router)
    app.include_router(admin_users.router)
    app.include_router(rooms.router)
    app.include_router(ai.router)
    app.include_router(challenges.router)
    app.include_router(bot.router)
    app.include_router(account.router)
    app.include_router(pools.router)
    app.include_router(tournaments.router)
    app.include_router(analysis.router)
    app.include_router(puzzles.router)
    app.include_router(notifications.router)
    app.include_router(correspondence.router)

    # The browser client, last: a mount at "/" answers every path no route above has claimed.
    app.mount("/", WebFiles(directory=WEB_DIR, html=True), name="web")
    return app
