"""`GET /api/players/{name}`: a player's record per variant and when they were last seen."""

from __future__ import annotations

import httpx
from fastapi import FastAPI

from tests.support.archive_data import add_game, at


async def test_a_players_wins_losses_and_draws_per_variant(
    app: FastAPI, client: httpx.AsyncClient
) -> None:
    async with app.state.db.session() as session:
        for black, white, result, variant, day in [
            ("alice", "bob", "1-0", "english", "2026-01-01"),  # alice wins as Black
            ("bob", "alice", "1-0", "english", "2026-01-02"),  # alice loses as White
            ("bob", "alice", "0-1", "english", "2026-01-03"),  # alice wins as White
            ("alice", "carol", "1/2-1/2", "pool", "2026-01-04"),
            ("carol", "alice", "0-1", "pool", "2026-01-05"),  # alice wins as White
        ]:
            await add_game(
                session,
                black=black,
                white=white,
                result=result,
                variant=variant,
                started_at=at(day),
            )
        await add_game(
            session, black="alice", white="dave", started_at=at("2026-01-06"), status="playing"
        )
        await session.commit()

    response = await client.get("/api/players/alice")
    assert response.status_code == 200
    player = response.json()
    assert player["name"] == "alice"
    assert player["kind"] == "registered"
    assert player["games"] == 6
    assert player["variants"] == {
        "english": {"games": 4, "wins": 2, "losses": 1, "draws": 0, "playing": 1},
        "pool": {"games": 2, "wins": 1, "losses": 0, "draws": 1, "playing": 0},
    }
    assert player["last_seen_at"].startswith("2026-01-06")

    assert (await client.get("/api/players/ALICE")).json() == player  # names ignore case

    bob = (await client.get("/api/players/bob")).json()
    assert bob["variants"] == {
        "english": {"games": 3, "wins": 1, "losses": 2, "draws": 0, "playing": 0}
    }


async def test_a_game_without_an_opponent_counts_and_an_unknown_name_is_404(
    app: FastAPI, client: httpx.AsyncClient
) -> None:
    async with app.state.db.session() as session:
        await add_game(session, black="erin", white=None, started_at=at("2026-01-01"))
        await session.commit()
    erin = (await client.get("/api/players/erin")).json()
    assert erin["games"] == 1
    response = await client.get("/api/players/nobody")
    assert response.status_code == 404
    assert response.json() == {"error": "not_found", "message": "no player named 'nobody'"}
