"""A game record: start position, moves, and how the game ended, with incremental draw tracking.

The rules decide loss by having no move and the automatic draws (repetition, move limits, the
pool kings ending) at the ply they occur. The endings decided outside the rules (resignation,
timeout, agreement, …) are ``Termination`` values too; ``Game.end`` records one on a record kept
to its end. Records of games played under claim rules may go
on past an automatic draw: ``Game(..., automatic_draws=False)`` reads them, noting the first draw
passed (``passed_draw``) instead of ending the game; live play never sets it. Tracking is
incremental: a move costs the same at ply 10 and at ply 300, because history that can no longer
repeat is dropped on irreversible moves.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from enum import StrEnum

from app.rules.board import LONG_DIAGONAL, Color
from app.rules.errors import GameOverError
from app.rules.moves import Move
from app.rules.position import Position, PositionKey
from app.rules.variants import Variant, get_variant


class Termination(StrEnum):
    """Why a game ended. The first four are decided by the rules, the rest by the server."""

    NO_MOVES = "no_moves"
    REPETITION = "repetition"
    MOVE_LIMIT = "move_limit"
    KINGS_ENDGAME = "kings_endgame"
    RESIGNATION = "resignation"
    TIMEOUT = "timeout"
    AGREEMENT = "agreement"
    ABANDONED = "abandoned"
    ABORTED = "aborted"
    ADMIN = "admin"


class Result(StrEnum):
    """A game's PDN result. Black moves first, so ``1-0`` is a win for Black; ``*`` is a game
    in progress or one that ended without a result (aborted)."""

    BLACK_WINS = "1-0"
    WHITE_WINS = "0-1"
    DRAW = "1/2-1/2"
    UNFINISHED = "*"

    @classmethod
    def win_for(cls, winner: Color) -> Result:
        return cls.BLACK_WINS if winner is Color.BLACK else cls.WHITE_WINS

    @classmethod
    def parse(cls, text: str | None) -> Result | None:
        """The result a text names exactly, or None."""
        return next((result for result in cls if result.value == text), None)

    @property
    def winner(self) -> Color | None:
        """Who won; None for a draw or no result."""
        if self is Result.BLACK_WINS:
            return Color.BLACK
        if self is Result.WHITE_WINS:
            return Color.WHITE
        return None


@dataclass(frozen=True, slots=True)
class Outcome:
    """How a game ended; ``winner`` is None for a draw (and for an aborted game)."""

    termination: Termination
    winner: Color | None = None

    def result(self) -> Result:
        """The PDN result: the winner's, a draw without one, no result (``*``) when aborted."""
        if self.winner is not None:
            return Result.win_for(self.winner)
        return Result.UNFINISHED if self.termination is Termination.ABORTED else Result.DRAW


