"""The ballot deck: legal openings, their positions, drawing without repeats, match scores; and
the deck rebuilt from the master games and the engine."""

from __future__ import annotations

import random
from functools import cache
from pathlib import Path

import pytest

from app.rules import ENGLISH, Game
from app.rules.pdn import PdnGame, read_games
from app.tournaments import deck_build
from app.tournaments.ballot import (
    DECK,
    GO_AS_YOU_PLEASE,
    Opening,
    draw,
    match_score,
    opening,
    parse_deck,
)

DATA = Path(__file__).resolve().parents[1] / "data"
DECK_SIZE = 63
"""As docs/tournaments.md and app/tournaments/deck_build.py state it."""


@cache
def master_games() -> list[PdnGame]:
    return [
        game
        for path in sorted(DATA.glob("*.pdn"))
        for game in read_games(path.read_text(encoding="utf-8", errors="replace"))
    ]


def test_the_deck_has_its_documented_size_and_no_repeats() -> None:
    assert len(DECK) == DECK_SIZE
    assert len({o.name for o in DECK}) == DECK_SIZE
    assert len({o.fen for o in DECK}) == DECK_SIZE


def test_every_opening_is_three_legal_moves_and_its_position() -> None:
    for ballot in DECK:
        game = Game.replay(ENGLISH, ballot.moves)
        assert len(ballot.moves) == 3
        assert tuple(str(m) for m in game.moves) == ballot.moves
        assert ballot.fen == game.fen()
        assert ballot.name == " ".join(ballot.moves)
        assert game.outcome() is None
        assert game.position.turn.value == "white"


def test_a_known_ballot_and_its_position() -> None:
    ballot = opening(["9-13", "22-18", "10-15"])
    assert ballot in DECK
    assert ballot.fen == "W:W18,21,23,24,25,26,27,28,29,30,31,32:B1,2,3,4,5,6,7,8,11,12,13,15"
    assert opening(["9-13", "22-17", "13-22"]).moves == ("9-13", "22-17", "13x22")


def test_go_as_you_please_is_the_start_position() -> None:
    assert GO_AS_YOU_PLEASE.moves == ()
    assert GO_AS_YOU_PLEASE.fen == ENGLISH.position().fen()


def test_every_opening_was_played_by_masters() -> None:
    played = deck_build.played_openings(master_games())
    assert {o.moves for o in DECK} <= played


def test_openings_of_the_deck_are_balanced_and_a_lopsided_one_is_not() -> None:
    rng = random.Random(1)
    for ballot in rng.sample(DECK, 2):
        assert deck_build.balanced(ballot.moves)
    assert not deck_build.balanced(("9-13", "24-20", "13-17"))  # the man on 17 is lost


def test_draw_avoids_the_openings_already_used() -> None:
    rng = random.Random(3)
    used = {o.name for o in DECK[1:]}
    assert draw(rng, used) == DECK[0]
    drawn: set[str] = set()
    for _ in range(DECK_SIZE):
        drawn.add(draw(rng, drawn).name)
    assert len(drawn) == DECK_SIZE
    assert draw(rng, drawn) in DECK  # all used: any again
    with pytest.raises(ValueError):
        draw(rng, deck=())


def test_parse_deck_skips_comments_and_blank_lines() -> None:
    deck = parse_deck("# a deck\n\n11-15 23-19 8-11\n")
    assert deck == (opening(["11-15", "23-19", "8-11"]),)
    assert isinstance(deck[0], Opening)


def test_a_match_scores_the_sum_of_its_two_games() -> None:
    assert match_score([2, 0]) == 2
    assert match_score([2, 1]) == 3
    assert match_score([1, 1]) == 2


@pytest.mark.thorough
def test_the_shipped_deck_is_what_the_builder_makes() -> None:
    """About 8 s of CPU: a depth-9 search of each of the 63 openings masters played."""
    assert [o.moves for o in DECK] == deck_build.build_deck(master_games())
