"""Issue 32, the server's part, over /ws: tables against the computer close once their game has
ended and the player has left the page; finished tables never count towards TABLES_PER_USER,
and the refusal names the tables that count; takebacks; the spectator count; games aborted
before they began kept out of the archive's listings and counts."""

from __future__ import annotations

import json
from typing import Any

import pytest

from app.config import Settings
from tests.conftest import make_settings
from tests.support.server import Served
from tests.support.ws import Client, connect, guest, guest_token, member_token, start_game

pytestmark = pytest.mark.timeout(60)


@pytest.fixture
def settings(db_url: str) -> Settings:
    # The seat of a player who left is kept a minute, as in production: what happens at once
    # is not the grace period's doing.
    return make_settings(database_url=db_url, disconnect_grace_seconds=60)


async def ai_game(client: Client, **options: Any) -> dict[str, Any]:
    """A game against the computer (level 1, the player Black); its table snapshot."""
    await client.send(type="play_ai", level=1, colour="black", **options)
    snapshot = await client.expect("table")
    assert snapshot["game"] is not None
    return snapshot


async def resign(client: Client, snapshot: dict[str, Any]) -> None:
    await client.send(type="resign", game=snapshot["game"]["id"])
    await client.expect("game_ended", game=snapshot["game"]["id"])


async def test_three_quick_games_against_the_computer_never_lock_the_player_out(
    server: Served,
) -> None:
    async with guest(server.url) as player:
        for _ in range(4):  # three, then a fourth: finished tables do not count
            await resign(player, await ai_game(player))
        snapshot = await ai_game(player)
        assert snapshot["game"]["status"] == "playing"


async def test_a_finished_table_against_the_computer_closes_when_the_player_leaves_its_page(
    server: Served,
) -> None:
    async with guest(server.url) as player, connect(server.url) as spectator:
        snapshot = await ai_game(player)
        table = snapshot["table"]["id"]
        await spectator.send(type="watch", table=table)
        await spectator.expect("table")
        await resign(player, snapshot)
        await player.send(type="unwatch", table=table)
        closed = await spectator.expect("table_closed", table=table)
        assert closed["reason"] == "everyone left"


async def test_a_table_against_the_computer_in_progress_stays_when_its_page_is_left(
    server: Served,
) -> None:
    async with guest(server.url) as player:
        snapshot = await ai_game(player)
        table = snapshot["table"]["id"]
        await player.send(type="unwatch", table=table)
        await player.send(type="watch", table=table)
        again = await player.expect("table")
        assert again["table"]["status"] == "playing"


async def test_the_refusal_names_the_tables_that_count(server: Served) -> None:
    async with guest(server.url) as player:
        await resign(player, await ai_game(player))  # ended, so not counted
        opened = []
        for _ in range(2):
            await player.send(type="open", room="english-casual")
            opened.append((await player.expect("table"))["table"]["id"])
        playing = (await ai_game(player))["table"]["id"]
        await player.send(type="open", room="english-casual", ref=7)
        refused = await player.error()
        assert refused["code"] == "too_many_tables" and refused["ref"] == 7
        assert refused["tables"] == [
            {"id": opened[0], "status": "open"},
            {"id": opened[1], "status": "open"},
            {"id": playing, "status": "playing"},
        ]
        for table_id in (*opened, playing):
            assert str(table_id) in refused["message"]


# --- takebacks ---------------------------------------------------------------------------


async def stored_game(server: Served, game_id: int) -> tuple[list[str], str]:
    """The game's moves as the archive stores them, and its PDN."""
    async with server.http() as rest:
        game = (await rest.get(f"/api/games/{game_id}")).json()
        pdn = (await rest.get(f"/api/games/{game_id}.pdn")).text
    return [m["move"] for m in game["moves"]], pdn


