"""Games of private tables over REST: shown to their players, administrators and holders of the
table's invite code (game detail and PDN), left out for everyone else by every listing, search,
export, player page and total; an unseen game is answered 404 like a game that does not exist."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
import pytest_asyncio
from fastapi import FastAPI
from sqlalchemy import select

from app.accounts import service as accounts
from app.config import Settings
from app.db.models import Game, GameTable, Room
from app.main import create_app
from tests.conftest import make_settings
from tests.support.admin_client import ADMIN_NAME, ADMIN_PASSWORD, log_in
from tests.support.archive_data import add_game, at, user

PASSWORD = "a-long-passphrase-9"
INVITE = "letmein-0123"


async def register(client: httpx.AsyncClient, name: str) -> dict[str, str]:
    response = await client.post("/api/auth/register", json={"name": name, "password": PASSWORD})
    assert response.status_code == 201, response.text
    return {"Authorization": f"Bearer {response.json()['access_token']}"}


PRIVATE = ("private_done", "private_live")

# The tests only read: one app, one set of players and games for the module.
pytestmark = pytest.mark.asyncio(loop_scope="module")


@pytest.fixture(scope="module")
def settings(module_db_url: str) -> Settings:
    return make_settings(database_url=module_db_url)


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def app(settings: Settings) -> AsyncIterator[FastAPI]:
    application = create_app(settings)
    async with application.router.lifespan_context(application):
        yield application


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def client(app: FastAPI) -> AsyncIterator[httpx.AsyncClient]:
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as c:
        yield c


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def people(app: FastAPI, client: httpx.AsyncClient) -> dict[str, dict[str, str]]:
    """Request headers of each viewer: the two players, a stranger, an administrator, nobody."""
    headers = {name: await register(client, name) for name in ("alice", "bob", "carol")}
    async with app.state.db.session() as session:
        await accounts.create_admin(session, ADMIN_NAME, ADMIN_PASSWORD)
    login = await log_in(client, ADMIN_NAME, ADMIN_PASSWORD)
    headers["admin"] = {"Authorization": f"Bearer {login.json()['access_token']}"}
    headers["anonymous"] = {}
    return headers


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def games(app: FastAPI, people: dict[str, dict[str, str]]) -> dict[str, int]:
    """alice and bob: a live and a finished game at a private table, a public game at a public
    table, and an imported game (no table); carol plays bob in public."""
    async with app.state.db.session() as session:
        room = await session.scalar(select(Room.id).where(Room.slug == "english-casual"))
        assert room is not None
        alice, bob = await user(session, "alice"), await user(session, "bob")
        tables = {}
        for private in (True, False):
            row = GameTable(
                room_id=room,
                owner_id=alice,
                guest_id=bob,
                variant="english",
                is_private=private,
                invite_code=INVITE if private else None,
            )
            session.add(row)
            await session.flush()
            tables[private] = row.id
        common: dict[str, Any] = {"room": "english-casual"}
        ids = {
            "private_done": await add_game(
                session,
                black="alice",
                white="bob",
                started_at=at("2026-03-01"),
                result="1-0",
                termination="resignation",
                seed=1,
                **common,
            ),
            "private_live": await add_game(
                session,
                black="bob",
                white="alice",
                started_at=at("2026-03-02"),
                status="playing",
                seed=2,
                **common,
            ),
            "public": await add_game(
                session,
                black="alice",
                white="bob",
                started_at=at("2026-03-03"),
                result="0-1",
                termination="resignation",
                seed=3,
                **common,
            ),
            "carol": await add_game(
                session,
                black="carol",
                white="bob",
                started_at=at("2026-03-04"),
                status="playing",
                seed=4,
                **common,
            ),
            "imported": await add_game(
                session, black="alice", white="bob", started_at=at("2026-03-05"), seed=5
            ),
        }
        for name, table in (
            ("private_done", tables[True]),
            ("private_live", tables[True]),
            ("public", tables[False]),
            ("carol", tables[False]),
        ):
            game = await session.get(Game, ids[name])
            assert game is not None
            game.table_id = table
            game.is_private = name in PRIVATE  # as a game started at the table is
        await session.commit()
    return ids


EVERY_GAME = ("imported", "carol", "public", "private_live", "private_done")  # newest first
ALICE = ("imported", "public", "private_live", "private_done")


def expected(viewer: str, among: tuple[str, ...] = EVERY_GAME) -> list[str]:
    """The games of `among` this viewer may see, in the listing's order."""
    if viewer in ("alice", "bob", "admin"):
        return list(among)
    return [name for name in among if name not in PRIVATE]


