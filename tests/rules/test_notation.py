"""Squares, move text and PDN FEN, as docs/rules.md describes them."""

from __future__ import annotations

import pytest

from app.rules import (
    AmbiguousMoveError,
    Color,
    IllegalMoveError,
    InvalidFenError,
    InvalidMoveError,
    Move,
    get_variant,
)

ENGLISH = get_variant("english")


def test_squares_are_numbered_from_blacks_side() -> None:
    # Black's men stand on 1-12 and step towards 32; square 5 (a7) is on the left edge.
    assert ENGLISH.position("B:W32:B5").legal_moves() == [Move((5, 9))]
    assert ENGLISH.position("B:W32:B4").legal_moves() == [Move((4, 8))]
    assert sorted(map(str, ENGLISH.position("B:W32:B1").legal_moves())) == ["1-5", "1-6"]


def test_move_text_full_paths_and_short_form() -> None:
    position = ENGLISH.position("B:W15,22:B11")
    move = position.parse_move("11x18x25")
    assert move.path == (11, 18, 25) and move.captured == (15, 22) and move.is_capture
    assert position.parse_move("11x25") == move
    assert str(move) == "11x18x25"


def test_x_is_tolerated_for_a_plain_step() -> None:
    assert str(ENGLISH.position().parse_move("11x15")) == "11-15"


def test_short_form_is_refused_when_two_paths_share_start_and_end() -> None:
    position = ENGLISH.position("W:W30:B10,11,17,18,25,26")
    with pytest.raises(AmbiguousMoveError) as refused:
        position.parse_move("30x7")
    assert refused.value.code == "ambiguous_move"
    assert refused.value.paths == ("30x21x14x7", "30x23x14x7")
    assert "30x21x14x7" in str(refused.value) and position.fen() in str(refused.value)
    assert str(position.parse_move("30x23x14x7")) == "30x23x14x7"


@pytest.mark.parametrize("text", ["", "11", "11-", "e3-f4", "11-15-19", "0-4", "11-33", "11--15"])
def test_invalid_move_syntax(text: str) -> None:
    with pytest.raises(InvalidMoveError) as refused:
        ENGLISH.position().parse_move(text)
    assert refused.value.code == "invalid_move"
    assert ENGLISH.position().fen() in str(refused.value)


@pytest.mark.parametrize(
    ("text", "reason"), [("11-16x", None), ("21-17", "no black piece on 21"), ("11-18", None)]
)
def test_illegal_moves_name_the_move_and_the_position(text: str, reason: str | None) -> None:
    with pytest.raises((IllegalMoveError, InvalidMoveError)) as refused:
        ENGLISH.position().parse_move(text)
    assert text in str(refused.value) and ENGLISH.starting_fen in str(refused.value)
    if reason:
        assert reason in str(refused.value)
        assert refused.value.code == "illegal_move"


def test_fen_round_trip_and_canonical_form() -> None:
    fen = "B:W18,24,27,28,K10,K15:B12,16,20,K22,K25,K29"
    position = ENGLISH.position(fen)
    assert position.fen() == fen
    assert position.turn is Color.BLACK
    assert position.piece_at(10) == (Color.WHITE, True)
    assert position.piece_at(12) == (Color.BLACK, False)
    assert position.piece_at(1) is None


def test_fen_accepts_pdn3_ranges_trailing_dot_and_any_order() -> None:
    assert (
        ENGLISH.position("W:W21-32:B1-12").fen()
        == ENGLISH.position(
            "W:W32,31,30,29,28,27,26,25,24,23,22,21:B12,11,10,9,8,7,6,5,4,3,2,1."
        ).fen()
    )
    assert ENGLISH.position("B:W21-32:B1-12") == ENGLISH.position()
    assert ENGLISH.position(" W:WK19,16,12:BK27,K26,3. ").fen() == "W:W12,16,K19:B3,K26,K27"
    assert ENGLISH.position("W:W:B5").fen() == "W:W:B5"


@pytest.mark.parametrize(
    "fen",
    ["", "X:W1:B2", "B:W1:B1", "B:W33:B1", "B:W1,x:B2", "B:W1:W2", "B:W5-3:B1", "B", "B:Q1"],
)
def test_invalid_fen_is_refused(fen: str) -> None:
    with pytest.raises(InvalidFenError) as refused:
        ENGLISH.position(fen)
    assert refused.value.code == "invalid_fen"


def test_unknown_variant_is_a_value_error() -> None:
    with pytest.raises(ValueError, match="unknown variant"):
        get_variant("international")
    assert get_variant("English").name == "english"
    assert get_variant("pool").pdn_game_type == 23 and get_variant("english").pdn_game_type == 21
    assert "pool" in get_variant("pool").aliases


def test_only_ascii_digits_name_squares() -> None:
    # Python's \d also matches other scripts' digits ("１２" is 12 to int()).
    with pytest.raises(InvalidFenError):
        ENGLISH.position("B:W１２:B1")
    with pytest.raises(InvalidMoveError):
        ENGLISH.position().parse_move("１１-１５")


def test_piece_at_refuses_squares_off_the_board() -> None:
    for square in (0, 33):
        with pytest.raises(ValueError, match="1 to 32"):
            ENGLISH.position().piece_at(square)


def test_fen_reading_is_case_and_space_tolerant() -> None:
    assert (
        ENGLISH.position("b:bk1-3,12:w21-32").fen()
        == ENGLISH.position("B:W21-32:B12,K1,K2,K3").fen()
    )
    assert ENGLISH.position("W : W 18 , k 10 : B 12 .").fen() == "W:W18,K10:B12"


@pytest.mark.parametrize(
    "fen",
    ["B:W1,:B2", "B:W1-:B2", "B:WK:B2", "B::B2", "B:W1:B2:", "BW:W1", "B:W1-2-3", "B:W1;B2", "."],
)
def test_malformed_fen_is_an_invalid_fen_error_not_a_crash(fen: str) -> None:
    with pytest.raises(InvalidFenError, match="invalid FEN"):
        ENGLISH.position(fen)
