"""Prometheus metrics of the whole server, served at `/metrics`.

Every layer records into these module-level objects (the default registry), so they exist once
per process whatever the number of apps. Label values must come from small fixed sets (route
templates, variants, codes), never from user input, or the series multiply without bound.
"""

from __future__ import annotations

import time

from prometheus_client import Counter, Gauge, Histogram
from starlette.routing import BaseRoute, Mount
from starlette.types import ASGIApp, Message, Receive, Scope, Send

HTTP_REQUESTS = Counter(
    "checkers_http_requests_total",
    "HTTP requests answered, by method, route template and status code.",
    ["method", "route", "status"],
)
HTTP_REQUEST_SECONDS = Histogram(
    "checkers_http_request_seconds",
    "Time to answer HTTP requests, by method and route template.",
    ["method", "route"],
)
WS_CONNECTIONS = Gauge("checkers_ws_connections", "Open websocket connections.")
WS_MESSAGES = Counter(
    "checkers_ws_messages_total",
    "Websocket messages received from clients, by type (direction is always in).",
    ["direction", "type"],
)
MOVES_ACCEPTED = Counter("checkers_moves_accepted_total", "Moves played, by variant.", ["variant"])
MOVES_REJECTED = Counter("checkers_moves_rejected_total", "Moves refused, by error code.", ["code"])
GAMES_LIVE = Gauge("checkers_games_live", "Games being played in this process.")
GAMES_LOADED = Counter(
    "checkers_games_loaded_total",
    "Games in progress read from the database into this process's copy (after a restart, or a "
    "game this process did not see start); a game started on another process is served from "
    "its game_started event instead.",
)
GAMES_FINISHED = Counter(
    "checkers_games_finished_total",
    "Games finished, by variant and termination.",
    ["variant", "termination"],
)
EVENT_LOG_READS = Counter(
    "checkers_event_log_reads_total",
    "Reads of a table's event log for events this process missed: a ring lost, or later than "
    "the wait for it.",
)
LOGINS = Counter(
    "checkers_logins_total",
    "Log-in attempts, by outcome (ok, bad_credentials, banned, throttled, guest, registered).",
    ["outcome"],
)
MAIL_GIVEN_UP = Counter(
    "checkers_mail_given_up_total",
    "Mails the worker gave up, by kind (confirm, your_move, time_alarm): one that could not be "
    "built (an address that is not plain), or one tried MAIL_MAX_ATTEMPTS times. Each is kept "
    "in the outbox with its last_error (`failed_at` set) for 7 days.",
    ["kind"],
)

UNMATCHED_ROUTE = "<unmatched>"


def route_template(route: BaseRoute | None) -> str:
    """The route's path pattern; for a mount (static files) its prefix and `{path}`."""
    path = getattr(route, "path", None)
    if path is None:
        return UNMATCHED_ROUTE
    if isinstance(route, Mount):
        return f"{path}/{{path}}"
    return str(path)


class HttpMetricsMiddleware:
    """Counts and times HTTP requests per route template (`/api/games/{game_id}`, not the path)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        start = time.perf_counter()
        status = 500

        async def send_with_status(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
            await send(message)

        try:
            await self.app(scope, receive, send_with_status)
        finally:
            template = route_template(scope.get("route"))
            method = scope["method"]
            HTTP_REQUESTS.labels(method, template, str(status)).inc()
            HTTP_REQUEST_SECONDS.labels(method, template).observe(time.perf_counter() - start)
