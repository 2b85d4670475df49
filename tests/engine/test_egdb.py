"""The endgame database: its values follow from the rules' moves, agree with a direct search and
with the stated results of published endings; the build is deterministic; the strong levels
use it to win won endings and hold drawn ones against the rules' own game."""

from __future__ import annotations

import functools
import lzma
import subprocess
import sys
from importlib import resources
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from app.engine import Limits, level_limits, search_position
from app.engine.egdb import EGDB_FILE, Egdb, outcome, shipped_egdb, slice_positions, slices
from app.engine.egdb_build import build, extend
from app.engine.search import node_of
from app.rules import Game, Position, get_variant
from app.rules.board import Color
from app.rules.game import Result, Termination
from app.rules.pdn import read_games

ENGLISH = get_variant("english")
DATA = Path(__file__).parent.parent / "data"


@functools.cache
def small() -> Egdb:
    """Every position of three pieces or fewer (about two seconds to build)."""
    return build(3)


def shipped() -> Egdb:
    database = shipped_egdb()
    assert database is not None, "the package ships egdb.bin.xz"
    return database


def value(database: Egdb, position: Position) -> int:
    found = database.value(*node_of(position))
    assert found is not None
    return found


def expected(database: Egdb, position: Position) -> int:
    """The value one ply of the rules' public moves gives from the children's stored values:
    the quickest win, else a draw if any, else the longest loss."""
    children = []
    for move in position.legal_moves():
        child = position.play(move)
        children.append(value(database, child) if child.has_legal_moves() else 1)
    if not children:
        return 1
    wins = [v + 1 for v in children if v and (v - 1) % 2 == 0]
    if wins:
        return min(wins)
    if 0 in children:
        return 0
    return max(v + 1 for v in children)


def position_from(database: Egdb, seed: int) -> Position:
    """A stored position picked by ``seed``, with either side to move."""
    import random

    rng = random.Random(seed)
    while True:
        s = rng.choice(list(database.tables))
        a, b, c, d = s
        squares = rng.sample(range(32), a + b + c + d)
        men, kings = squares[:a], squares[a : a + b]
        opp_men, opp_kings = squares[a + b : a + b + c], squares[a + b + c :]
        if any(sq >= 28 for sq in men) or any(sq < 4 for sq in opp_men):
            continue
        black = {
            "black_men": sum(1 << sq for sq in men),
            "black_kings": sum(1 << sq for sq in kings),
            "white_men": sum(1 << sq for sq in opp_men),
            "white_kings": sum(1 << sq for sq in opp_kings),
        }
        position = Position(ENGLISH, Color.BLACK, **black)
        if rng.random() < 0.5:
            return position
        # The same material with White to move: turn the board half a round.
        turned = {
            "black_men": _turned(black["white_men"]),
            "black_kings": _turned(black["white_kings"]),
            "white_men": _turned(black["black_men"]),
            "white_kings": _turned(black["black_kings"]),
        }
        return Position(ENGLISH, Color.WHITE, **turned)


def _turned(mask: int) -> int:
    return sum(1 << (31 - i) for i in range(32) if mask >> i & 1)


@pytest.mark.thorough
def test_every_position_of_three_pieces_follows_from_its_childrens_values() -> None:
    """With distances, this proves the table: a stored win or loss in ``d`` plies rests on
    children at ``d - 1``, down to a side without a move, and a real win or loss is found."""
    database = small()
    count = 0
    for s, men, kings, opp_men, opp_kings, stored in database.positions():
        position = Position(ENGLISH, Color.BLACK, men, kings, opp_men, opp_kings)
        assert stored == expected(database, position), (s, position.fen())
        count += 1
    assert count == sum(slice_positions(s) for s in slices(3)) == 199_520


@settings(max_examples=300, deadline=None)
@given(seed=st.integers(0, 2**32))
def test_shipped_positions_follow_from_their_childrens_values(seed: int) -> None:
    database = shipped()
    assert database.pieces >= 4
    position = position_from(database, seed)
    assert value(database, position) == expected(database, position), position.fen()


def direct(position: Position, depth: int) -> int | None:
    """The stored byte by plain search with the rules' public API, when the game ends within
    ``depth`` plies whatever the loser does (else None)."""
    return _direct(position, depth)


@functools.cache
def _direct(position: Position, depth: int) -> int | None:
    moves = position.legal_moves()
    if not moves:
        return 1
    if depth == 0:
        return None
    children = [_direct(position.play(move), depth - 1) for move in moves]
    wins = [v + 1 for v in children if v is not None and (v - 1) % 2 == 0]
    if wins:
        return min(wins)
    if all(v is not None for v in children):
        return max(v + 1 for v in children if v is not None)
    return None


