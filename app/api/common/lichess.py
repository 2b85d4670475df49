"""What the lichess-shaped routes (challenges, the bot API) share to take requests as lichess
does: a body sent as JSON or form-encoded, read into a model, and bad input answered as
lichess answers it, 400 with `{"error": …}` (ours: `{"error": code, "message": text}`), where
the rest of the REST face answers 422. Path parameters keep the face's 422.

The models are strict, as every REST body is: in JSON a boolean is `true` or `false` and a
number a number. A form's fields are text by nature, so there (and only there) `FormBool` reads
exactly `true` and `false`, as lichess does, and `FORM_NUMBER` decimal digits; any other text
(`yes`, `3.0`) is left for the strict type to refuse."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Annotated, Any, TypeVar
from urllib.parse import parse_qsl

from fastapi import Request
from pydantic import BaseModel, BeforeValidator, ValidationError, ValidationInfo

from app.api.common.errors import ApiError
from app.errors import Code

M = TypeVar("M", bound=BaseModel)
FORM = "application/x-www-form-urlencoded"
MAX_BODY_BYTES = 8192
IN_FORM = "form"  # the validation context's key: the body was form-encoded


def _from_form(spelling: str, convert: Callable[[str], Any]) -> BeforeValidator:
    """A form field's text written as `spelling`, converted; anything else left as it is."""
    pattern = re.compile(spelling)

    def read(value: Any, info: ValidationInfo) -> Any:
        in_form = bool(info.context and info.context.get(IN_FORM))
        if in_form and isinstance(value, str) and pattern.fullmatch(value):
            return convert(value)
        return value

    return BeforeValidator(read)


FormBool = Annotated[bool, _from_form("true|false", lambda text: text == "true")]
FORM_NUMBER = _from_form("-?(0|[1-9][0-9]*)", int)  # after the type in `Annotated[…]`


def bad_request(message: str) -> ApiError:
    return ApiError(Code.BAD_REQUEST, message)


def _is_form(request: Request) -> bool:
    return request.headers.get("content-type", "").split(";")[0].strip().lower() == FORM


async def fields(request: Request) -> dict[str, Any]:
    """The request's body as fields: form-encoded (as lichess's clients often send it) or a
    JSON object; nothing is no field."""
    body = await request.body()
    if len(body) > MAX_BODY_BYTES:
        raise ApiError(Code.TOO_LARGE, f"the body is at most {MAX_BODY_BYTES} bytes")
    if not body.strip():
        return {}
    try:
        if _is_form(request):
            return dict(parse_qsl(body.decode(), keep_blank_values=True, strict_parsing=True))
        found = json.loads(body)
    except (ValueError, UnicodeDecodeError):
        raise bad_request("the body is neither a JSON object nor form-encoded fields") from None
    if found is None:
        return {}
    if not isinstance(found, dict):
        raise bad_request("the body must be a JSON object")
    return found


async def read(request: Request, model: type[M]) -> M:
    """The body read into `model` (a form's text as `FormBool` and `FORM_NUMBER` say); 400
    `bad_request` naming the first field refused."""
    try:
        found = await fields(request)
        return model.model_validate(found, context={IN_FORM: _is_form(request)})
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first["loc"]) or "body"
        raise bad_request(f"{where}: {first['msg']}") from None


def body_schema(model: type[BaseModel]) -> dict[str, Any]:
    """The OpenAPI `requestBody` of a route that reads `model` with `read`."""
    schema = model.model_json_schema(ref_template="#/components/schemas/{model}")
    schema.pop("$defs", None)  # the models it refers to are the app's components already
    return {
        "requestBody": {
            "required": False,
            "content": {"application/json": {"schema": schema}, FORM: {"schema": schema}},
        }
    }
