"""Both generators agree with a slow, obvious one written from docs/rules.md on random positions.

The bitboard generators are checked against perft from the start, where kings are rare; random
placements with many kings (both colours, either side to move) reach the king rules: flying
kings, landing where the capture continues, captured pieces blocking, crowning mid-capture.
"""

from __future__ import annotations

import random

import pytest

from app.rules import get_variant

Board = dict[int, tuple[str, bool]]
"""square -> (colour "b"/"w", king)."""

DIRECTIONS = ((-1, -1), (-1, 1), (1, -1), (1, 1))


def coords(square: int) -> tuple[int, int]:
    row = (square - 1) // 4
    return row, 2 * ((square - 1) % 4) + (1 if row % 2 == 0 else 0)


def square_at(row: int, col: int) -> int | None:
    if 0 <= row < 8 and 0 <= col < 8 and (row + col) % 2 == 1:
        return row * 4 + col // 2 + 1
    return None


Move = tuple[tuple[int, ...], tuple[int, ...]]


def ray(board: Board, start: int, here: int, drow: int, dcol: int) -> list[int | None]:
    """The squares from ``here`` in one direction; None for each occupied one (the moving
    piece's start square counts as empty)."""
    row, col = coords(here)
    out: list[int | None] = []
    while (
        square := square_at(row + drow * (len(out) + 1), col + dcol * (len(out) + 1))
    ) is not None:
        out.append(None if square in board and square != start else square)
    return out


def jumps(
    variant: str, board: Board, turn: str, start: int, here: int, path: list[int], taken: list[int]
) -> list[Move]:
    """Every complete capture going on from ``here``; empty when none can."""
    king = board[start][1]
    flying = king and variant == "pool"
    row, col = coords(here)
    done: list[Move] = []
    for drow, dcol in DIRECTIONS:
        if not king and variant == "english" and drow != (1 if turn == "b" else -1):
            continue
        squares = ray(board, start, here, drow, dcol)
        gap = 0
        while flying and gap < len(squares) and squares[gap] is not None:
            gap += 1
        over = square_at(row + drow * (gap + 1), col + dcol * (gap + 1))
        if over is None or over in taken or board.get(over, (turn, False))[0] == turn:
            continue
        landings = []
        for square in squares[gap + 1 :]:
            if square is None or (landings and not flying):
                break
            landings.append(square)
        onward = {}
        for land in landings:
            crowned = not king and variant == "english" and coords(land)[0] in (0, 7)
            onward[land] = (
                []
                if crowned
                else jumps(variant, board, turn, start, land, [*path, land], [*taken, over])
            )
        if any(onward.values()):  # the king must land where the capture goes on
            done.extend(move for moves in onward.values() for move in moves)
        else:
            done.extend(((*path, land), (*taken, over)) for land in landings)
    return done


def reference_moves(variant: str, board: Board, turn: str) -> list[Move]:
    """(path, captured) of every legal move, by walking the diagonals square by square."""
    own = [square for square, (colour, _) in board.items() if colour == turn]
    captures = [m for s in own for m in jumps(variant, board, turn, s, s, [s], [])]
    if captures:
        return captures
    steps: list[Move] = []
    for start in own:
        for drow, dcol in DIRECTIONS:
            if not board[start][1] and drow != (1 if turn == "b" else -1):
                continue
            reach = 7 if board[start][1] and variant == "pool" else 1
            for square in ray(board, start, start, drow, dcol)[:reach]:
                if square is None:
                    break
                steps.append(((start, square), ()))
    return steps


def random_position(rng: random.Random) -> tuple[Board, str]:
    board: Board = {}
    for square in rng.sample(range(1, 33), rng.randint(2, 16)):
        colour = rng.choice("bw")
        far_row = coords(square)[0] == (7 if colour == "b" else 0)
        board[square] = (colour, far_row or rng.random() < 0.5)
    return board, rng.choice("bw")


def fen(board: Board, turn: str) -> str:
    def side(colour: str) -> str:
        items = [f"{'K' if k else ''}{s}" for s, (c, k) in sorted(board.items()) if c == colour]
        return ",".join(items)

    return f"{turn.upper()}:W{side('w')}:B{side('b')}"


def capture_key(move: Move) -> tuple[int, int, tuple[int, ...]]:
    path, taken = move
    return path[0], path[-1], taken


@pytest.mark.parametrize("variant", ["english", "pool"])
def test_legal_moves_match_the_reference_on_random_positions(variant: str) -> None:
    rules = get_variant(variant)
    rng = random.Random(f"reference-{variant}")
    for _ in range(1500):
        board, turn = random_position(rng)
        position = rules.position(fen(board, turn))
        ours = [(m.path, m.captured) for m in position.legal_moves()]
        expected = reference_moves(variant, board, turn)
        if variant == "english":
            assert sorted(ours) == sorted(expected), position.fen()
        else:
            # A king going on along one diagonal may stop anywhere between two captured pieces:
            # those stops are one move (docs/rules.md, architecture.md), listed once.
            assert sorted(map(capture_key, ours)) == sorted(set(map(capture_key, expected)))
            assert all(move in expected for move in ours), position.fen()
