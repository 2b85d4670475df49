"""The REST shapes of ratings: `ratings` on `GET /api/players/{name}` (RD grown while idle, the
provisional flag), `GET /api/players/{name}/rating-history` (last rating per day), and
`GET /api/leaderboard` (RD at most 75 as read now, a game within 7 days, strict parameters)."""

from __future__ import annotations

import json
import re
from datetime import timedelta

import httpx
import pytest
from fastapi import FastAPI
from sqlalchemy import update

from app.archive.importer import check_game
from app.db.models import Rating, RatingChange, User
from app.rules.pdn import read_games
from app.timeutil import utcnow
from tests.support.archive_data import add_game, at, user

DAY = timedelta(days=1)


async def _rating(
    app: FastAPI,
    name: str,
    rating: float,
    rd: float,
    idle_days: float,
    *,
    variant: str = "english",
    category: str = "blitz",
    games: int = 40,
    volatility: float = 0.06,
) -> None:
    async with app.state.db.session() as session:
        session.add(
            Rating(
                user_id=await user(session, name),
                variant=variant,
                category=category,
                rating=rating,
                rd=rd,
                volatility=volatility,
                games=games,
                last_game_at=utcnow() - idle_days * DAY,
            )
        )
        await session.commit()


async def test_a_players_ratings_on_their_page(app: FastAPI, client: httpx.AsyncClient) -> None:
    await _rating(app, "alice", 1812.7, 60, 0)
    await _rating(app, "alice", 1650, 100, 60, category="rapid", volatility=0.09)  # 114.6
    await _rating(app, "alice", 1500.2, 95, 0, variant="pool", category="untimed", games=9)
    body = (await client.get("/api/players/alice")).json()
    assert [
        (r["variant"], r["category"], r["rating"], r["games"], r["provisional"])
        for r in body["ratings"]
    ] == [
        ("english", "blitz", 1812, 40, False),
        ("english", "rapid", 1650, 40, True),
        ("pool", "untimed", 1500, 9, False),
    ]
    first = body["ratings"][0]
    assert set(first) == {
        "category",
        "variant",
        "rating",
        "rd",
        "volatility",
        "games",
        "provisional",
    }
    assert first["rd"] == pytest.approx(60, abs=0.01) and first["volatility"] == 0.06
    assert body["ratings"][1]["rd"] == pytest.approx(
        173.7178 * ((100 / 173.7178) ** 2 + 60 * 0.21436 * 0.09**2) ** 0.5, abs=0.01
    )
    async with app.state.db.session() as session:
        await add_game(session, black="bob", white=None, started_at=at("2026-01-01"))
        await session.commit()
    assert (await client.get("/api/players/bob")).json()["ratings"] == []


async def test_the_rating_history_keeps_the_last_rating_of_each_day(
    app: FastAPI, client: httpx.AsyncClient
) -> None:
    async with app.state.db.session() as session:
        carol = await user(session, "carol")
        games = [
            await add_game(session, black="carol", white="dan", started_at=at("2026-03-01"))
            for _ in range(4)
        ]
        for game, when, after, category in [
            (games[0], at("2026-03-01", 3600), 1600.9, "blitz"),
            (games[1], at("2026-03-01", 7200), 1650.1, "blitz"),  # the day's last
            (games[2], at("2026-03-03", 60), 1620.0, "blitz"),
            (games[3], at("2026-03-03", 90), 1450.0, "bullet"),
        ]:
            session.add(
                RatingChange(
                    game_id=game,
                    user_id=carol,
                    variant="english",
                    category=category,
                    rating_before=1500,
                    rd_before=300,
                    rating_after=after,
                    rd_after=250,
                    volatility_after=0.09,
                    at=when,
                )
            )
        await session.commit()
    response = await client.get("/api/players/CAROL/rating-history")
    assert response.status_code == 200
    assert response.json() == {
        "name": "carol",
        "data": [
            {
                "variant": "english",
                "category": "blitz",
                "points": [
                    {"date": "2026-03-01", "rating": 1650},
                    {"date": "2026-03-03", "rating": 1620},
                ],
            },
            {
                "variant": "english",
                "category": "bullet",
                "points": [{"date": "2026-03-03", "rating": 1450}],
            },
        ],
    }
    assert (await client.get("/api/players/dan/rating-history")).json()["data"] == []
    missing = await client.get("/api/players/nobody/rating-history")
    assert (missing.status_code, missing.json()["error"]) == (404, "not_found")


