"""Operational endpoints: `/healthz` for orchestrators, `/metrics` for Prometheus."""

from __future__ import annotations

import asyncio
import ipaddress
import logging
from typing import Literal

from fastapi import APIRouter, Request, Response
from fastapi.responses import JSONResponse
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest
from pydantic import BaseModel

from app.api.deps import SocketCountsDep
from app.api.errors import ApiError
from app.broker import Broker
from app.config import networks
from app.db.engine import Database

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
    """200 when the database answers `SELECT 1` and the broker answers a ping, else 503."""
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


@router.get("/metrics", response_class=Response, include_in_schema=False)
async def metrics(request: Request) -> Response:
    """Prometheus text, for the addresses METRICS_ALLOW lists (403 `forbidden` for others):
    the figures (load, logins, errors) help whoever plans an attack."""
    if not _may_scrape(request):
        raise ApiError(403, "forbidden", "metrics are not served to this address (METRICS_ALLOW)")
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
