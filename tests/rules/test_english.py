"""English draughts, one test per numbered rule of docs/rules.md (variant ``english``)."""

from __future__ import annotations

import pytest

from app.rules import (
    CaptureRequiredError,
    Color,
    Game,
    IllegalMoveError,
    Outcome,
    Termination,
    get_variant,
)
from tests.rules.walks import king_move, quiet_walk

ENGLISH = get_variant("english")


def moves(fen: str) -> list[str]:
    return sorted(str(m) for m in ENGLISH.position(fen).legal_moves())


def test_start_black_moves_first_towards_32() -> None:
    position = ENGLISH.position()
    assert position.turn is Color.BLACK
    assert moves(ENGLISH.starting_fen) == [
        "10-14",
        "10-15",
        "11-15",
        "11-16",
        "12-16",
        "9-13",
        "9-14",
    ]


def test_rule_1_man_steps_forward_only() -> None:
    assert moves("B:W32:B14") == ["14-17", "14-18"]
    assert moves("W:W19:B1") == ["19-15", "19-16"]


def test_rule_2_man_captures_forward_only() -> None:
    # A white man stands behind (14) and in front (22) of the black man on 18.
    assert moves("B:W14,22:B18") == ["18x25"]


def test_rule_2_own_pieces_are_never_jumped() -> None:
    assert moves("B:W32:B18,22") == ["18-23", "22-25", "22-26"]


def test_rule_3_crowning_ends_the_move() -> None:
    # After 22x31 the new king could jump 27, but the move ends on the crowning square.
    assert moves("B:W26,27:B22") == ["22x31"]
    after = ENGLISH.position("B:W26,27:B22").play("22x31")
    assert after.fen() == "W:W27:BK31"


def test_rule_3_crowning_by_a_step() -> None:
    after = ENGLISH.position("B:W1:B27").play("27-32")
    assert after.piece_at(32) == (Color.BLACK, True)


def test_rule_4_king_steps_and_captures_backward() -> None:
    assert moves("B:W32:BK18") == ["18-14", "18-15", "18-22", "18-23"]
    assert moves("B:W14:BK18") == ["18x9"]
    assert moves("W:WK14:B18,25") == ["14x23"]


def test_rule_5_seed_003_capture_must_be_completed() -> None:
    position = ENGLISH.position("B:W15,22:B11")
    assert moves("B:W15,22:B11") == ["11x18x25"]
    with pytest.raises(IllegalMoveError, match="must be completed"):
        position.parse_move("11x18")


def test_rule_5_free_choice_of_capture_sequence() -> None:
    # 10x17 takes one man, 10x19x28 takes two: either may be chosen.
    assert moves("B:W14,15,24:B10") == ["10x17", "10x19x28"]
    assert ENGLISH.position("B:W14,15,24:B10").play("10x17").fen() == "W:W15,24:B17"


def test_rule_5_same_piece_is_never_jumped_twice() -> None:
    assert moves("B:W18:BK14") == ["14x23"]


def test_rule_6_ignoring_a_capture_is_refused_and_changes_nothing() -> None:
    game = Game(ENGLISH, "B:W18:B10,14")
    with pytest.raises(CaptureRequiredError) as refused:
        game.play("10-15")
    assert refused.value.code == "capture_required"
    assert refused.value.squares == (14,)
    assert "10-15" in str(refused.value) and "B:W18:B10,14" in str(refused.value)
    assert game.ply == 0 and game.fen() == "B:W18:B10,14"
    assert str(game.play("14x23")) == "14x23"


def test_rule_7_no_legal_move_loses() -> None:
    blocked = Game(ENGLISH, "W:W29:B22,25")
    assert blocked.outcome() == Outcome(Termination.NO_MOVES, Color.BLACK)
    assert Outcome(Termination.NO_MOVES, Color.BLACK).result() == "1-0"
    game = Game(ENGLISH, "B:W18:B14")
    game.play("14x23")
    assert game.outcome() == Outcome(Termination.NO_MOVES, Color.BLACK)


def test_rule_8_fivefold_repetition_draws_at_once() -> None:
    game = Game(ENGLISH, "B:WK32:BK1")
    cycle = ["1-5", "32-28", "5-1", "28-32"]
    for ply in range(15):
        game.play(cycle[ply % 4])
        assert game.outcome() is None
    game.play(cycle[15 % 4])
    assert game.outcome() == Outcome(Termination.REPETITION)
    assert Outcome(Termination.REPETITION).result() == "1/2-1/2"


def test_rule_8_forty_move_rule_draws_after_80_quiet_plies() -> None:
    game = Game(ENGLISH, "B:WK29,K30:BK3,K4")
    quiet_walk(game, 79)
    assert game.outcome() is None
    quiet_walk(game, 1)
    assert game.outcome() == Outcome(Termination.MOVE_LIMIT)


def test_rule_8_a_man_move_resets_the_forty_move_count() -> None:
    game = Game(ENGLISH, "B:W29,K30:BK3,K4")
    quiet_walk(game, 61, allow=lambda g, m: king_move(g, m) and m.end not in (21, 25))
    assert game.quiet_plies == 61
    game.play("29-25")
    assert game.quiet_plies == 0
    assert game.outcome() is None


def test_rule_8_a_capture_resets_the_forty_move_count() -> None:
    game = Game(ENGLISH, "B:WK32:BK1,K3")
    for text in ["3-7", "32-27", "7-3", "27-23", "3-7", "23-18", "7-3", "18-14", "3-7", "14-10"]:
        game.play(text)
    assert game.quiet_plies == 10
    game.play("7x14")
    assert game.quiet_plies == 0


def test_rule_8_draw_by_agreement_is_recorded_by_the_server() -> None:
    game = Game(ENGLISH)
    game.play("11-15")
    game.end(Outcome(Termination.AGREEMENT))
    assert game.outcome() == Outcome(Termination.AGREEMENT) and game.legal_moves() == []
