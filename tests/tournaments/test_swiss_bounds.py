"""Swiss pairing of large fields (issue 45): a round of up to 1,000 players (the most a
tournament takes) is paired within a bounded CPU time whatever the players' colour histories,
a mass of no-shows included, and the Swiss rules hold there as in small fields."""

from __future__ import annotations

import contextlib
import random
import signal
from collections.abc import Iterator
from types import FrameType

import pytest

from app.tournaments import swiss
from app.tournaments.settings import MAX_PLAYERS
from app.tournaments.swiss import Colour, SwissPlayer, SwissRound, pair_round
from tests.tournaments.test_swiss import Entrant, check_colours, check_round, play

CPU_SECONDS = 2.0  # a round's bound (docs/tournaments.md, bench/swiss.py)


class TooSlow(Exception):
    pass


@contextlib.contextmanager
def cpu_limit(seconds: float) -> Iterator[None]:
    """Fail once this process has used `seconds` of CPU in the block (not waiting for a slow
    pairing to end)."""

    def expired(signum: int, frame: FrameType | None) -> None:
        raise TooSlow(f"more than {seconds} s of CPU")

    previous = signal.signal(signal.SIGPROF, expired)
    signal.setitimer(signal.ITIMER_PROF, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_PROF, 0)
        signal.signal(signal.SIGPROF, previous)


def paired(players: list[SwissPlayer]) -> SwissRound:
    with cpu_limit(CPU_SECONDS):
        return pair_round(players)


def field(pattern: str, size: int = MAX_PLAYERS, rounds: int = 6) -> list[SwissPlayer]:
    """`size` players after `rounds` rounds of random opponents and results, each with the
    colours of `pattern`: `same` (Black every round, so every pair wants one colour, from round 3
    absolutely), `alternating` (half from Black, half from White), `random`."""
    rng = random.Random(size + rounds)
    opponents: dict[int, set[int]] = {i: set() for i in range(size)}
    for _ in range(rounds):
        order = list(range(size))
        rng.shuffle(order)
        for a, b in zip(order[::2], order[1::2], strict=True):
            opponents[a].add(b)
            opponents[b].add(a)
    players = []
    for i in range(size):
        colours: tuple[Colour, ...]
        if pattern == "same":
            colours = ("black",) * rounds
        elif pattern == "alternating":
            colours = tuple("black" if (i + k) % 2 == 0 else "white" for k in range(rounds))
        else:
            colours = tuple(rng.choice(("black", "white")) for _ in range(rounds))
        points = sum(rng.choice((0, 1, 2)) for _ in range(rounds))
        rating = int(rng.gauss(1500, 300))
        players.append(SwissPlayer(i, rating, points, frozenset(opponents[i]), colours, False))
    return players


@pytest.mark.parametrize("pattern", ["same", "alternating", "random"])
def test_a_round_of_the_largest_field_is_paired_within_the_bound(pattern: str) -> None:
    players = field(pattern)
    round_ = paired(players)
    by_id = {p.id: p for p in players}
    seen = [p for pair in round_.pairs for p in pair]
    assert sorted(seen) == sorted(by_id) and round_.bye is None
    for black, white in round_.pairs:
        assert white not in by_id[black].opponents


def test_a_mass_of_no_shows_is_paired_quickly_and_keeps_the_colour_rules() -> None:
    """The reported case: Black loses every game on time, so each score group's colour
    history is one and the same; round 3 of 600 players took 70 s of CPU."""
    rng = random.Random(3)
    entrants = {i: Entrant(i, int(rng.gauss(1500, 300))) for i in range(600)}
    for _ in range(5):
        round_ = paired([e.frozen() for e in entrants.values()])
        check_round(entrants, round_)
        for black, white in round_.pairs:
            entrants[white].points += 2
            for one, other, colour in ((black, white, "black"), (white, black, "white")):
                entrants[one].opponents.add(other)
                entrants[one].colours.append(colour)  # type: ignore[arg-type]
        check_colours(entrants)


def test_a_large_field_keeps_every_rule_round_after_round() -> None:
    rng = random.Random(5)
    entrants = {i: Entrant(i, int(rng.gauss(1500, 300))) for i in range(301)}
    for _ in range(7):
        round_ = paired([e.frozen() for e in entrants.values()])
        check_round(entrants, round_)
        play(entrants, round_, rng)
        check_colours(entrants)
    assert sorted(e.byes for e in entrants.values()).count(1) == 7


def test_winners_meet_winners_in_a_large_field() -> None:
    rng = random.Random(8)
    entrants = {i: Entrant(i, 2400 - i) for i in range(400)}
    first = paired([e.frozen() for e in entrants.values()])
    for black, white in first.pairs:  # decisive results only
        winner, loser = (black, white) if rng.random() < 0.5 else (white, black)
        entrants[winner].points += 2
        for one, other in ((winner, loser), (loser, winner)):
            entrants[one].opponents.add(other)
            entrants[one].colours.append("black" if one == black else "white")
    second = paired([e.frozen() for e in entrants.values()])
    assert all(entrants[b].points == entrants[w].points for b, w in second.pairs)


def test_a_large_field_is_paired_the_same_whatever_the_order_given() -> None:
    players = field("random", size=500, rounds=4)
    shuffled = players[:]
    random.Random(1).shuffle(shuffled)
    assert paired(players) == paired(shuffled)


def test_the_chunks_of_a_large_field_are_even_and_hold_everyone_once() -> None:
    """White-box: each chunk is paired alone, so each holds an even count; every player is in
    exactly one; and a score group is dealt over all of them by colour wish."""
    players = field("random", rounds=3)
    ranked = sorted(players, key=lambda p: (-p.points, -p.rating, p.id))
    chunks = swiss._chunks(ranked, list(range(len(ranked))))
    assert len(chunks) == len(ranked) // swiss.CHUNK
    assert all(len(chunk) % 2 == 0 for chunk in chunks)
    assert sorted(i for chunk in chunks for i in chunk) == list(range(len(ranked)))
    top = ranked[0].points
    group = [i for i, p in enumerate(ranked) if p.points == top]
    if len(group) >= 2 * len(chunks):
        assert all(any(i in chunk for i in group) for chunk in chunks)
