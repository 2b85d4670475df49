"""The opening book: built from the public master games, shipped in the package, used by the
strong levels only."""

from __future__ import annotations

import gzip
import subprocess
import sys
from importlib import resources
from pathlib import Path

from app.engine import level_limits, search_position
from app.engine.book import BOOK_FILE, book_moves, shipped_book
from app.rules import get_variant

DATA = Path(__file__).parent.parent / "data"
MASTER_GAMES = ["OCA_2.0.pdn", "Principles_of_Strategy.pdn", "inferno.pdn"]


def test_the_shipped_book_is_what_build_book_makes_from_the_master_games(tmp_path: Path) -> None:
    output = tmp_path / "book.txt.gz"
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "app.cli",
            "build-book",
            "--output",
            str(output),
            *(str(DATA / name) for name in MASTER_GAMES),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert run.returncode == 0, run.stderr
    assert run.stdout.startswith("positions=")
    shipped = resources.files("app.engine").joinpath(BOOK_FILE).read_bytes()
    assert gzip.decompress(output.read_bytes()) == gzip.decompress(shipped)


def test_every_book_move_is_legal_where_the_book_gives_it() -> None:
    book = shipped_book()
    assert len(book) > 500
    for (variant, fen), moves in book.items():
        position = get_variant(variant).position(fen)
        assert set(moves) <= set(position.legal_move_texts()), fen
        assert book_moves(position) == moves


def test_strong_levels_play_from_the_book_and_weak_levels_do_not() -> None:
    start = get_variant("english").position()
    for level in (5, 8):
        result = search_position(start, level_limits(level, seed=1))
        assert result.book and result.move in book_moves(start)
    weak = search_position(start, level_limits(1, seed=1))
    assert not weak.book and weak.nodes > 0


def test_build_book_refuses_bad_arguments() -> None:
    run = subprocess.run(
        [sys.executable, "-m", "app.cli", "build-book", "--output", "/dev/null", "missing.pdn"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert run.returncode == 2
    assert run.stderr.count("\n") == 1 and "cannot read missing.pdn" in run.stderr
