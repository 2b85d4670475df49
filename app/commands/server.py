"""`checkers serve`, `checkers migrate` and `checkers create-admin`: running a server.

All three read the settings from the environment (or `.env`), like the server itself.
"""

from __future__ import annotations

import argparse
import asyncio
import getpass
import importlib.util
import os
import sys
from collections.abc import Coroutine
from typing import Any, TypeVar

T = TypeVar("T")

ADMIN_PASSWORD_ENV = "CHECKERS_ADMIN_PASSWORD"
USAGE_ERROR = 2


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    serve = subparsers.add_parser("serve", help="run the web server")
    serve.add_argument("--host", help="interface to listen on (default: HOST or 127.0.0.1)")
    serve.add_argument("--port", type=int, help="port to listen on (default: PORT or 8000)")
    serve.add_argument("--reload", action="store_true", help="restart when the code changes")
    serve.set_defaults(func=run_serve)

    migrate = subparsers.add_parser(
        "migrate", help="create or upgrade the database schema (DATABASE_URL)"
    )
    migrate.set_defaults(func=run_migrate)

    admin = subparsers.add_parser(
        "create-admin",
        help="make NAME an administrator, creating the account if needed",
        description=(
            f"Promote the account NAME, or create it. A new account's password is read from "
            f"{ADMIN_PASSWORD_ENV}, else asked for twice."
        ),
    )
    admin.add_argument("name", metavar="NAME")
    admin.set_defaults(func=run_create_admin)


def event_loop_name() -> str:
    """uvloop where it is installed (it is faster), else the standard loop."""
    return "uvloop" if importlib.util.find_spec("uvloop") else "asyncio"


def run_async(coro: Coroutine[Any, Any, T]) -> T:
    if event_loop_name() == "uvloop":
        import uvloop

        return uvloop.run(coro)
    return asyncio.run(coro)


def run_serve(args: argparse.Namespace) -> int:
    import uvicorn

    from app.config import get_settings

    settings = get_settings()
    uvicorn.run(
        "app.main:create_app",
        factory=True,
        host=args.host or settings.host,
        port=settings.port if args.port is None else args.port,
        reload=args.reload,
        loop=event_loop_name(),
        # Compression costs more than it saves on small game messages (docs/benchmarks.md).
        ws_per_message_deflate=False,
        ws_max_size=settings.ws_max_message_bytes,
        proxy_headers=True,
        forwarded_allow_ips=settings.forwarded_allow_ips,
        log_level=settings.log_level,
    )
    return 0


def run_migrate(_args: argparse.Namespace) -> int:
    from sqlalchemy.engine import make_url

    from app.config import get_settings
    from app.db.migrate import upgrade

    url = get_settings().database_url
    upgrade(url)
    print(f"database schema is up to date: {make_url(url).render_as_string(hide_password=True)}")
    return 0


def _error(message: str) -> int:
    print(f"checkers: error: {message}", file=sys.stderr)
    return USAGE_ERROR


def _ask_password() -> str | None:
    """The password from the environment, else typed twice; None if the two differ."""
    password = os.environ.get(ADMIN_PASSWORD_ENV)
    if password:
        return password
    first = getpass.getpass("Password for the new administrator: ")
    second = getpass.getpass("Repeat the password: ")
    return first if first == second else None


def run_create_admin(args: argparse.Namespace) -> int:
    from sqlalchemy.exc import OperationalError, ProgrammingError

    from app.config import get_settings
    from app.db.engine import Database
    from app.services import accounts

    async def create_admin() -> int:
        db = Database(get_settings().database_url)
        try:
            async with db.session() as session:
                password = None
                if await accounts.find_user(session, args.name) is None:
                    password = await asyncio.to_thread(_ask_password)
                    if password is None:
                        return _error("the two passwords differ")
                user = await accounts.create_admin(session, args.name, password)
                verb = "created" if password is not None else "promoted"
                print(f"{user.name} is an administrator ({verb})")
                return 0
        except accounts.AccountError as exc:
            return _error(str(exc))
        except (OperationalError, ProgrammingError) as exc:
            return _error(f"cannot use the database ({exc.orig}); run `checkers migrate` first?")
        finally:
            await db.dispose()

    return run_async(create_admin())
