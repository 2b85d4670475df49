"""Endings the server records by itself: repetition, move limits, pool 3 kings v 1, flags, and
wins claimed against a player who went away. Tables start from a FEN to reach them quickly."""

from __future__ import annotations

from collections import Counter

from app.rules import Game, get_variant
from tests.support.server import Served
from tests.support.ws import guest, start_game


def quiet_walk(variant: str, fen: str) -> list[str]:
    """Moves that capture nothing, allow no capture and revisit positions as little as possible,
    played until the rules end the game: a way to reach the move-limit and kings-endgame draws."""
    game = Game(get_variant(variant), start_fen=fen)
    seen = Counter([game.position.key()])
    moves: list[str] = []
    while game.outcome() is None:
        choices = []
        for move in game.legal_moves():
            after = game.position.play(move)
            if not move.is_capture and not any(m.is_capture for m in after.legal_moves()):
                choices.append((seen[after.key()], str(move), after))
        _, text, after = min(choices, key=lambda c: c[0])
        game.play(text)
        seen[after.key()] += 1
        moves.append(text)
    return moves


async def test_fivefold_repetition_is_a_draw(server: Served) -> None:
    async with guest(server.url) as a, guest(server.url) as b:
        match = await start_game(a, b, start_fen="B:WK32:BK1", clock=None)
        shuffle = ["1-6", "32-27", "6-1", "27-32"]
        last = await match.play(*(shuffle * 4))
        assert last["ply"] == 16 and last["legal_moves"] == []
        ended = await a.expect("game_ended")
        assert (ended["result"], ended["termination"]) == ("1/2-1/2", "repetition")
        await b.expect("game_ended")


async def test_the_40_move_rule_is_a_draw(server: Served) -> None:
    moves = quiet_walk("english", "B:WK29,K32:BK1,K4")
    assert len(moves) == 80
    async with guest(server.url) as a, guest(server.url) as b:
        match = await start_game(a, b, start_fen="B:WK29,K32:BK1,K4")
        await match.play(*moves)
        ended = await b.expect("game_ended")
        assert (ended["result"], ended["termination"]) == ("1/2-1/2", "move_limit")


async def test_pool_three_kings_against_one_is_a_draw(server: Served) -> None:
    fen = "W:WK30,K31,K32:BK4"
    moves = quiet_walk("pool", fen)
    async with guest(server.url) as a, guest(server.url) as b:
        match = await start_game(a, b, room="pool", start_fen=fen, clock=None)
        assert match.game["variant"] == "pool" and match.turn == "white"
        await match.play(*moves)
        ended = await a.expect("game_ended")
        assert (ended["result"], ended["termination"]) == ("1/2-1/2", "kings_endgame")


async def test_a_flag_falls_with_nobody_sending_anything(server: Served) -> None:
    async with guest(server.url) as a, guest(server.url) as b:
        match = await start_game(a, b, clock={"base": 1, "increment": 0})
        assert match.game["clocks"] == {"black": 1000, "white": 1000}
        await match.play("11-15", "22-18")  # the clocks run from here
        ended = await a.expect("game_ended")  # Black, to move, never moves
        assert (ended["result"], ended["termination"], ended["winner"]) == (
            "0-1",
            "timeout",
            "white",
        )
        assert ended["clocks"] == {"black": 0, "white": 1000}
        assert (await b.expect("game_ended"))["termination"] == "timeout"
        await a.send(type="move", game=match.id, move="15x22", ply=2)
        assert (await a.error())["code"] == "game_over"


async def test_the_increment_is_added_after_each_move(server: Served) -> None:
    async with guest(server.url) as a, guest(server.url) as b:
        match = await start_game(a, b, clock={"base": 60, "increment": 5})
        event = await match.play("11-15", "22-18", "15x22")  # the clocks run from ply 2
        assert 60_000 < event["clocks"]["black"] <= 65_000
        assert event["clocks"]["white"] == 60_000


async def test_a_win_is_claimed_against_a_player_who_stays_away(server: Served) -> None:
    async with guest(server.url) as a:
        async with guest(server.url) as b:
            match = await start_game(a, b)
            await match.play("11-15")
            await a.send(type="claim_win", game=match.id)
            assert (await a.error())["code"] == "too_early"
        away = await a.expect("player_away")
        assert away["colour"] == "white"
        server.clock.advance_past(away["claim_after"] / 1000)
        await a.send(type="claim_win", game=match.id)
        ended = await a.expect("game_ended")
        assert (ended["result"], ended["termination"]) == ("1-0", "abandoned")


async def test_a_claim_before_any_move_aborts_the_game(server: Served) -> None:
    async with guest(server.url) as a:
        async with guest(server.url) as b:
            match = await start_game(a, b)
        away = await a.expect("player_away")
        server.clock.advance_past(away["claim_after"] / 1000)
        await a.send(type="claim_win", game=match.id)
        ended = await a.expect("game_ended")
        assert (ended["result"], ended["termination"]) == ("*", "aborted")
