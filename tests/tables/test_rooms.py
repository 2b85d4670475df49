"""`GET /api/rooms`: the seeded rooms and their public tables."""

from __future__ import annotations

import httpx
from fastapi import FastAPI

from app.play.players import PlayerRef
from app.tables import opening as table_opening


async def test_rooms_are_listed_with_their_public_tables(
    app: FastAPI, client: httpx.AsyncClient
) -> None:
    guest = (await client.post("/api/auth/guest")).json()["user"]
    host = PlayerRef(guest["id"], guest["name"])
    public = await table_opening.open_table(app.state.live, host, "pool", colour="white")
    await table_opening.open_table(app.state.live, host, "pool", private=True)

    response = await client.get("/api/rooms")
    assert response.status_code == 200
    rooms = {room["slug"]: room for room in response.json()}
    assert set(rooms) >= {"english-casual", "english-blitz", "pool"}
    assert rooms["english-casual"]["clock"] is None
    assert rooms["pool"]["clock"] == {"base": 600, "increment": 5}
    (table,) = rooms["pool"]["tables"]
    assert table["id"] == public["id"]
    assert (table["status"], table["colour"], table["variant"]) == ("open", "white", "pool")
    assert table["players"] == [
        {"id": host.id, "name": host.name, "rating": None, "provisional": False}
    ]
    assert table["rated"] is False
    assert "invite" not in table
