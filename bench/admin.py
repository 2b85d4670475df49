"""Administration under load: the admin reads, and closing a busy room, against a real server.

    .venv/bin/python bench/admin.py                 # 100 live games on PostgreSQL
    .venv/bin/python bench/admin.py --games 20 --database-url postgresql+asyncpg://…/postgres

It creates the database `checkers_bench_admin` (dropping an old one), migrates it, makes an
administrator, and runs `checkers serve` (uvloop, no compression) in a process of its own. An
unlisted room gets GAMES tables, each with a game in progress between two connected guests.
Then it times `GET /api/admin/rooms`, `/tables` and `/status` (median and worst of REPEAT
calls), and closing the room: the answer to the POST, and until every player has received both
`game_ended` and `table_closed`. Figures are recorded in docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import time
from pathlib import Path

import httpx
import websockets
from websockets.asyncio.client import ClientConnection

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from app.accounts.service import create_admin  # noqa: E402
from app.db.engine import Database  # noqa: E402
from app.db.migrate import upgrade  # noqa: E402
from bench.play import child, free_port, offer, recreate_database, wait_http  # noqa: E402

DEFAULT_POSTGRES = "postgresql+asyncpg://postgres@127.0.0.1:5432/postgres"
BENCH_DATABASE = "checkers_bench_admin"
ADMIN, PASSWORD = "operator", "long-bench-passphrase"
ROOM = "bench-admin"


async def expect(ws: ClientConnection, kind: str) -> dict[str, object]:
    while True:
        message: dict[str, object] = json.loads(await asyncio.wait_for(ws.recv(), 30))
        if message["type"] == kind:
            return message


async def player(http: httpx.AsyncClient, ws_url: str) -> ClientConnection:
    token = (await http.post("/api/auth/guest")).json()["access_token"]
    ws = await websockets.connect(
        ws_url, subprotocols=offer(token), compression=None, max_queue=None
    )
    await expect(ws, "welcome")
    return ws


async def start_game(http: httpx.AsyncClient, ws_url: str) -> tuple[ClientConnection, ...]:
    a, b = await player(http, ws_url), await player(http, ws_url)
    await a.send(json.dumps({"type": "open", "room": ROOM, "colour": "black", "clock": None}))
    table = (await expect(a, "table"))["table"]
    assert isinstance(table, dict)
    await b.send(json.dumps({"type": "sit", "table": table["id"]}))
    await expect(a, "game_started")
    await expect(b, "game_started")
    return a, b


async def timed_get(http: httpx.AsyncClient, path: str, repeat: int) -> str:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        response = await http.get(path)
        times.append((time.perf_counter() - start) * 1000)
        response.raise_for_status()
    return f"median {statistics.median(times):6.1f} ms, worst {max(times):6.1f} ms"


async def bench(args: argparse.Namespace) -> None:
    url = await recreate_database(args.database_url, BENCH_DATABASE)
    await asyncio.to_thread(upgrade, url)  # alembic runs an event loop of its own
    db = Database(url)
    async with db.session() as session:
        await create_admin(session, ADMIN, PASSWORD)
    await db.dispose()
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    env = os.environ | {
        "DATABASE_URL": url,
        "ENVIRONMENT": "development",
        "LOG_LEVEL": "warning",
        "PYTHONPATH": str(ROOT),
        # Every bot connects from this host: no cap per address.
        "WS_MAX_PER_IP": "0",
        "WS_MESSAGES_PER_SECOND_PER_IP": "0",  # nor a message budget per address
        "GUESTS_PER_ADDRESS": "1000000",  # every bot comes from this host
    }
    env.pop("REDIS_URL", None)
    serve = [sys.executable, "-m", "app.cli", "serve", "--host", "127.0.0.1", "--port", str(port)]
    with child(serve, env):
        await wait_http(f"{base}/healthz")
        async with httpx.AsyncClient(base_url=base, timeout=60) as http:
            login = await http.post("/api/auth/login", json={"name": ADMIN, "password": PASSWORD})
            http.headers["Authorization"] = f"Bearer {login.json()['access_token']}"
            room = await http.post(
                "/api/admin/rooms",
                json={
                    "slug": ROOM,
                    "name": "Benchmark",
                    "variant": "english",
                    "table_limit": 1000,
                    "listed": False,
                },
            )
            room_id = room.json()["id"]
            ws_url = base.replace("http://", "ws://") + "/ws"
            pairs = [await start_game(http, ws_url) for _ in range(args.games)]
            clients = [ws for pair in pairs for ws in pair]
            print(f"{args.games} games in progress, {len(clients)} players connected")
            for path in ("/api/admin/rooms", "/api/admin/tables", "/api/admin/status"):
                print(f"GET {path:20} {await timed_get(http, path, args.repeat)}")

            async def told(ws: ClientConnection) -> float:
                await expect(ws, "game_ended")
                await expect(ws, "table_closed")
                return time.perf_counter()

            waiting = [asyncio.create_task(told(ws)) for ws in clients]
            start = time.perf_counter()
            closed = await http.post(
                f"/api/admin/rooms/{room_id}/close", json={"reason": "benchmark", "result": "*"}
            )
            answered = time.perf_counter()
            closed.raise_for_status()
            last = max(await asyncio.gather(*waiting))
            print(
                f"close the room: answered in {(answered - start) * 1000:.0f} ms; every player "
                f"told (game_ended + table_closed) after {(last - start) * 1000:.0f} ms"
            )
            for ws in clients:
                await ws.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--games", type=int, default=100)
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument(
        "--database-url", default=DEFAULT_POSTGRES, help="PostgreSQL server (any database)"
    )
    asyncio.run(bench(parser.parse_args()))


if __name__ == "__main__":
    main()
