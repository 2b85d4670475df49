"""Operational endpoints: `/livez` (the process answers), `/readyz` (it can serve games: what a
load balancer checks), `/healthz` (every dependency, for monitoring), `/metrics` for
Prometheus.

The broker only carries events between processes: without it each process still serves its
games (a move is stored and delivered to its own sockets; the others catch up from the event
log once it is back), so a broker outage makes a process degraded, not unready. Checking
`/healthz` from a balancer would take every process out of rotation at once while the broker
is down: a site outage for a fault the processes ride out (docs/deploy.md).
"""

from __future__ import annotations

import asyncio
import ipaddress
import logging
from typing import Literal

from fastapi import APIRouter, Request, Response
from fastapi.responses import JSONResponse
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest
from pydantic import BaseModel

from app.api.common.deps import SocketCountsDep
from app.api.common.errors import ApiError
from app.broker import Broker
from app.config import networks
from app.db.engine import Database
from app.errors import Code

logger = logging.getLogger(__name__)

router = APIRouter(tags=["operations"])

CHECK_TIMEOUT_SECONDS = 3.0

Status = Literal["ok", "down"]


class Websockets(BaseModel):
    """This process's sockets against its cap: `open` near `limit` means new ones are refused."""

    open: int
    limit: int  # WS_MAX_CONNECTIONS, or derived from the open-file limit
    open_file_limit: int  # RLIMIT_NOFILE after raising it to the hard limit


class Health(BaseModel):
    """`status` is ok only if every dependency answered."""

    status: Status
    database: Status
    broker: Status
    websockets: Websockets


async def database_ok(db: Database) -> bool:
    try:
        async with asyncio.timeout(CHECK_TIMEOUT_SECONDS):
            await db.ping()
    except Exception as exc:  # any failure means "down"; the reason goes to the log
        logger.warning("health check: database down: %s", exc)
        return False
    return True


async def broker_ok(broker: Broker) -> bool:
    try:
        async with asyncio.timeout(CHECK_TIMEOUT_SECONDS):
            return await broker.ping()
    except TimeoutError:
        return False


@router.get(
    "/healthz",
    response_model=Health,
    responses={503: {"model": Health, "description": "a dependency is down"}},
)
async def healthz(request: Request, gate: SocketCountsDep) -> JSONResponse:
    """200 when the database answers `SELECT 1` and the broker answers a ping, else 503: for
    monitoring, not for a load balancer (use `/readyz`)."""
    database, broker = await asyncio.gather(
        database_ok(request.app.state.db), broker_ok(request.app.state.broker)
    )
    body = Health(
        status="ok" if database and broker else "down",
        database="ok" if database else "down",
        broker="ok" if broker else "down",
        websockets=Websockets(
            open=gate.open, limit=gate.max_connections, open_file_limit=gate.open_files
        ),
    )
    return JSONResponse(body.model_dump(), status_code=200 if body.status == "ok" else 503)


class Liveness(BaseModel):
    status: Literal["ok"]


@router.get("/livez", response_model=Liveness)
async def livez() -> Liveness:
    """200 while the process answers at all (its event loop runs): for an orchestrator that
    restarts a hung process. Checks nothing else."""
    return Liveness(status="ok")


class Readiness(BaseModel):
    """`status` is ok while the process can serve games (its database answers); `degraded`
    names what is down without stopping it (the broker: events reach other processes' sockets
    late, from the event log)."""

    status: Status
    database: Status
    broker: Status
    degraded: list[str]


@router.get(
    "/readyz",
    response_model=Readiness,
    responses={503: {"model": Readiness, "description": "the database is down"}},
)
async def readyz(request: Request) -> JSONResponse:
    """200 while the database answers, whatever the broker does (503 otherwise): the check
    for a load balancer (`deploy/haproxy.cfg`)."""
    database, broker = await asyncio.gather(
        database_ok(request.app.state.db), broker_ok(request.app.state.broker)
    )
    body = Readiness(
        status="ok" if database else "down",
        database="ok" if database else "down",
        broker="ok" if broker else "down",
        degraded=[] if broker else ["broker"],
    )
    return JSONResponse(body.model_dump(), status_code=200 if database else 503)


@router.get("/metrics", response_class=Response, include_in_schema=False)
async def metrics(request: Request) -> Response:
    """Prometheus text, for the addresses METRICS_ALLOW lists (403 `forbidden` for others):
    the figures (load, logins, errors) help whoever plans an attack."""
    if not _may_scrape(request):
        raise ApiError(Code.FORBIDDEN, "metrics are not served to this address (METRICS_ALLOW)")
    return Response(generate_latest(), media_type=CONTENT_TYPE_LATEST)


def _may_scrape(request: Request) -> bool:
    allowed = networks(request.app.state.settings.metrics_allow)
    if allowed is None:
        return True
    if request.client is None:
        return False
    try:
        address = ipaddress.ip_address(request.client.host)
    except ValueError:  # not an address (an in-process test client's "testclient")
        return False
    return any(address in network for network in allowed)