@pytest.mark.thorough
@settings(max_examples=150, deadline=None)
@given(seed=st.integers(0, 2**32))
def test_the_database_agrees_with_a_direct_search(seed: int) -> None:
    database = shipped()
    position = position_from(database, seed)
    stored = value(database, position)
    found = direct(position, 5)
    if found is not None:
        assert stored == found, position.fen()
    elif stored:
        assert stored - 1 > 5, position.fen()


def test_known_endings() -> None:
    database = shipped()
    counts = {(s, o): 0 for s in ((0, 2, 0, 1), (0, 1, 0, 2), (0, 1, 0, 1)) for o in (1, 0, -1)}
    for s, _, _, _, _, stored in database.positions([s for s, _ in counts if _ == 0]):
        counts[(s, outcome(stored))] += 1
    # Two kings against one: never lost, won but for a few dozen positions where the two are
    # cornered and must give one away or stay shut in.
    assert counts[((0, 2, 0, 1), -1)] == 0 and counts[((0, 2, 0, 1), 0)] < 40
    assert value(database, ENGLISH.position("B:WK11:BK3,K4")) == 0  # 3-8: shut in the corner
    # The lone king to move loses but when it can take a king (or two) at once.
    lone = {o: counts[((0, 1, 0, 2), o)] for o in (1, 0, -1)}
    assert lone[-1] > 6 * (lone[0] + lone[1])
    assert outcome(value(database, ENGLISH.position("B:WK10,K19:BK6"))) == 1  # 6x15x24
    # One king against one: mostly drawn; a king driven into the single corner is caught.
    assert counts[((0, 1, 0, 1), 0)] > counts[((0, 1, 0, 1), 1)] + counts[((0, 1, 0, 1), -1)]
    assert value(database, ENGLISH.position("B:WK11:BK4")) == 3  # 4-8 11x4
    assert value(database, ENGLISH.position("B:WK19:BK1")) == 0


def stated_endings(pieces: int) -> list[tuple[str, str, Result]]:
    """(name, FEN, stated result) of the problems of Gould and the beginner's collection with
    ``pieces`` pieces or fewer."""
    out = []
    for name in ("goulds.pdn", "beginner.pdn"):
        with open(DATA / name, encoding="utf-8", errors="replace") as stream:
            for game in read_games(stream):
                if not game.fen or game.result not in set(Result) - {Result.UNFINISHED}:
                    continue
                position = ENGLISH.position(game.fen)
                if sum(position.count(c) for c in Color) <= pieces:
                    out.append((game.tags.get("Event", name), game.fen, game.result))
    return out


def test_published_endings_have_the_results_their_books_state() -> None:
    database = shipped()
    endings = stated_endings(database.pieces)
    assert len(endings) >= 60
    for name, fen, result in endings:
        position = ENGLISH.position(fen)
        want = 0 if result is Result.DRAW else 1 if result.winner is position.turn else -1
        assert outcome(value(database, position)) == want, (name, fen, result)