async def listed(client: httpx.AsyncClient, headers: dict[str, str], path: str, **params: Any):
    response = await client.get(path, params={"limit": 100, **params}, headers=headers)
    assert response.status_code == 200, response.text
    return response.json()


@pytest.mark.parametrize("viewer", ["anonymous", "carol", "alice", "bob", "admin"])
async def test_a_private_game_is_shown_only_to_its_players_and_administrators(
    client: httpx.AsyncClient, people: dict[str, dict[str, str]], games: dict[str, int], viewer: str
) -> None:
    allowed = viewer in ("alice", "bob", "admin")
    for name in PRIVATE:
        game_id = games[name]
        for path in (f"/api/games/{game_id}", f"/api/games/{game_id}.pdn"):
            response = await client.get(path, headers=people[viewer])
            assert response.status_code == (200 if allowed else 404), (path, response.text)
        positions = await client.get(
            f"/api/games/{game_id}", params={"positions": "true"}, headers=people[viewer]
        )
        assert positions.status_code == (200 if allowed else 404)
        if not allowed:  # said as of a game that does not exist
            missing = await client.get("/api/games/999999", headers=people[viewer])
            assert positions.json()["message"] == missing.json()["message"].replace(
                "999999", str(game_id)
            )
            assert positions.json()["error"] == missing.json()["error"] == "not_found"


async def test_the_invite_code_opens_a_private_game_and_its_pdn(
    client: httpx.AsyncClient, people: dict[str, dict[str, str]], games: dict[str, int]
) -> None:
    game_id = games["private_live"]
    for headers in (people["anonymous"], people["carol"]):
        for path in (f"/api/games/{game_id}", f"/api/games/{game_id}.pdn"):
            wrong = await client.get(path, params={"invite": "guessed"}, headers=headers)
            assert wrong.status_code == 404
            right = await client.get(path, params={"invite": INVITE}, headers=headers)
            assert right.status_code == 200, right.text
    # The code of a private table opens that table's games only, not every private game.
    public = await client.get(f"/api/games/{games['public']}", params={"invite": INVITE})
    assert public.status_code == 200


@pytest.mark.parametrize("viewer", ["anonymous", "carol", "alice", "admin"])
@pytest.mark.parametrize(
    ("params", "among"),
    [
        ({}, EVERY_GAME),
        ({"status": "playing"}, ("carol", "private_live")),
        ({"status": "finished"}, ("imported", "public", "private_done")),
        ({"player": "alice"}, ("imported", "public", "private_live", "private_done")),
        ({"player": "bob"}, EVERY_GAME),
        (
            {"player": "alice", "opponent": "bob"},
            ("imported", "public", "private_live", "private_done"),
        ),
        ({"player": "alice", "colour": "white"}, ("private_live",)),
        ({"player": "alice", "result": "win"}, ("private_done",)),
        ({"player": "bob", "result": "win"}, ("public",)),
        ({"room": "english-casual"}, ("carol", "public", "private_live", "private_done")),
        ({"variant": "english", "rated": "false"}, EVERY_GAME),
        ({"result": "1-0"}, ("private_done",)),
        ({"termination": "resignation"}, ("public", "private_done")),
        ({"since": "2026-03-01", "until": "2026-03-02"}, ("private_live", "private_done")),
        ({"min_plies": 1}, EVERY_GAME),
        ({"order": "asc"}, tuple(reversed(EVERY_GAME))),
    ],
)
async def test_searches_leave_out_private_games_the_viewer_may_not_see(
    client: httpx.AsyncClient,
    people: dict[str, dict[str, str]],
    games: dict[str, int],
    viewer: str,
    params: dict[str, Any],
    among: tuple[str, ...],
) -> None:
    want = [games[name] for name in expected(viewer, among)]
    body = await listed(client, people[viewer], "/api/games", **params)
    assert [g["id"] for g in body["data"]] == want
    assert body["count"] == len(want)  # the total does not count them either
    if "player" in params:
        player = params["player"]
        rest = {k: v for k, v in params.items() if k != "player"}
        own = await listed(client, people[viewer], f"/api/players/{player}/games", **rest)
        assert [g["id"] for g in own["data"]] == want
        assert own["count"] == len(want)