async def test_a_takeback_asked_and_accepted_removes_the_move_from_the_record(
    server: Served,
) -> None:
    async with guest(server.url) as a, guest(server.url) as b, connect(server.url) as watcher:
        match = await start_game(a, b, clock={"base": 300, "increment": 2})
        await watcher.send(type="watch", table=match.table["id"])
        await watcher.expect("table")
        after_two = await match.play("11-15", "23-19")
        await match.play("8-11")
        await a.send(type="takeback_offer", game=match.id)
        asked = await b.expect("takeback_offered", game=match.id)
        assert asked["by"] == "black"
        assert (await watcher.expect("takeback_offered"))["by"] == "black"
        # The request stands in a snapshot too.
        await watcher.send(type="watch", table=match.table["id"])
        assert (await watcher.expect("table"))["game"]["takeback_offer"] == "black"
        await b.send(type="takeback_accept", game=match.id)
        for client in (a, b, watcher):
            back = await client.expect("takeback", game=match.id)
            assert back["ply"] == 2 and back["turn"] == "black" and back["by"] == "black"
            assert back["fen"] == after_two["fen"]
            assert back["legal_moves"] == after_two["legal_moves"]
            assert back["clocks"] == after_two["clocks"]
        # The game goes on from there, with another move.
        match.ply, match.turn = 2, "black"
        await match.play("9-13")
        game, pdn = await stored_game(server, match.id)
        assert game == ["11-15", "23-19", "9-13"]
        assert "8-11" not in pdn and "9-13" in pdn


async def test_a_takeback_after_the_reply_takes_back_both_plies_and_may_be_declined(
    server: Served,
) -> None:
    async with guest(server.url) as a, guest(server.url) as b:
        match = await start_game(a, b)
        await match.play("11-15", "23-19")
        # Black asks after White's reply: both plies go.
        await a.send(type="takeback_offer", game=match.id)
        await b.expect("takeback_offered")
        await b.send(type="takeback_decline", game=match.id)
        declined = await a.expect("takeback_declined", game=match.id)
        assert declined["by"] == "white"
        await b.send(type="takeback_accept", game=match.id)
        assert (await b.error())["code"] == "no_takeback"
        await a.send(type="takeback_offer", game=match.id)
        await b.expect("takeback_offered")
        await b.send(type="takeback_accept", game=match.id)
        back = await a.expect("takeback", game=match.id)
        assert back["ply"] == 0 and back["turn"] == "black"
        assert back["first_move_deadline"] is not None
        game, _ = await stored_game(server, match.id)
        assert game == []


async def test_takebacks_are_refused_where_they_are_off(server: Served) -> None:
    async with guest(server.url) as a, guest(server.url) as b:
        match = await start_game(a, b, takebacks=False)
        assert match.table["takebacks"] is False
        await match.play("11-15")
        await a.send(type="takeback_offer", game=match.id)
        assert (await a.error())["code"] == "takebacks_off"
    async with guest(server.url) as a, guest(server.url) as b:
        match = await start_game(a, b)
        await match.play("11-15")
        await b.send(type="takeback_offer", game=match.id)
        assert (await b.error())["code"] == "too_early"  # White has no move to take back


async def test_the_computer_accepts_a_takeback_at_once(server: Served) -> None:
    async with guest(server.url) as player:
        snapshot = await ai_game(player)
        assert snapshot["table"]["takebacks"] is True
        game = snapshot["game"]
        await player.send(type="move", game=game["id"], move="11-15", ply=0)
        await player.expect("move", game=game["id"], ply=2)  # the computer's reply
        await player.send(type="takeback_offer", game=game["id"])
        back = await player.expect("takeback", game=game["id"])
        assert back["ply"] == 0 and back["turn"] == "black"
        await player.send(type="move", game=game["id"], move="9-13", ply=0)
        await player.expect("move", game=game["id"], ply=2)
        stored, _ = await stored_game(server, game["id"])
        assert stored[0] == "9-13" and len(stored) == 2


async def set_takebacks(server: Served, token: str, allowed: bool) -> None:
    """Change the account's takeback preference over REST, as its settings page does."""
    async with server.http() as rest:
        headers = {"Authorization": f"Bearer {token}"}
        before = (await rest.get("/api/account/preferences", headers=headers)).json()
        assert set(before) == {"takebacks"}
        changed = await rest.patch(
            "/api/account/preferences", json={"takebacks": allowed}, headers=headers
        )
        assert changed.status_code == 200, changed.text
        assert changed.json() == {"takebacks": allowed}


