"""Playing over `/ws` against a real server: moves, refusals, races, resignation, draws, abort,
rematch. Every test runs on SQLite and on PostgreSQL."""

from __future__ import annotations

import asyncio

from sqlalchemy import select

from app.db.engine import Database
from app.db.models import Game as GameRow
from app.db.models import Move as MoveRow
from tests.support.server import Served
from tests.support.ws import connect, guest, guest_token, start_game


async def stored_moves(served: Served, game_id: int) -> list[str]:
    db = Database(served.app.state.settings.database_url)
    try:
        async with db.session() as session:
            rows = await session.scalars(
                select(MoveRow.move).where(MoveRow.game_id == game_id).order_by(MoveRow.ply)
            )
            return list(rows)
    finally:
        await db.dispose()


async def stored_game(served: Served, game_id: int) -> GameRow:
    db = Database(served.app.state.settings.database_url)
    try:
        async with db.session() as session:
            row = await session.get(GameRow, game_id)
            assert row is not None
            return row
    finally:
        await db.dispose()


async def test_a_whole_game_is_played_to_a_win_and_stored(server: Served) -> None:
    async with guest(server.url) as a, guest(server.url) as b, connect(server.url) as watcher:
        match = await start_game(a, b)
        await watcher.send(type="watch", table=match.table["id"])
        assert (await watcher.expect("table"))["game"]["ply"] == 0
        legal = match.game["legal_moves"]
        played = []
        while legal:  # always the last legal move: White wins after 44 plies
            played.append(legal[-1])
            event = await match.play(legal[-1])
            seen = await watcher.expect("move", ply=event["ply"])
            assert seen["fen"] == event["fen"]
            legal = event["legal_moves"]
        ended = await a.expect("game_ended")
        assert (ended["result"], ended["termination"], ended["winner"]) == (
            "0-1",
            "no_moves",
            "white",
        )
        assert (await b.expect("game_ended"))["result"] == "0-1"
        assert (await watcher.expect("game_ended"))["result"] == "0-1"
    assert len(played) == 44
    assert await stored_moves(server, match.id) == played
    row = await stored_game(server, match.id)
    assert (row.status, row.result, row.termination, row.ply_count) == (
        "finished",
        "0-1",
        "no_moves",
        44,
    )


async def test_an_ignored_capture_is_refused_and_changes_nothing(server: Served) -> None:
    async with guest(server.url) as a, guest(server.url) as b:
        match = await start_game(a, b, start_fen="B:W18,22:B9,14")
        assert match.game["legal_moves"] == ["14x23"]
        await a.send(type="move", game=match.id, move="9-13", ply=0, ref="m1")
        error = await a.error()
        assert (error["code"], error["ref"]) == ("capture_required", "m1")
        assert "14" in error["message"]
        event = await match.play("14x23")
        assert event["ply"] == 1
    assert await stored_moves(server, match.id) == ["14x23"]


async def test_move_errors_name_the_problem(server: Served) -> None:
    async with guest(server.url) as a, guest(server.url) as b, guest(server.url) as c:
        match = await start_game(a, b)
        await b.send(type="move", game=match.id, move="22-18", ply=0)
        assert (await b.error())["code"] == "not_your_turn"
        await a.send(type="move", game=match.id, move="11-15", ply=3)
        assert (await a.error())["code"] == "stale_ply"
        await a.send(type="move", game=match.id, move="11-19", ply=0)
        assert (await a.error())["code"] == "illegal_move"
        await a.send(type="move", game=match.id, move="eleven", ply=0)
        assert (await a.error())["code"] == "invalid_move"
        await c.send(type="move", game=match.id, move="11-15", ply=0)
        assert (await c.error())["code"] == "not_a_player"
        await a.send(type="move", game=999, move="11-15", ply=0)
        assert (await a.error())["code"] == "not_found"
        await match.play("11-15")
        await a.send(type="move", game=match.id, move="15-19", ply=1)
        assert (await a.error())["code"] == "not_your_turn"
        await a.send(type="resign", game=match.id)
        await a.expect("game_ended")
        await b.send(type="move", game=match.id, move="22-18", ply=1)
        assert (await b.error())["code"] == "game_over"
    assert await stored_moves(server, match.id) == ["11-15"]


async def test_an_ambiguous_short_capture_asks_for_the_path(server: Served) -> None:
    async with guest(server.url) as a, guest(server.url) as b:
        match = await start_game(a, b, start_fen="W:W30:B10,11,17,18,25,26")
        await b.send(type="move", game=match.id, move="30x7", ply=0)
        error = await b.error()
        assert error["code"] == "ambiguous_move"
        assert "30x23x14x7" in error["message"] and "30x21x14x7" in error["message"]


