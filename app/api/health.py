"""Operational endpoints: `/healthz` for orchestrators, `/metrics` for Prometheus."""

from __future__ import annotations

import asyncio
import logging
from typing import Literal

from fastapi import APIRouter, Request, Response
from fastapi.responses import JSONResponse
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest
from pydantic import BaseModel
from sqlalchemy import text

from app.broker import Broker
from app.db.engine import Database

logger = logging.getLogger(__name__)

router = APIRouter(tags=["operations"])

CHECK_TIMEOUT_SECONDS = 3.0

Status = Literal["ok", "down"]


class Health(BaseModel):
    """`status` is ok only if every dependency answered."""

    status: Status
    database: Status
    broker: Status


async def database_ok(db: Database) -> bool:
    try:
        async with asyncio.timeout(CHECK_TIMEOUT_SECONDS), db.engine.connect() as conn:
            await conn.execute(text("SELECT 1"))
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
async def healthz(request: Request) -> JSONResponse:
    """200 when the database answers `SELECT 1` and the broker answers a ping, else 503."""
    database, broker = await asyncio.gather(
        database_ok(request.app.state.db), broker_ok(request.app.state.broker)
    )
    body = Health(
        status="ok" if database and broker else "down",
        database="ok" if database else "down",
        broker="ok" if broker else "down",
    )
    return JSONResponse(body.model_dump(), status_code=200 if body.status == "ok" else 503)


@router.get("/metrics", response_class=Response, include_in_schema=False)
async def metrics() -> Response:
    return Response(generate_latest(), media_type=CONTENT_TYPE_LATEST)
