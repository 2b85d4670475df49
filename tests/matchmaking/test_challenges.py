"""Challenges on a real server, over `/ws` and REST: the challenged player is told on every
connection; accepting starts an ordinary game once, even when two acceptances race;
declining and cancelling tell the other player; an expired challenge cannot be accepted.
Every test runs on SQLite and on PostgreSQL."""

from __future__ import annotations

import asyncio

import pytest

from app.matchmaking import challenges
from tests.conftest import make_settings
from tests.ratings.test_rating_play import member
from tests.support.inproc import served_here
from tests.support.server import Served
from tests.support.ws import Client, connect, guest, guest_token
from tests.support.ws import member_token as register


async def test_a_challenge_over_the_socket_is_told_everywhere_and_starts_a_game(
    server: Served,
) -> None:
    token_b = await guest_token(server.url)
    async with (
        guest(server.url) as a,
        connect(server.url, token_b) as b,
        connect(server.url, token_b) as b_again,
    ):
        name_b = b.welcome["user"]["name"]
        await a.send(
            type="challenge", user=name_b, clock={"base": 300, "increment": 3}, colour="white"
        )
        sent = (await a.expect("challenge_sent"))["challenge"]
        assert (sent["status"], sent["dest"]["name"], sent["colour"]) == (
            "created",
            name_b,
            "white",
        )
        assert sent["clock"] == {"base": 300, "increment": 3}
        for client in (b, b_again):
            told = (await client.expect("challenge"))["challenge"]
            assert told["id"] == sent["id"] and told["challenger"]["id"] == a.user_id
        await b.send(type="challenge_accept", challenge=sent["id"])
        started_a = await a.expect("your_game")
        started_b = await b.expect("your_game")
        await b_again.expect("your_game", game=started_b["game"])
        assert started_a["game"] == started_b["game"]
        assert (started_a["colour"], started_b["colour"]) == ("white", "black")
        # The game is like any other: watched, and played by its black player first.
        await b.send(type="watch", table=started_b["table"])
        table = await b.expect("table")
        assert table["table"]["clock"] == {"base": 300, "increment": 3}
        assert table["game"]["black"]["id"] == b.user_id
        await b.send(type="move", game=started_b["game"], move="11-15", ply=0)
        assert (await b.expect("move"))["move"] == "11-15"
        # Accepted once: a second acceptance is refused.
        await b.send(type="challenge_accept", challenge=sent["id"], ref="again")
        error = await b.error()
        assert (error["code"], error["ref"]) == ("not_found", "again")


async def test_declining_and_cancelling_tell_the_other_player(server: Served) -> None:
    async with guest(server.url) as a, guest(server.url) as b:
        name_b = b.welcome["user"]["name"]
        await a.send(type="challenge", user=name_b)
        first = (await a.expect("challenge_sent"))["challenge"]
        await b.expect("challenge")
        await b.send(type="challenge_decline", challenge=first["id"], reason="later")
        declined = (await a.expect("challenge_declined"))["challenge"]
        assert (declined["id"], declined["status"], declined["decline_reason"]) == (
            first["id"],
            "declined",
            "later",
        )
        await a.send(type="challenge", user=name_b)
        second = (await a.expect("challenge_sent"))["challenge"]
        await b.expect("challenge", challenge=second | {"status": "created"})
        await a.send(type="challenge_cancel", challenge=second["id"])
        canceled = (await b.expect("challenge_canceled"))["challenge"]
        assert canceled["status"] == "canceled"
        # Only the challenged player may accept; nobody may accept a cancelled challenge.
        await b.send(type="challenge_accept", challenge=second["id"])
        assert (await b.error())["code"] == "not_found"


async def test_bad_challenges_are_refused_with_a_reason(server: Served) -> None:
    async with guest(server.url) as a, guest(server.url) as b:
        await a.send(type="challenge", user="nobody-by-this-name", ref=1)
        assert (await a.error())["code"] == "not_found"
        await a.send(type="challenge", user=a.welcome["user"]["name"], ref=2)
        assert (await a.error())["code"] == "bad_message"
        await a.send(type="challenge", user=b.welcome["user"]["name"], rated=True, ref=3)
        assert (await a.error())["code"] == "rated_needs_account"
        await a.send(type="challenge_decline", challenge=1, reason="because", ref=4)
        assert (await a.error())["code"] == "bad_message"
        # The computer never answers a challenge: its games start at once with play_ai.
        await a.send(type="challenge", user="AI level 3", ref=5)
        refused = await a.error()
        assert refused["code"] == "bad_message" and "play_ai" in refused["message"]


