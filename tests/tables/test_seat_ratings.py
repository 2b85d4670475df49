"""Ratings beside names in live payloads, on a real server: a table's `players`, a game's
`black`/`white` and the lobby's tables carry each player's rating in the table's variant and
category (`provisional` from the RD grown while idle); guests have none; after a rated game the
table shows the new ratings."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from app.db.engine import Database
from app.db.models import Rating
from tests.ratings.test_rating_play import GIVEAWAY, member
from tests.support.server import Served
from tests.support.ws import guest, start_game


def seat(client_id: int, name: str, rating: int | None, provisional: bool) -> dict[str, Any]:
    return {"id": client_id, "name": name, "rating": rating, "provisional": provisional}


async def store_rating(
    db_url: str, user_id: int, category: str, rating: float, rd: float, days_ago: float
) -> None:
    """A stored English rating, as after a game `days_ago` days ago."""
    db = Database(db_url)
    try:
        async with db.session() as session:
            session.add(
                Rating(
                    user_id=user_id,
                    variant="english",
                    category=category,
                    rating=rating,
                    rd=rd,
                    volatility=0.06,
                    games=40,
                    last_game_at=datetime.now(UTC) - timedelta(days=days_ago),
                )
            )
            await session.commit()
    finally:
        await db.dispose()


async def test_seats_games_and_the_lobby_show_the_ratings_of_the_tables_category(
    server: Served, db_url: str
) -> None:
    async with member(server.url, "alice") as a, member(server.url, "bob") as b:
        # Alice is established in blitz (RD 60, played yesterday); her bullet rating is not
        # what a blitz table shows. Bob has no blitz rating yet: 1500, provisional.
        await store_rating(db_url, a.user_id, "blitz", 1623.7, 60.0, 1)
        await store_rating(db_url, a.user_id, "bullet", 1900.0, 60.0, 1)
        await b.send(type="subscribe_lobby")
        await b.expect("lobby")
        match = await start_game(a, b, room="english-blitz", rated=True)
        alice = seat(a.user_id, "alice", 1623, False)
        bob = seat(b.user_id, "bob", 1500, True)
        assert match.table["players"] == [alice]
        assert (match.game["black"], match.game["white"]) == (alice, bob)
        listed = await b.expect("lobby_table")
        while listed["table"]["status"] != "playing":
            listed = await b.expect("lobby_table")
        assert listed["table"]["players"] == [alice, bob]
        # The lobby's line for the table while it waited (read while Bob sat down).
        waiting = [m for m in b.seen if m["type"] == "lobby_table"][0]
        assert waiting["table"]["status"] == "open" and waiting["table"]["players"] == [alice]
        # A spectator's snapshot of the table and its game shows the same.
        async with guest(server.url) as viewer:
            await viewer.send(type="watch", table=match.table["id"])
            snap = await viewer.expect("table")
            assert snap["table"]["players"] == [alice, bob]
            assert (snap["game"]["black"], snap["game"]["white"]) == (alice, bob)
            # The lobby's snapshot (every listed table in one read) too.
            await viewer.send(type="subscribe_lobby")
            rooms = (await viewer.expect("lobby"))["rooms"]
            tables = [t for room in rooms for t in room["tables"]]
            assert [t["players"] for t in tables] == [[alice, bob]]
            await match.play(*GIVEAWAY[:-1])
            await a.send(type="move", game=match.id, move=GIVEAWAY[-1], ply=match.ply)
            ended = await viewer.expect("game_ended")
            change = ended["rating_change"]
            # The table as the game left it: both players' new ratings.
            update = await viewer.expect("table_update")
            assert update["state"]["status"] == "finished"
            after = [p["rating"] for p in update["state"]["players"]]
            assert after == [change["black"]["after"], change["white"]["after"]]
            assert change["black"]["before"] == 1623 and change["black"]["diff"] > 0
            assert change["white"]["before"] == 1500 and change["white"]["diff"] < 0


async def test_guests_have_no_rating_and_an_idle_rating_turns_provisional(
    server: Served, db_url: str
) -> None:
    async with member(server.url, "carol") as host, guest(server.url) as visitor:
        # Carol was established (RD 60) but has not played for two years: her RD has grown
        # past 110, so her rating is provisional again.
        await store_rating(db_url, host.user_id, "untimed", 1710.0, 60.0, 730)
        match = await start_game(host, visitor)  # english-casual: untimed, casual
        carol = seat(host.user_id, "carol", 1710, True)
        name = visitor.welcome["user"]["name"]
        assert match.table["players"] == [carol]
        assert match.game["black"] == carol
        assert match.game["white"] == seat(visitor.user_id, name, None, False)
