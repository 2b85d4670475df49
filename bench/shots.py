"""Select the shot problems the engine's tests use (tests/engine/test_shots.py).

Usage: .venv/bin/python bench/shots.py [--depth 7]

A problem of tests/data/goulds.pdn or beginner.pdn qualifies when the side to move is the side
the Result tag says wins and a plain material minimax (the rules' public API only, no engine
code: pieces counted, captures played out at the horizon) finds exactly one first move that wins
at least one piece (or the game) within ``--depth`` plies. Prints one line per problem: event,
FEN, the winning move, the gain.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from app.rules import Color, Position, get_variant
from app.rules.pdn import read_games

DATA = Path(__file__).resolve().parents[1] / "tests" / "data"
WON = 100


def balance(position: Position) -> int:
    """Pieces of the side to move minus the opponent's."""
    return position.count(position.turn) - position.count(position.turn.other)


def minimax(position: Position, depth: int, alpha: int, beta: int) -> int:
    moves = position.legal_moves()
    if not moves:
        return -WON
    if depth <= 0 and not moves[0].is_capture:
        return balance(position)
    for move in moves:
        score = -minimax(position.play(move), depth - 1, -beta, -alpha)
        if score > alpha:
            alpha = score
            if alpha >= beta:
                break
    return alpha


def shot(position: Position, depth: int) -> tuple[str, int] | None:
    """The one first move that wins material within ``depth`` plies, and its gain, or None."""
    now = balance(position)
    scores = {
        str(move): -minimax(position.play(move), depth - 1, -WON - 1, WON + 1)
        for move in position.legal_moves()
    }
    best = max(scores.values())
    winners = [move for move, score in scores.items() if score == best]
    if len(winners) != 1 or best < now + 1:
        return None
    second = max((s for m, s in scores.items() if m != winners[0]), default=-WON)
    if second >= now + 1:
        return None  # another move wins material too: not a problem with one answer
    return winners[0], best - now


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--depth", type=int, default=7)
    args = parser.parse_args()
    english = get_variant("english")
    for name in ("goulds.pdn", "beginner.pdn"):
        with open(DATA / name, encoding="utf-8") as stream:
            for record in read_games(stream):
                if not record.fen or record.result is None or record.result.winner is None:
                    continue
                position = english.position(record.fen)
                winner = record.result.winner
                if position.turn is not winner or len(position.legal_moves()) < 2:
                    continue
                found = shot(position, args.depth)
                if found:
                    side = "B" if winner is Color.BLACK else "W"
                    event = record.tags.get("Event", "")
                    print(f"{event}\t{side}\t{position.fen()}\t{found[0]}\t{found[1]}")


if __name__ == "__main__":
    main()