@pytest.mark.thorough
def test_the_build_is_deterministic_and_the_shipped_file_is_what_it_makes(
    tmp_path: Path,
) -> None:
    assert build(3).to_bytes() == small().to_bytes()
    output = tmp_path / "egdb.bin.xz"
    run = subprocess.run(
        [sys.executable, "-m", "app.cli", "build-egdb", "--pieces", "3", "--output", str(output)],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert run.returncode == 0, run.stderr
    assert run.stdout.startswith("pieces=3 positions=199520 ")
    assert Egdb.from_bytes(lzma.decompress(output.read_bytes())).to_bytes() == small().to_bytes()
    # The shipped four-piece file holds the three-piece one: the slices are solved alike.
    shipped_data = lzma.decompress(resources.files("app.engine").joinpath(EGDB_FILE).read_bytes())
    body = small().to_bytes().partition(b"\n")[2]
    assert shipped_data.partition(b"\n")[2].startswith(body)


def test_bad_arguments_and_bad_files_are_clear_errors(tmp_path: Path) -> None:
    run = subprocess.run(
        [sys.executable, "-m", "app.cli", "build-egdb", "--pieces", "9"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert run.returncode == 2 and run.stderr.strip() == (
        "checkers: error: --pieces must be 2 to 5, not 9"
    )
    with pytest.raises(ValueError, match="not an English endgame database"):
        Egdb.from_bytes(b"something else\n")
    with pytest.raises(ValueError, match="wrong length"):
        Egdb.from_bytes(small().to_bytes()[:-1])


def play_out(fen: str, black: Limits, white: Limits, plies: int = 200) -> Game:
    """A game from ``fen`` between two searches, under the rules' own game (its 40-move and
    repetition draws included)."""
    game = Game(ENGLISH, fen)
    history: list[Position] = []
    while game.outcome() is None and game.ply < plies:
        limits = black if game.position.turn is Color.BLACK else white
        result = search_position(game.position, limits, history)
        history.append(game.position)
        game.play(result.move)
    return game


STRONG = level_limits(8)
WITHOUT = Limits(depth=8)
"""A full-strength search of fixed depth without the database (the same on any machine)."""


@pytest.mark.parametrize(
    ("fen", "winner"),
    [
        ("W:WK1,K5:BK32", Color.WHITE),  # two kings against one, the lone one in the double corner
        ("B:WK29:BK3,K7", Color.BLACK),
        ("W:WK27,K23:BK28,12", Color.WHITE),  # Gould 1: two kings against a king and a man
        ("B:WK30,12:B13,5", Color.WHITE),  # Gould 5
        ("B:W15,K30:BK17,K32", Color.BLACK),  # only 17-14 wins (see below)
    ],
)
def test_the_strong_levels_win_won_endings_over_the_rules_game(fen: str, winner: Color) -> None:
    game = play_out(fen, STRONG, STRONG)
    end = game.outcome()
    assert end is not None and end.winner is winner, [str(m) for m in game.moves]
    assert end.termination is Termination.NO_MOVES


CHOICES = [
    ("B:W15,K30:BK17,K32", "17-14", "17-22"),  # a win; 17-22 lets it go to a draw
    ("B:W20,30:B27,K8", "8-11", "27-31"),  # a win; crowning at once only draws
    ("W:W22,K2:BK15,K24", "2-6", "22-17"),  # a draw; 22-17 loses
]
"""Three of the 3 in 150 random four-piece positions where the move matters in which an 8-ply
search without the database picks a move that changes the result (found with this search;
bench/egdb.py choices measures the share at level 8's movetime)."""


def result_after(position: Position, move: str) -> int:
    child = position.play(move)
    return -outcome(value(shipped(), child)) if child.has_legal_moves() else 1


@pytest.mark.parametrize(("fen", "keeps", "throws_away"), CHOICES)
def test_the_database_keeps_results_the_search_alone_throws_away(
    fen: str, keeps: str, throws_away: str
) -> None:
    position = ENGLISH.position(fen)
    best = outcome(value(shipped(), position))
    assert result_after(position, keeps) == best > result_after(position, throws_away)
    for limits in (STRONG, Limits(depth=8, egdb=True)):
        assert result_after(position, search_position(position, limits).move) == best


def test_without_the_database_an_eight_ply_search_throws_results_away() -> None:
    thrown = [
        fen
        for fen, _, _ in CHOICES
        if result_after(pos := ENGLISH.position(fen), search_position(pos, WITHOUT).move)
        < outcome(value(shipped(), pos))
    ]
    assert thrown  # all three with this search


def test_the_database_holds_a_drawn_ending_that_the_search_alone_loses() -> None:
    fen = "W:W22,K2:BK15,K24"
    held = play_out(fen, black=WITHOUT, white=STRONG).outcome()
    assert held is not None and held.winner is None
    lost = play_out(fen, black=STRONG, white=WITHOUT).outcome()
    assert lost is not None and lost.winner is Color.BLACK


@pytest.mark.thorough
def test_slices_of_one_piece_more_solve_from_the_smaller_database() -> None:
    """``extend`` (bench/egdb.py's five kings) gives the slices a full build gives."""
    kings = extend(small(), [(0, 2, 0, 2), (0, 3, 0, 1)])
    assert set(kings) == {(0, 2, 0, 2), (0, 3, 0, 1), (0, 1, 0, 3)}
    for s, table in kings.items():
        assert table == shipped().tables[s], s


@pytest.mark.parametrize("fen", ["W:WK1,K5:BK29", "B:WK29:BK3,K7", "W:WK27,K23:BK28,12"])
def test_pool_searches_do_not_read_the_english_database(fen: str) -> None:
    """Won in English, not in pool (the lone king on the long diagonal holds against flying
    kings): a pool search with the database asked for sees no forced win either."""
    assert outcome(value(shipped(), ENGLISH.position(fen))) == 1
    for limits in (Limits(depth=8, egdb=True), level_limits(7), level_limits(8)):
        result = search_position(get_variant("pool").position(fen), limits)
        assert abs(result.score) < 29_000, (limits, result)


@pytest.mark.parametrize(
    "fen",
    [
        "W:W18,K15,1:BK30,K26,2",  # beginner.pdn: a White man on White's crown row
        "B:W10,K15:B30,K2",  # a Black man on Black's crown row
    ],
)
def test_a_man_set_on_its_crown_row_is_not_in_the_database(fen: str) -> None:
    """A FEN may put a man on the row it is crowned on (a problem's typing slip); play never
    leaves one there. The database holds no such position, and searching it does not fail."""
    position = ENGLISH.position(fen)
    assert shipped().value(*node_of(position)) is None
    found = search_position(position, Limits(nodes=20_000, egdb=True, seed=0))
    assert found.move in position.legal_move_texts()