async def test_a_player_who_turned_takebacks_off_is_never_asked(server: Served) -> None:
    """lichess's "Takebacks: never": the tables such a player opens allow none, their seat says
    so (the client offers no button against them), a request to them is refused at once and
    they may not ask either; turned on again, takebacks are asked as before."""
    ann_token, ben_token = (
        await member_token(server.url, "ann"),
        await member_token(server.url, "ben"),
    )
    await set_takebacks(server, ben_token, False)
    async with connect(server.url, ann_token) as ann, connect(server.url, ben_token) as ben:
        await ben.send(type="open", room="english-casual")
        own = (await ben.expect("table"))["table"]
        assert own["takebacks"] is False
        assert own["players"][0]["takebacks"] is False
        await ben.send(type="leave", table=own["id"])
        match = await start_game(ann, ben)
        assert match.table["takebacks"] is True  # ann's table
        assert match.game["white"]["takebacks"] is False
        assert "takebacks" not in match.game["black"]  # said only when off
        await match.play("11-15")
        await ann.send(type="takeback_offer", game=match.id)
        refused = await ann.error()
        assert refused["code"] == "takebacks_off"
        assert "ben" in refused["message"] and "does not allow takebacks" in refused["message"]
        await match.play("23-19")
        await ben.send(type="takeback_offer", game=match.id)
        assert (await ben.error())["code"] == "takebacks_off"
        assert not [m for m in ann.seen + ben.seen if m["type"] == "takeback_offered"]
        await set_takebacks(server, ben_token, True)
        await ann.send(type="takeback_offer", game=match.id)
        await ben.expect("takeback_offered", game=match.id)


async def test_the_preferences_are_an_accounts_own(server: Served) -> None:
    async with server.http() as rest:
        assert (await rest.get("/api/account/preferences")).status_code == 401
        refused = await rest.patch("/api/account/preferences", json={"takebacks": False})
        assert refused.status_code == 401
        headers = {"Authorization": f"Bearer {await member_token(server.url, 'cora')}"}
        for body in ({"takebacks": "no"}, {"takebacks": 0}, {"colour": "red"}):
            bad = await rest.patch("/api/account/preferences", json=body, headers=headers)
            assert (bad.status_code, bad.json()["error"]) == (422, "bad_request"), body
        assert (await rest.get("/api/account/preferences", headers=headers)).json() == {
            "takebacks": True
        }


# --- the spectator count at the table ------------------------------------------------------


async def test_the_tables_watchers_are_told_how_many_watch(server: Served) -> None:
    async with guest(server.url) as a, guest(server.url) as b:
        match = await start_game(a, b)
        table = match.table["id"]
        for player in (a, b):  # the notices are asked for
            await player.send(type="watch", table=table, spectators=True)
            await player.expect("table")
        async with connect(server.url) as one:
            await one.send(type="watch", table=table, spectators=True)
            assert (await one.expect("table"))["table"]["spectators"] == 1
            assert (await a.expect("spectators", table=table))["count"] == 1
            async with guest(server.url) as two:
                await two.send(type="watch", table=table)
                assert (await two.expect("table"))["table"]["spectators"] == 2
                for client in (a, b, one):
                    await client.expect("spectators", table=table, count=2)
            await a.expect("spectators", table=table, count=1)
        await b.expect("spectators", table=table, count=0)
        # Never stored: a resume from the log replays none.
        await a.send(type="watch", table=table, since=0, epoch="log")
        await a.expect("synced", table=table)
        assert not [m for m in a.seen[-30:] if m["type"] == "spectators" and "v" in m]


async def test_sitting_down_makes_a_spectator_a_player_in_the_count(server: Served) -> None:
    async with guest(server.url) as a, guest(server.url) as b:
        await a.send(type="open", room="english-casual")
        table = (await a.expect("table"))["table"]["id"]
        await a.send(type="watch", table=table, spectators=True)
        await a.expect("table")
        await b.send(type="watch", table=table)
        await b.expect("table")
        await a.expect("spectators", table=table, count=1)
        await b.send(type="sit", table=table)
        await a.expect("spectators", table=table, count=0)


async def test_a_spectator_sitting_down_through_another_process_leaves_the_count(
    two_servers: list[Served],
) -> None:
    """Each process counts its own watchers, but who sits is known from the table's events,
    from whichever process they come: a process that did not seat the player counts again."""
    first, second = two_servers
    async with guest(first.url) as a:
        await a.send(type="open", room="english-casual")
        table = (await a.expect("table"))["table"]["id"]
        await a.send(type="watch", table=table, spectators=True)
        await a.expect("table")
        token = await guest_token(first.url)
        async with connect(first.url, token) as watching, connect(second.url, token) as sitting:
            await watching.send(type="watch", table=table)
            await watching.expect("table")
            await a.expect("spectators", table=table, count=1)
            await sitting.send(type="sit", table=table)  # the same person, on the other process
            await a.expect("game_started", table=table)
            await a.expect("spectators", table=table, count=0)


