"""Cost of accounts: one Argon2 password check, and log-ins/s through the REST face.

Usage: .venv/bin/python bench/accounts.py [--logins 40] [--concurrency 8]

The log-ins run in-process (httpx ASGI transport) against a fresh SQLite file, so the figure is
the server's own cost. Prints figures only; docs/benchmarks.md records them.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
from pathlib import Path

import httpx

from app.accounts.service import password_hasher
from app.config import Settings
from app.db.migrate import upgrade
from app.main import create_app

PASSWORD = "correct-horse-battery"


def password_check_ms(repeat: int = 20) -> float:
    password_hash = password_hasher.hash(PASSWORD)
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        password_hasher.verify(password_hash, PASSWORD)
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1e3


async def logins_per_second(url: str, logins: int, concurrency: int) -> float:
    app = create_app(Settings(database_url=url, redis_url=None, login_max_failures=10**6))
    async with (
        app.router.lifespan_context(app),
        httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://b") as client,
    ):
        body = {"name": "bench_user", "password": PASSWORD}
        assert (await client.post("/api/auth/register", json=body)).status_code == 201
        gate = asyncio.Semaphore(concurrency)

        async def login() -> None:
            async with gate:
                assert (await client.post("/api/auth/login", json=body)).status_code == 200

        start = time.perf_counter()
        await asyncio.gather(*(login() for _ in range(logins)))
        return logins / (time.perf_counter() - start)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--logins", type=int, default=40)
    parser.add_argument("--concurrency", type=int, default=8)
    args = parser.parse_args()

    print(f"Argon2 password check: median {password_check_ms():.1f} ms")
    with tempfile.TemporaryDirectory() as tmp:
        url = f"sqlite+aiosqlite:///{Path(tmp) / 'bench.db'}"
        upgrade(url)
        rate = asyncio.run(logins_per_second(url, args.logins, args.concurrency))
    print(f"POST /api/auth/login: {rate:.1f} log-ins/s ({args.concurrency} at a time, SQLite)")


if __name__ == "__main__":
    main()
