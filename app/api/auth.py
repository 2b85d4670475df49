"""Accounts over REST: register, log in, log out, guest sessions, and who am I.

Every endpoint that opens a session answers with a `TokenPublic`: the bearer token to send as
`Authorization: Bearer <token>` on REST calls, and offered as the subprotocol `token.<token>`
to the websocket (docs/protocol.md, "Connecting").
"""

from __future__ import annotations

from fastapi import APIRouter, Request, Response, status

from app.accounts import service as accounts
from app.accounts import sessions
from app.accounts.service import Login
from app.api.common.deps import BearerDep, CurrentUser, SessionDep, SettingsDep
from app.api.common.errors import ErrorBody
from app.api.schemas.users import Credentials, TokenPublic, UserPublic

router = APIRouter(prefix="/api/auth", tags=["auth"])

THROTTLED = {"model": ErrorBody, "description": "too many attempts; see Retry-After"}


def client_address(request: Request) -> str:
    """The client's address as uvicorn gives it: from X-Forwarded-For only when the request came
    through a proxy of `forwarded_allow_ips`, so clients cannot choose the address they count
    against."""
    return request.client.host if request.client is not None else "unknown"


def _token(login: Login) -> TokenPublic:
    return TokenPublic(
        access_token=login.token,
        expires_at=login.expires_at,
        user=UserPublic.model_validate(login.user),
    )


@router.post(
    "/register",
    status_code=status.HTTP_201_CREATED,
    responses={409: {"model": ErrorBody}, 422: {"model": ErrorBody}, 429: THROTTLED},
)
async def register(
    body: Credentials, request: Request, session: SessionDep, settings: SettingsDep
) -> TokenPublic:
    """Create an account (name: 3-20 of `A-Z a-z 0-9 _ -`, not reserved; password: 8+
    characters, not common); at most `registrations_per_address` per
    `accounts_window_seconds` from one address."""
    address = client_address(request)
    return _token(await accounts.register(session, settings, body.name, body.password, address))


@router.post(
    "/login",
    responses={
        401: {"model": ErrorBody},
        403: {"model": ErrorBody, "description": "banned; the message gives the reason"},
        429: THROTTLED,
    },
)
async def login(
    body: Credentials, request: Request, session: SessionDep, settings: SettingsDep
) -> TokenPublic:
    address = client_address(request)
    return _token(await accounts.log_in(session, settings, body.name, body.password, address))


@router.post("/guest", status_code=status.HTTP_201_CREATED, responses={429: THROTTLED})
async def guest(request: Request, session: SessionDep, settings: SettingsDep) -> TokenPublic:
    """Play without registering, under a generated name such as `guest-7f3a2c`; at most
    `guests_per_address` per `accounts_window_seconds` from one address."""
    return _token(await accounts.start_guest(session, settings, client_address(request)))


@router.post(
    "/logout", status_code=status.HTTP_204_NO_CONTENT, responses={401: {"model": ErrorBody}}
)
async def logout(
    request: Request, _user: CurrentUser, credentials: BearerDep, session: SessionDep
) -> Response:
    """Revoke the token this request was made with; websockets opened with it close (1008)."""
    assert credentials is not None  # CurrentUser has checked it
    await accounts.log_out(session, credentials.credentials)
    await sessions.logged_out(request.app.state.live, accounts.hash_token(credentials.credentials))
    return Response(status_code=status.HTTP_204_NO_CONTENT)


@router.get("/me", responses={401: {"model": ErrorBody}})
async def me(user: CurrentUser) -> UserPublic:
    return UserPublic.model_validate(user)