async def test_of_two_racing_submissions_of_one_ply_exactly_one_is_accepted(
    server: Served,
) -> None:
    token = await guest_token(server.url)
    async with (
        connect(server.url, token) as a,
        connect(server.url, token) as a2,
        guest(server.url) as b,
    ):
        match = await start_game(a, b)
        await a2.send(type="watch", table=match.table["id"])
        await a2.expect("table")
        # The same player, from two sockets, sends two different moves for ply 0 at once.
        await asyncio.gather(
            a.send(type="move", game=match.id, move="11-15", ply=0),
            a2.send(type="move", game=match.id, move="9-13", ply=0),
        )
        accepted = await b.expect("move")
        loser = a2 if accepted["move"] == "11-15" else a
        assert (await loser.error())["code"] == "stale_ply"
        await b.send(type="ping", t=1)
        await b.expect("pong")
        assert [m for m in b.seen if m["type"] == "move"] == [accepted]
    assert await stored_moves(server, match.id) == [accepted["move"]]


async def test_resignation_ends_the_game_for_everyone(server: Served) -> None:
    async with guest(server.url) as a, guest(server.url) as b, connect(server.url) as watcher:
        match = await start_game(a, b)
        await watcher.send(type="watch", table=match.table["id"])
        await watcher.expect("table")
        await match.play("11-15")
        await b.send(type="resign", game=match.id)
        for client in (a, b, watcher):
            ended = await client.expect("game_ended")
            assert (ended["result"], ended["termination"]) == ("1-0", "resignation")
    row = await stored_game(server, match.id)
    assert (row.result, row.termination) == ("1-0", "resignation")


async def test_a_draw_is_offered_declined_then_agreed(server: Served) -> None:
    async with guest(server.url) as a, guest(server.url) as b:
        match = await start_game(a, b)
        await a.send(type="draw_offer", game=match.id)
        assert (await b.expect("draw_offered"))["by"] == "black"
        await a.send(type="draw_offer", game=match.id)
        assert (await a.error())["code"] == "draw_offer_limit"
        await b.send(type="draw_decline", game=match.id)
        assert (await a.expect("draw_declined"))["by"] == "white"
        await a.send(type="draw_accept", game=match.id)
        assert (await a.error())["code"] == "no_draw_offer"
        await match.play("11-15")
        await b.send(type="draw_offer", game=match.id)
        await a.expect("draw_offered")
        await a.send(type="draw_accept", game=match.id)
        ended = await b.expect("game_ended")
        assert (ended["result"], ended["termination"], ended["winner"]) == (
            "1/2-1/2",
            "agreement",
            None,
        )


async def test_abort_is_allowed_only_before_ones_first_move(server: Served) -> None:
    async with guest(server.url) as a, guest(server.url) as b:
        match = await start_game(a, b)
        await match.play("11-15")
        await a.send(type="abort", game=match.id)
        assert (await a.error())["code"] == "too_early"
        await b.send(type="abort", game=match.id)
        ended = await a.expect("game_ended")
        assert (ended["result"], ended["termination"]) == ("*", "aborted")
    row = await stored_game(server, match.id)
    assert row.status == "aborted"


async def test_a_rematch_swaps_colours_and_leaving_hands_the_table_over(server: Served) -> None:
    async with guest(server.url) as a, guest(server.url) as b:
        match = await start_game(a, b)
        await a.send(type="rematch", table=match.table["id"])
        assert (await a.error())["code"] == "too_early"
        await a.send(type="leave", table=match.table["id"])
        assert (await a.error())["code"] == "game_in_progress"
        await a.send(type="resign", game=match.id)
        await b.expect("game_ended")
        await a.send(type="rematch", table=match.table["id"])
        assert (await b.expect("rematch_offered"))["by"]["id"] == a.user_id
        await b.send(type="rematch", table=match.table["id"])
        second = (await a.expect("game_started"))["game"]
        assert second["id"] != match.id
        assert (second["black"]["id"], second["white"]["id"]) == (b.user_id, a.user_id)
        await b.send(type="abort", game=second["id"])
        await a.expect("game_ended")
        await b.send(type="leave", table=match.table["id"])
        update = await a.expect("table_update", table=match.table["id"])
        while update["state"]["status"] != "open":
            update = await a.expect("table_update", table=match.table["id"])
        assert [p["id"] for p in update["state"]["players"]] == [a.user_id]
        await a.send(type="leave", table=match.table["id"])
        assert (await a.expect("table_closed"))["table"] == match.table["id"]
