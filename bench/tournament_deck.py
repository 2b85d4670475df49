"""Write the ballot deck (app/tournaments/deck.txt) from the master games in tests/data.

Usage: .venv/bin/python bench/tournament_deck.py [--check]

A depth-9 search of each 3-ply opening masters played (about 8 s of CPU); see
app/tournaments/deck_build.py for the rules. ``--check`` only compares with the shipped file.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from app.rules.pdn import read_games  # noqa: E402
from app.tournaments.deck_build import build_deck, deck_text  # noqa: E402

DECK = ROOT / "app" / "tournaments" / "deck.txt"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="compare, do not write")
    args = parser.parse_args()
    games = [
        game
        for path in sorted((ROOT / "tests" / "data").glob("*.pdn"))
        for game in read_games(path.read_text(encoding="utf-8", errors="replace"))
    ]
    text = deck_text(build_deck(games))
    if args.check:
        same = DECK.read_text(encoding="utf-8") == text
        print("deck.txt is up to date" if same else "deck.txt differs from the build")
        sys.exit(0 if same else 1)
    DECK.write_text(text, encoding="utf-8")
    print(f"wrote {DECK.relative_to(ROOT)}: {text.count(chr(10)) - 2} openings")


if __name__ == "__main__":
    main()