async def test_the_leaderboard(app: FastAPI, client: httpx.AsyncClient) -> None:
    await _rating(app, "top", 2100, 50, 1)
    await _rating(app, "second", 1900, 74, 0)
    await _rating(app, "third", 1700, 45, 6.5)
    await _rating(app, "unsure", 2500, 80, 0)  # RD above 75
    await _rating(app, "faded", 2400, 74.9, 6)  # RD 75.8 once six idle days are counted
    await _rating(app, "away", 2300, 45, 8)  # no game for 8 days
    await _rating(app, "cheat", 2600, 45, 0)
    await _rating(app, "pooler", 2200, 45, 0, variant="pool")
    await _rating(app, "rapid", 2200, 45, 0, category="rapid")
    async with app.state.db.session() as session:
        await session.execute(update(User).where(User.name == "cheat").values(banned=True))
        await session.commit()
    response = await client.get(
        "/api/leaderboard", params={"variant": "english", "category": "blitz"}
    )
    assert response.status_code == 200
    body = response.json()
    assert (body["variant"], body["category"]) == ("english", "blitz")
    assert [(e["rank"], e["name"], e["rating"], e["games"]) for e in body["data"]] == [
        (1, "top", 2100, 40),
        (2, "second", 1900, 40),
        (3, "third", 1700, 40),
    ]
    assert all(e["rd"] <= 75 for e in body["data"])
    top_one = await client.get("/api/leaderboard?variant=english&category=blitz&limit=1")
    assert [e["name"] for e in top_one.json()["data"]] == ["top"]
    pool = await client.get("/api/leaderboard?variant=pool&category=blitz")
    assert [e["name"] for e in pool.json()["data"]] == ["pooler"]
    assert (await client.get("/api/leaderboard?variant=pool&category=untimed")).json()["data"] == []


@pytest.mark.parametrize(
    "query",
    [
        "variant=chess",
        "category=hyperbullet",
        "limit=0",
        "limit=101",
        "limit=1.0",
        "limit=+5",
        "variant=English",
    ],
)
async def test_leaderboard_parameters_are_strict(client: httpx.AsyncClient, query: str) -> None:
    response = await client.get(f"/api/leaderboard?{query}")
    assert response.status_code == 422
    assert response.json()["error"] == "bad_request"


async def test_archived_games_show_the_ratings_before_a_rated_game(
    app: FastAPI, client: httpx.AsyncClient
) -> None:
    async with app.state.db.session() as session:
        rated = await add_game(
            session, black="erin", white="fred", started_at=at("2026-03-02"), rated=True
        )
        casual = await add_game(session, black="erin", white="fred", started_at=at("2026-03-01"))
        for name, before, rd, after in (
            ("erin", 1500.0, 500.0, 1741.2),
            ("fred", 1620.9, 80, 1611),
        ):
            session.add(
                RatingChange(
                    game_id=rated,
                    user_id=await user(session, name),
                    variant="english",
                    category="blitz",
                    rating_before=before,
                    rd_before=rd,
                    rating_after=after,
                    rd_after=rd,
                    volatility_after=0.09,
                    at=at("2026-03-02", 600),
                )
            )
        await session.commit()
    erin = {"rating": 1500, "provisional": True, "diff": 241}
    fred = {"rating": 1620, "provisional": False, "diff": -9}
    page = (await client.get("/api/players/erin/games")).json()["data"]
    assert [(g["id"], g["black_rating"], g["white_rating"]) for g in page] == [
        (rated, erin, fred),
        (casual, None, None),
    ]
    one = (await client.get(f"/api/games/{rated}")).json()
    assert (one["black_rating"], one["white_rating"]) == (erin, fred)
    assert (await client.get(f"/api/games/{casual}")).json()["black_rating"] is None
    lines = (await client.get("/api/games/export?player=erin&format=ndjson")).text.splitlines()
    assert [json.loads(line)["white_rating"] for line in lines] == [fred, None]


async def test_the_pdn_of_a_rated_game_carries_both_ratings_before_it(
    app: FastAPI, client: httpx.AsyncClient
) -> None:
    async with app.state.db.session() as session:
        rated = await add_game(
            session, black="gina", white="hal", started_at=at("2026-04-02"), rated=True
        )
        casual = await add_game(session, black="gina", white="hal", started_at=at("2026-04-01"))
        for name, before, after in (("gina", 1712.9, 1700.2), ("hal", 1499.6, 1512)):
            session.add(
                RatingChange(
                    game_id=rated,
                    user_id=await user(session, name),
                    variant="english",
                    category="blitz",
                    rating_before=before,
                    rd_before=60,
                    rating_after=after,
                    rd_after=60,
                    volatility_after=0.06,
                    at=at("2026-04-02", 600),
                )
            )
        await session.commit()
    one = (await client.get(f"/api/games/{rated}.pdn")).text
    tag_names = re.findall(r'^\[(\w+) "', one, re.MULTILINE)
    # The seven-tag roster, GameType, then the ratings (as shown: whole points), then the rest.
    assert tag_names[:10] == [
        "Event",
        "Site",
        "Date",
        "Round",
        "Black",
        "White",
        "Result",
        "GameType",
        "BlackElo",
        "WhiteElo",
    ]
    assert '[BlackElo "1712"]' in one and '[WhiteElo "1499"]' in one
    assert "Elo" not in (await client.get(f"/api/games/{casual}.pdn")).text
    export = (await client.get("/api/games/export?player=gina")).text
    records = list(read_games(export))
    assert [(r.tags.get("BlackElo"), r.tags.get("WhiteElo")) for r in records] == [
        ("1712", "1499"),
        (None, None),
    ]
    # Our reader takes them back, and the importer's check keeps them as tags.
    checked = check_game(records[0])
    assert (checked.tags["BlackElo"], checked.tags["WhiteElo"]) == ("1712", "1499")
