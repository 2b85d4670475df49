"""One JSON error shape for the whole REST face: `{"error": CODE, "message": TEXT}`.

Services raise `app.errors.ServiceError` and routes `ApiError(code, message)`
for refusals of their own; `install_error_handlers` renders both, FastAPI's validation errors
(as 422 `bad_request` with `details`), plain HTTP errors and unexpected failures (500
`server_error`) the same way, so a client never sees a bare `{"detail": ...}` or a plain-text
500 page.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from pydantic import BaseModel
from starlette.exceptions import HTTPException as StarletteHTTPException

from app.errors import Code, ServiceError


class ErrorBody(BaseModel):
    """The body of every error response."""

    error: str
    message: str
    details: list[dict[str, Any]] | None = None


class ApiError(ServiceError):
    """A refusal of the REST face's own (a header it cannot serve, a missing bearer token)."""

    def __init__(self, code: Code, message: str, headers: dict[str, str] | None = None) -> None:
        super().__init__(code, message)
        self.headers = headers


# The codes of FastAPI's and Starlette's own HTTP errors (an unknown route, a wrong method).
_HTTP_CODES = {
    400: "bad_request",
    401: "unauthorized",
    403: "forbidden",
    404: "not_found",
    405: "method_not_allowed",
    406: "not_acceptable",
    409: "conflict",
    413: "too_large",
    422: "bad_request",
    429: "rate_limited",
}


def error_response(
    status_code: int,
    code: str,
    message: str,
    details: list[dict[str, Any]] | None = None,
    headers: Mapping[str, str] | None = None,
    extra: Mapping[str, Any] | None = None,
) -> JSONResponse:
    body = ErrorBody(error=code, message=message, details=details)
    return JSONResponse(
        {**(extra or {}), **body.model_dump(exclude_none=True)},
        status_code=status_code,
        headers=headers,
    )


def install_error_handlers(app: FastAPI) -> None:
    @app.exception_handler(ServiceError)
    async def _service_error(_request: Request, exc: ServiceError) -> JSONResponse:
        headers = exc.headers if isinstance(exc, ApiError) else None
        if exc.retry_after is not None:
            headers = {"Retry-After": str(exc.retry_after)}
        response = error_response(
            exc.code.http_status, exc.code.text, exc.message, headers=headers, extra=exc.extra
        )
        return response

    @app.exception_handler(RequestValidationError)
    async def _validation_error(_request: Request, exc: RequestValidationError) -> JSONResponse:
        details = [
            {"loc": list(err.get("loc", ())), "msg": err.get("msg", "")} for err in exc.errors()
        ]
        first = details[0] if details else {"loc": [], "msg": "invalid request"}
        where = ".".join(str(p) for p in first["loc"])
        code = Code.UNPROCESSABLE
        return error_response(code.http_status, code.text, f"{where}: {first['msg']}", details)

    @app.exception_handler(Exception)
    async def _unexpected(_request: Request, _exc: Exception) -> JSONResponse:
        # A bug, not a bad request: the server still logs it with its traceback.
        code = Code.SERVER_ERROR
        return error_response(
            code.http_status, code.text, "the server failed to handle this request"
        )

    @app.exception_handler(StarletteHTTPException)
    async def _http_error(_request: Request, exc: StarletteHTTPException) -> JSONResponse:
        code = _HTTP_CODES.get(exc.status_code, "error")
        return error_response(exc.status_code, code, str(exc.detail), headers=exc.headers)
