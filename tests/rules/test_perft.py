"""Perft from the start equals the reference table of docs/rules.md for both variants."""

from __future__ import annotations

import pytest

from app.rules import get_variant
from app.rules.perft import divide, perft

ENGLISH = [7, 49, 302, 1469, 7361, 36768, 179740, 845931, 3963680, 18391564]
POOL = [7, 49, 302, 1469, 7482, 37986, 190146, 929902, 4570615, 22442551]


def depths(table: list[int]) -> list[object]:
    return [
        pytest.param(depth, table[depth - 1], marks=[pytest.mark.slow] if depth >= 9 else [])
        for depth in range(1, 11)
    ]


@pytest.mark.parametrize(("depth", "expected"), depths(ENGLISH))
def test_english_perft_from_the_start(depth: int, expected: int) -> None:
    assert perft(get_variant("english").position(), depth) == expected


@pytest.mark.parametrize(("depth", "expected"), depths(POOL))
def test_pool_perft_from_the_start(depth: int, expected: int) -> None:
    assert perft(get_variant("pool").position(), depth) == expected


def test_perft_counts_each_capture_path_as_a_move() -> None:
    position = get_variant("english").position("W:W30:B10,11,17,18,25,26")
    assert perft(position, 1) == 2
    assert dict(divide(position, 1)) == {"30x21x14x7": 1, "30x23x14x7": 1}


def test_perft_depth_zero_is_one_and_divide_sums_to_perft() -> None:
    position = get_variant("pool").position()
    assert perft(position, 0) == 1
    assert sum(count for _, count in divide(position, 4)) == perft(position, 4)