class Game:
    """The record of one game and the automatic endings of its variant."""

    def __init__(
        self, variant: Variant | str, start_fen: str | None = None, *, automatic_draws: bool = True
    ) -> None:
        self.variant = get_variant(variant) if isinstance(variant, str) else variant
        self.start_position = self.variant.position(start_fen)
        self.start_fen = self.start_position.fen()
        self.position = self.start_position
        self.moves: list[Move] = []
        self._outcome: Outcome | None = None
        self.automatic_draws = automatic_draws
        self.passed_draw: tuple[int, Termination] | None = None
        """With ``automatic_draws=False``: the ply and kind of the first automatic draw passed."""
        # Positions seen since the last irreversible move, with their counts.
        self._seen: dict[PositionKey, int] = {self.position.key(): 1}
        # Plies since the move-limit count was last reset; the draw comes at move_limit_plies.
        self.quiet_plies = 0
        # Moves made by each side since the pool 3-kings-against-1 ending began (None outside).
        self._ending_moves: dict[Color, int] | None = (
            {Color.BLACK: 0, Color.WHITE: 0}
            if self.variant.kings_ending_draw and self._in_kings_ending(self.position)
            else None
        )
        if not self.position.has_legal_moves():
            self._outcome = Outcome(Termination.NO_MOVES, self.position.turn.other)

    @classmethod
    def replay(
        cls, variant: Variant | str, moves: Iterable[str | Move], start_fen: str | None = None
    ) -> Game:
        """A game rebuilt from stored move texts; raises the first move's ``RulesError``."""
        game = cls(variant, start_fen)
        for move in moves:
            game.play(move)
        return game

    @property
    def ply(self) -> int:
        return len(self.moves)

    def fen(self) -> str:
        return self.position.fen()

    def legal_moves(self) -> list[Move]:
        return [] if self._outcome else self.position.legal_moves()

    def legal_move_texts(self) -> list[str]:
        """The legal moves as text, as sent to clients (cheaper than ``legal_moves``)."""
        return [] if self._outcome else self.position.legal_move_texts()

    def outcome(self) -> Outcome | None:
        """How the game ended, or None while it goes on."""
        return self._outcome

    def end(self, outcome: Outcome) -> None:
        """Record an ending decided outside the rules (resignation, timeout, agreement, …).

        Live play does not call it: the server stores such an ending with the game and drops
        its copy of the record. It is for callers that keep a record to the end."""
        if self._outcome is not None:
            raise GameOverError(
                f"the game is already over ({self._outcome.termination.value}) in {self.fen()}",
                fen=self.fen(),
            )
        self._outcome = outcome

    def play(self, move: str | Move) -> Move:
        """Parse, check and apply one move, then apply any ending it brings; returns the move."""
        text = move if isinstance(move, str) else str(move)
        before = self.position
        if self._outcome is not None:
            raise GameOverError(
                f"cannot play {text!r}: the game is already over "
                f"({self._outcome.termination.value}) in {before.fen()}",
                move=text,
                fen=before.fen(),
            )
        internal = before._find(text)
        played = before._public(internal)
        after = before._apply(internal)
        self.position = after
        self.moves.append(played)
        source, target = 1 << internal[0][0], 1 << internal[0][-1]
        man_moved = bool((before.black_men | before.white_men) & source)
        promoted = man_moved and bool((after.black_kings | after.white_kings) & target)
        self._track(before.turn, after, internal[1] != 0, man_moved, promoted)
        return played

    def play_known(self, text: str) -> bool:
        """Apply a move another server has checked and stored (the full path a move event
        carries), without generating the legal moves: a copy of a game kept current on a second
        server. The end of the game is not looked for (the event that ends it follows). False,
        with nothing changed, if the path does not fit the position (the copy is stale)."""
        before = self.position
        if self._outcome is not None:
            return False
        internal = before._known(text)
        if internal is None:
            return False
        after = before._apply(internal)
        self.position = after
        self.moves.append(before._public(internal))
        source, target = 1 << internal[0][0], 1 << internal[0][-1]
        man_moved = bool((before.black_men | before.white_men) & source)
        promoted = man_moved and bool((after.black_kings | after.white_kings) & target)
        self._track(before.turn, after, internal[1] != 0, man_moved, promoted, look_for_end=False)
        return True

    def _track(
        self,
        mover: Color,
        after: Position,
        capture: bool,
        man_moved: bool,
        promoted: bool,
        *,
        look_for_end: bool = True,
    ) -> None:
        if capture or man_moved:
            self._seen.clear()
        key = after.key()
        repeats = self._seen.get(key, 0) + 1
        self._seen[key] = repeats
        rules = self.variant
        resets = capture or (man_moved if rules.man_moves_reset_move_limit else promoted)
        self.quiet_plies = 0 if resets else self.quiet_plies + 1
        kings_draw = rules.kings_ending_draw and self._track_kings_ending(mover, after)

        draw: Termination | None = None
        if look_for_end and not after.has_legal_moves():
            self._outcome = Outcome(Termination.NO_MOVES, mover)
        elif repeats >= rules.repetitions_to_draw:
            draw = Termination.REPETITION
        elif self.quiet_plies >= rules.move_limit_plies:
            draw = Termination.MOVE_LIMIT
        elif kings_draw:
            draw = Termination.KINGS_ENDGAME
        if draw is None:
            return
        if self.automatic_draws:
            self._outcome = Outcome(draw)
        elif self.passed_draw is None:
            self.passed_draw = (self.ply, draw)

    @staticmethod
    def _in_kings_ending(position: Position) -> bool:
        """Exactly four pieces, all kings, three against one."""
        black_kings = position.count(Color.BLACK, kings=True)
        white_kings = position.count(Color.WHITE, kings=True)
        return (
            position.black_men == position.white_men == 0
            and black_kings + white_kings == 4
            and black_kings in (1, 3)
        )

    def _track_kings_ending(self, mover: Color, after: Position) -> bool:
        """Pool 3 kings v 1: a draw after the lone king's 13th move in the ending, or after the
        stronger side's 5th move while the lone king stands on the long diagonal."""
        if not self._in_kings_ending(after):
            self._ending_moves = None
            return False
        if self._ending_moves is None:
            self._ending_moves = {Color.BLACK: 0, Color.WHITE: 0}
            return False
        self._ending_moves[mover] += 1
        lone = Color.BLACK if after.count(Color.BLACK) == 1 else Color.WHITE
        if mover is lone:
            return self._ending_moves[lone] >= 13
        lone_king = after.black_kings if lone is Color.BLACK else after.white_kings
        return self._ending_moves[mover] >= 5 and bool(lone_king & LONG_DIAGONAL)