async def test_rest_challenges_in_lichess_shape_and_two_acceptances_start_one_game(
    server: Served,
) -> None:
    alice, bob = await register(server.url, "alice"), await register(server.url, "bob")
    async with server.http() as http, member(server.url, "carol") as c:
        made = await http.post(
            "/api/challenge/bob",
            json={"rated": True, "clock": {"base": 600, "increment": 5}, "color": "black"},
            headers={"Authorization": f"Bearer {alice}"},
        )
        assert made.status_code == 200, made.text
        challenge = made.json()
        assert (challenge["rated"], challenge["colour"], challenge["variant"]) == (
            True,
            "black",
            "english",
        )
        listed = await http.get("/api/challenge", headers={"Authorization": f"Bearer {bob}"})
        assert [x["id"] for x in listed.json()["in"]] == [challenge["id"]]
        assert listed.json()["out"] == []
        as_bob = {"Authorization": f"Bearer {bob}"}
        url = f"/api/challenge/{challenge['id']}/accept"
        answers = await asyncio.gather(
            http.post(url, headers=as_bob), http.post(url, headers=as_bob)
        )
        assert sorted(r.status_code for r in answers) == [200, 409]
        accepted = next(r.json() for r in answers if r.status_code == 200)["challenge"]
        assert accepted["status"] == "accepted" and accepted["game"] is not None
        game = (await http.get(f"/api/games/{accepted['game']}")).json()
        assert (game["black"], game["white"], game["rated"]) == (
            "alice",
            "bob",
            True,
        )
        # Not for others, and refused without a token.
        other = await http.post(
            f"/api/challenge/{challenge['id']}/decline",
            headers={"Authorization": f"Bearer {alice}"},
        )
        assert (other.status_code, other.json()["error"]) == (409, "not_found")
        assert (await http.post("/api/challenge/bob")).status_code == 401
        assert (await http.post(f"/api/challenge/{c.user_id}x/accept")).status_code in (401, 422)


async def test_an_expired_challenge_cannot_be_accepted(
    server: Served, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(challenges, "CHALLENGE_SECONDS", 0)
    async with guest(server.url) as a, guest(server.url) as b:
        await a.send(type="challenge", user=b.welcome["user"]["name"])
        sent = (await a.expect("challenge_sent"))["challenge"]
        assert sent["status"] == "expired"
        await b.send(type="challenge_accept", challenge=sent["id"])
        assert (await b.error())["code"] == "not_found"


async def test_a_challenge_and_cancel_loop_is_limited_per_pair_and_per_recipient(
    db_url: str,
) -> None:
    """A player cannot flood another with challenge notices by challenging and cancelling in a
    loop (`CHALLENGES_PER_PAIR`), nor can several players together
    (`CHALLENGES_PER_RECIPIENT`): the challenge past either is refused `rate_limited` (REST 429
    with Retry-After) and its recipient hears nothing of it."""
    settings = make_settings(database_url=db_url, challenges_per_pair=3, challenges_per_recipient=5)
    async with served_here(settings) as server, guest(server.url) as target:
        name = target.welcome["user"]["name"]

        async def loop(challenger: Client, times: int) -> list[str]:
            """Challenge and cancel `times` times; the error codes of the refused ones."""
            codes = []
            for n in range(times):
                await challenger.send(type="challenge", user=name, ref=n)
                answer = await challenger.recv()
                while answer["type"] not in ("challenge_sent", "error"):
                    answer = await challenger.recv()
                if answer["type"] == "error":
                    codes.append(answer["code"])
                    continue
                await challenger.send(type="challenge_cancel", challenge=answer["challenge"]["id"])
                await challenger.expect("challenge_canceled")
            return codes

        async with guest(server.url) as a, guest(server.url) as b, guest(server.url) as c:
            assert await loop(a, 5) == ["rate_limited"] * 2  # 3 per pair
            assert await loop(b, 1) == []
            assert await loop(c, 2) == ["rate_limited"]  # 5 per recipient: a's 3, b's, c's
            token = await guest_token(server.url)
            async with server.http() as http:
                refused = await http.post(
                    f"/api/challenge/{name}", headers={"Authorization": f"Bearer {token}"}
                )
            assert refused.status_code == 429, refused.text
            assert refused.json()["error"] == "rate_limited"
            assert int(refused.headers["Retry-After"]) > 0
            # Others are challenged as before.
            other = a.welcome["user"]["name"]
            await b.send(type="challenge", user=other)
            await b.expect("challenge_sent")
        await target.send(type="ping", t=0)
        await target.expect("pong")
        told = [m for m in target.seen if m["type"] == "challenge"]
        assert len(told) == 5