async def test_pages_of_a_search_never_hand_out_a_private_game(
    client: httpx.AsyncClient, people: dict[str, dict[str, str]], games: dict[str, int]
) -> None:
    seen: list[int] = []
    cursor = None
    while True:
        params: dict[str, Any] = {"limit": 1, "player": "alice"}
        if cursor is not None:
            params["cursor"] = cursor
        body = (await client.get("/api/games", params=params)).json()
        seen += [g["id"] for g in body["data"]]
        cursor = body["next_cursor"]
        if cursor is None:
            break
    assert seen == [games[name] for name in ("imported", "public")]


@pytest.mark.parametrize("viewer", ["anonymous", "carol", "bob", "admin"])
@pytest.mark.parametrize("fmt", ["pdn", "ndjson"])
async def test_the_export_leaves_out_private_games_the_viewer_may_not_see(
    client: httpx.AsyncClient,
    people: dict[str, dict[str, str]],
    games: dict[str, int],
    viewer: str,
    fmt: str,
) -> None:
    response = await client.get("/api/games/export", params={"format": fmt}, headers=people[viewer])
    assert response.status_code == 200
    text = response.text
    for name in EVERY_GAME:
        marker = f'/api/games/{games[name]}"]' if fmt == "pdn" else f'{{"id":{games[name]},'
        assert (marker in text) == (name in expected(viewer)), name


@pytest.mark.parametrize("viewer", ["anonymous", "carol", "alice", "admin"])
async def test_a_players_totals_count_only_games_the_viewer_may_see(
    client: httpx.AsyncClient, people: dict[str, dict[str, str]], games: dict[str, int], viewer: str
) -> None:
    response = await client.get("/api/players/bob", headers=people[viewer])
    assert response.status_code == 200
    profile = response.json()
    english = profile["variants"]["english"]
    sees_private = viewer in ("alice", "admin")
    assert profile["games"] == (5 if sees_private else 3)
    assert english["playing"] == (2 if sees_private else 1)
    assert english["losses"] == (1 if sees_private else 0)
    assert english["wins"] == 1


async def test_a_bad_token_is_refused_rather_than_treated_as_nobody(
    client: httpx.AsyncClient, games: dict[str, int]
) -> None:
    response = await client.get(
        f"/api/games/{games['public']}", headers={"Authorization": "Bearer expired-or-forged"}
    )
    assert response.status_code == 401
    assert response.json()["error"] == "unauthorized"


@pytest.mark.parametrize("invite", ["x" * 33, "a\u0000b", ""])
async def test_a_malformed_invite_is_refused_as_bad_input(
    client: httpx.AsyncClient, games: dict[str, int], invite: str
) -> None:
    response = await client.get(f"/api/games/{games['private_live']}", params={"invite": invite})
    assert response.status_code == 422
    assert response.json()["error"] == "bad_request"
