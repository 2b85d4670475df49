"""The one family of refusals the services raise, whichever face (REST or websocket) serves
the request.

Every refusal is `ServiceError(code, message, *, http_status=…, retry_after=…)`: `code` is the
stable, documented error code a client sees, `message` a sentence for people. Each service
derives its family from it (`PlayError`, `AdminError`, `ArchiveError`, `AccountError`) with the
HTTP status its refusals usually have as the class default; a named subclass (`NotFound`,
`NameTaken`, …) only fills in the arguments. Each face translates the family in one place:
the REST exception handler in `app.api.errors`, the message loop in `app.realtime.endpoint`.
The rules' own `RulesError` stays in the pure rules package; a service that calls the rules
turns it into its family where it catches it.
"""

from __future__ import annotations


class ServiceError(Exception):
    """A refused request: its stable `code`, a `message`, and how the REST face answers it."""

    http_status: int = 400
    """The REST status: a family's default, or the one given when raised."""

    def __init__(
        self,
        code: str,
        message: str,
        *,
        http_status: int | None = None,
        retry_after: int | None = None,
    ) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        if http_status is not None:
            self.http_status = http_status
        self.retry_after = retry_after
        """Seconds after which the same request may succeed (sent as `Retry-After`)."""
