"""American pool checkers, one test per numbered rule of docs/rules.md (variant ``pool``)."""

from __future__ import annotations

import pytest

from app.rules import CaptureRequiredError, Color, Game, Outcome, Termination, get_variant
from app.rules.board import LONG_DIAGONAL
from tests.rules.walks import king_move, quiet_walk

POOL = get_variant("pool")


def moves(fen: str) -> list[str]:
    return sorted(str(m) for m in POOL.position(fen).legal_moves())


def on_long_diagonal(square: int) -> bool:
    return bool(LONG_DIAGONAL >> (square - 1) & 1)


def test_rule_1_same_start_as_english() -> None:
    english = get_variant("english")
    assert POOL.starting_fen == english.starting_fen
    assert POOL.position().turn is Color.BLACK
    assert moves(POOL.starting_fen) == sorted(str(m) for m in english.position().legal_moves())


def test_rule_2_man_steps_forward_and_captures_backward_too() -> None:
    assert moves("B:W32:B14") == ["14-17", "14-18"]
    assert moves("B:W14,22:B18") == ["18x25", "18x9"]


def test_rule_3_man_crowned_when_it_ends_on_the_far_row() -> None:
    assert moves("B:W26:B22") == ["22x31"]
    after = POOL.position("B:W26:B22").play("22x31")
    assert after.fen() == "W:W:BK31"


def test_rule_3_crowning_mid_capture_goes_on_as_a_man() -> None:
    # The man reaches 31 on the far row, can still jump 27 backward, and must: it stays a man.
    assert moves("B:W26,27:B22") == ["22x31x24"]
    after = POOL.position("B:W26,27:B22").play("22x31x24")
    piece = after.piece_at(24)
    assert piece is not None and piece.color is Color.BLACK and not piece.king


def test_rule_4_flying_king_moves_any_distance() -> None:
    assert moves("B:W32:BK18") == [
        "18-11", "18-14", "18-15", "18-22", "18-23", "18-25",
        "18-27", "18-29", "18-4", "18-5", "18-8", "18-9",
    ]  # fmt: skip


def test_rule_4_flying_king_captures_at_a_distance_and_lands_anywhere_beyond() -> None:
    assert moves("B:W15,24:BK29") == ["29x11", "29x4", "29x8"]


def test_rule_4_flying_king_must_land_where_the_capture_continues() -> None:
    # From 18 the king can go on over 23; from 15, 11, 8 or 4 it could not.
    assert moves("B:W22,23:BK29") == ["29x18x27", "29x18x32"]


def test_rule_4_a_king_going_on_along_one_diagonal_makes_one_move_whatever_its_stop() -> None:
    # 28 takes 24 and then 10 on the same diagonal; stopping on 19 or on 15 between them is
    # one move (written with the nearest stop), not two.
    position = POOL.position("B:W2,10,24:BK28")
    assert moves("B:W2,10,24:BK28") == ["28x19x1", "28x19x6"]
    assert position.parse_move("28x15x6") == position.parse_move("28x19x6")
    assert position.parse_move("28x6").captured == (24, 10)


def test_rule_5_captured_pieces_block_until_the_move_ends() -> None:
    # After 15x8 the man taken on 11 still stands between 8 and 18: no 15x8x22.
    assert moves("B:W10,11,18:BK15") == [
        "15x1", "15x22", "15x25", "15x29", "15x4", "15x6", "15x8",
    ]  # fmt: skip


def test_rule_5_free_choice_and_completion() -> None:
    assert moves("B:W14,15,24:B10") == ["10x17", "10x19x28"]
    assert moves("B:W15,22:B11") == ["11x18x25"]
    game = Game(POOL, "B:W18:B10,14")
    with pytest.raises(CaptureRequiredError):
        game.play("10-15")
    assert game.ply == 0


def test_rule_6_no_legal_move_loses() -> None:
    game = Game(POOL, "W:W29:B22,25")
    assert game.outcome() == Outcome(Termination.NO_MOVES, Color.BLACK)