async def test_a_takeback_on_one_process_is_followed_by_the_other(
    two_servers: list[Served],
) -> None:
    """Black on one process, White on another: the process that did not store the takeback
    drops its copy of the game, so that the next move there is played on the position after
    it (not refused as stale, nor played on the position before it)."""
    first, second = two_servers
    async with guest(first.url) as a, guest(second.url) as b:
        match = await start_game(a, b)
        await match.play("11-15", "23-19", "8-11")
        await a.send(type="takeback_offer", game=match.id)
        await b.expect("takeback_offered")
        # A snapshot served by the first process caches the game there again (at ply 3).
        async with connect(first.url) as watcher:
            await watcher.send(type="watch", table=match.table["id"])
            assert (await watcher.expect("table"))["game"]["ply"] == 3
        await b.send(type="takeback_accept", game=match.id)
        await a.expect("takeback", game=match.id, ply=2)
        match.ply, match.turn = 2, "black"
        await match.play("9-13", "22-18")
        moves, _ = await stored_game(first, match.id)
        assert moves == ["11-15", "23-19", "9-13", "22-18"]


# --- games aborted before they began: kept, neither listed nor counted ----------------------


async def test_a_game_aborted_before_it_began_is_neither_listed_nor_counted(
    server: Served, settings: Settings
) -> None:
    """As lichess hides its aborted games: a game that ended before both sides had made a
    first move (the Abort button, a first move not made in time) stays stored and answers by
    its id, but no listing, export or game count shows it."""
    async with guest(server.url) as a, guest(server.url) as b:
        pressed = await start_game(a, b)
        await b.send(type="abort", game=pressed.id)
        await a.expect("game_ended", game=pressed.id, termination="aborted")
        late = await start_game(a, b)
        await late.play("11-15")  # Black moved; White never does
        server.clock.advance(settings.first_move_seconds)
        await a.expect("game_ended", game=late.id, termination="aborted")
        played = await start_game(a, b)
        await played.play("11-15", "23-19")
        await a.send(type="resign", game=played.id)
        await a.expect("game_ended", game=played.id)
        name = a.welcome["user"]["name"]
    async with server.http() as rest:
        listings = [
            ("/api/games", {}),
            ("/api/games", {"player": name}),
            ("/api/games", {"status": "aborted"}),
            ("/api/games", {"termination": "aborted"}),
            (f"/api/players/{name}/games", {}),
            (f"/api/players/{name}/games", {"result": "*"}),
        ]
        for path, params in listings:
            page = (await rest.get(path, params=params)).json()
            shown = [] if params.keys() & {"status", "termination", "result"} else [played.id]
            assert ([g["id"] for g in page["data"]], page["count"]) == (shown, len(shown)), params
        export = await rest.get("/api/games/export", params={"player": name, "format": "ndjson"})
        assert [json.loads(line)["id"] for line in export.text.splitlines()] == [played.id]
        profile = (await rest.get(f"/api/players/{name}")).json()
        english = profile["variants"]["english"]
        assert (profile["games"], english["games"], english["losses"]) == (1, 1, 1)
        for aborted in (pressed, late):  # looked up by its id, it is still there
            game = (await rest.get(f"/api/games/{aborted.id}")).json()
            assert (game["status"], game["termination"]) == ("aborted", "aborted")


async def test_an_account_whose_games_were_all_aborted_has_played_none(server: Served) -> None:
    """Upgrading to a bot account needs an account that has played no game: an aborted one
    does not count (as on lichess)."""
    token = await member_token(server.url, "cleo")
    async with connect(server.url, token) as cleo, guest(server.url) as other:
        match = await start_game(cleo, other)
        await cleo.send(type="abort", game=match.id)
        await other.expect("game_ended", game=match.id, termination="aborted")
    async with server.http() as rest:
        upgraded = await rest.post(
            "/api/bot/account/upgrade", headers={"Authorization": f"Bearer {token}"}
        )
    assert upgraded.status_code == 200, upgraded.text
