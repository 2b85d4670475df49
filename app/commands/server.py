"""`checkers serve`, `checkers migrate` and `checkers create-admin`: running a server.

All three read the settings from the environment (or `.env`), like the server itself.
"""

from __future__ import annotations

import argparse
import asyncio
import getpass
import importlib.util
import os
import re
import sys
from collections.abc import Coroutine
from typing import Any, TypeVar

T = TypeVar("T")

ADMIN_PASSWORD_ENV = "CHECKERS_ADMIN_PASSWORD"
USAGE_ERROR = 2
EXIT_DATABASE = 3  # the database is unreachable, missing or not migrated (as `checkers import`)
# Open files `checkers serve` keeps for what is not a client connection (the database pool,
# Redis, logs) when it derives uvicorn's `limit_concurrency` from the open-file limit.
HTTP_FILES_RESERVED = 100


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
    from sqlalchemy.exc import SQLAlchemyError

    from app.config import get_settings
    from app.db.migrate import current_revision, head_revision

    settings = get_settings()
    # Checked before the server starts: a lifespan failing on a missing table is a traceback.
    url = settings.database_url
    try:
        revision = current_revision(url)
    except (OSError, SQLAlchemyError) as exc:  # a refused connection is a bare OSError
        return _database_error(url, exc)
    if revision is None:
        return _error(
            f"the database {_shown(url)} has no schema yet: run `checkers migrate` first",
            EXIT_DATABASE,
        )
    if revision != head_revision():
        return _error(
            f"the database {_shown(url)} is at schema revision {revision}, this version needs "
            f"{head_revision()}: run `checkers migrate` first",
            EXIT_DATABASE,
        )
    from app.realtime.limits import raise_open_file_limit
    from app.serving import HeadDeadlineProtocol

    concurrency = settings.http_limit_concurrency
    if concurrency is None:
        concurrency = max(1, raise_open_file_limit() - HTTP_FILES_RESERVED)
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
        # On SIGTERM uvicorn closes every websocket with 1012 and waits for their handlers to
        # end; past this, it cancels what is left, so a rolling restart never hangs.
        timeout_graceful_shutdown=settings.shutdown_timeout_seconds,
        # Exposed without the proxy (docs/deploy.md): a deadline for each request's head (slow
        # loris), idle connections closed, and 503 at once past the files the process has.
        http=HeadDeadlineProtocol,
        timeout_keep_alive=settings.http_keep_alive_seconds,
        limit_concurrency=concurrency,
    )
    return 0


def run_migrate(_args: argparse.Namespace) -> int:
    from sqlalchemy.exc import SQLAlchemyError

    from app.config import get_settings
    from app.db.migrate import current_revision, head_revision, upgrade

    url = get_settings().database_url
    head = head_revision()
    try:
        before = current_revision(url)
        if before != head:
            upgrade(url)
    except (OSError, SQLAlchemyError) as exc:  # a refused connection is a bare OSError
        return _database_error(url, exc)
    if before is None:
        print(f"created the database schema at revision {head}: {_shown(url)}")
    elif before == head:
        print(f"database schema already up to date at revision {head}: {_shown(url)}")
    else:
        print(f"upgraded the database schema from revision {before} to {head}: {_shown(url)}")
    return 0


def _error(message: str, status: int = USAGE_ERROR) -> int:
    print(f"checkers: error: {message}", file=sys.stderr)
    return status


def _shown(url: str) -> str:
    from sqlalchemy.engine import make_url

    return make_url(url).render_as_string(hide_password=True)


def _database_error(url: str, exc: BaseException) -> int:
    """One line naming the database, the driver's reason and the fix; no traceback."""
    from sqlalchemy.engine import make_url

    reason = " ".join(str(getattr(exc, "orig", None) or exc).split())
    reason = re.sub(r"^<class '[\w.]+'>: ", "", reason)  # how SQLAlchemy shows asyncpg's errors
    name = make_url(url).database
    if "does not exist" in reason and name:
        fix = f"create it (PostgreSQL: `createdb {name}`) or set DATABASE_URL to one that exists"
    else:
        fix = "check DATABASE_URL and that the database server is running"
    return _error(f"cannot use the database {_shown(url)}: {reason}; {fix}", EXIT_DATABASE)


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

    from app.accounts import service as accounts
    from app.config import get_settings
    from app.db.engine import Database

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