def test_rule_7_threefold_repetition() -> None:
    game = Game(POOL, "B:WK32:BK1")
    cycle = ["1-5", "32-28", "5-1", "28-32"]
    for ply in range(7):
        game.play(cycle[ply % 4])
        assert game.outcome() is None
    game.play(cycle[7 % 4])
    assert game.outcome() == Outcome(Termination.REPETITION)


def test_rule_7_three_kings_v_one_off_the_long_diagonal_13_lone_king_moves() -> None:
    game = Game(POOL, "W:WK12,K20,K28:BK1")

    def lone_king_off_diagonal(g: Game, move: object) -> bool:
        return g.position.turn is Color.WHITE or not on_long_diagonal(int(str(move).split("-")[1]))

    quiet_walk(game, 25, allow=lone_king_off_diagonal)  # the lone king's 12th move
    assert game.outcome() is None
    quiet_walk(game, 1, allow=lone_king_off_diagonal)  # its 13th
    assert game.outcome() == Outcome(Termination.KINGS_ENDGAME)


def test_rule_7_three_kings_v_one_on_the_long_diagonal_after_5_strong_moves() -> None:
    game = Game(POOL, "W:WK3,K12,K27:BK29")

    def lone_king_on_diagonal(g: Game, move: object) -> bool:
        return g.position.turn is Color.WHITE or on_long_diagonal(int(str(move).split("-")[1]))

    quiet_walk(game, 8, allow=lone_king_on_diagonal)  # four moves each
    assert game.outcome() is None
    quiet_walk(game, 1, allow=lone_king_on_diagonal)  # the stronger side's fifth
    assert game.outcome() == Outcome(Termination.KINGS_ENDGAME)


def test_rule_7_thirty_move_rule_man_moves_do_not_reset_it() -> None:
    game = Game(POOL, "B:WK29,K31:B1,K3")
    game.play("1-5")
    quiet_walk(game, 58, allow=king_move)
    assert game.outcome() is None and game.quiet_plies == 59
    quiet_walk(game, 1, allow=king_move)
    assert game.outcome() == Outcome(Termination.MOVE_LIMIT)


def test_rule_7_promotion_resets_the_thirty_move_count() -> None:
    game = Game(POOL, "B:WK1,K3:B27,K9")
    quiet_walk(game, 10, allow=king_move)
    assert game.quiet_plies == 10
    game.play("27-32")
    assert game.quiet_plies == 0


def test_rule_7_a_capture_resets_the_thirty_move_count() -> None:
    game = Game(POOL, "B:WK32,K29:BK1,K3")
    for text in ["3-7", "32-27", "7-3", "27-23", "3-7", "23-18", "7-3", "18-15"]:
        game.play(text)
    assert game.quiet_plies == 8
    game.play("1x19")
    assert game.quiet_plies == 0 and game.outcome() is None


def test_rule_7_three_kings_v_one_counts_from_the_ply_the_ending_begins() -> None:
    # Black takes the king on 14 and the ending begins; that capture is no move "in" it.
    game = Game(POOL, "B:WK14,K21:BK1,K3,K9")
    game.play("9x18")
    assert game.outcome() is None

    def lone_king_off_diagonal(g: Game, move: object) -> bool:
        return g.position.turn is Color.BLACK or not on_long_diagonal(int(str(move).split("-")[1]))

    quiet_walk(game, 24, allow=lone_king_off_diagonal)  # the lone king's 12th move, and Black's
    assert game.outcome() is None
    quiet_walk(game, 1, allow=lone_king_off_diagonal)  # its 13th
    assert game.outcome() == Outcome(Termination.KINGS_ENDGAME)


def test_rule_7_draw_by_agreement_is_recorded_by_the_server() -> None:
    game = Game(POOL)
    game.play("11-15")
    game.end(Outcome(Termination.AGREEMENT))
    outcome = game.outcome()
    assert outcome == Outcome(Termination.AGREEMENT) and outcome.result() == "1/2-1/2"
