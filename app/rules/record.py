"""Game records replayed as they were played, for import and ``checkers replay``.

Real collections hold what live play refuses: a short capture (``10x26``) that two paths fit, and
games played on past an automatic draw (masters played under claim rules). Where the record is
clear it is read as it is, with a warning: the short capture is the one path after which the
recorded moves go on furthest, and the game goes on past the draw, whose ply is noted.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from app.rules.errors import AmbiguousMoveError, RulesError
from app.rules.game import Game, Outcome, Termination
from app.rules.position import Position
from app.rules.variants import Variant

LOOKAHEAD_PLIES = 40
"""How far past a short capture its paths are compared: two paths that both carry the record
this far are not told apart by it, and the move stays ambiguous."""


@dataclass
class RecordReplay:
    """A record replayed up to its end or its first unplayable move."""

    game: Game
    warnings: list[str] = field(default_factory=list)
    """What was read by choice (``ply N …``): resolved short captures, a draw played past."""
    error: RulesError | None = None
    """Why move ``game.ply + 1`` of the record could not be played, or None."""

    @property
    def past_draw(self) -> tuple[int, Termination] | None:
        """The ply and kind of the automatic draw the record plays on past, or None."""
        passed = self.game.passed_draw
        return passed if passed is not None and passed[0] < self.game.ply else None

    def outcome(self) -> Outcome | None:
        """How the rules end the record: no moves left, or an automatic draw on its last ply."""
        passed = self.game.passed_draw
        if passed is not None and passed[0] == self.game.ply:
            return Outcome(passed[1])
        return self.game.outcome()


def replay_record(
    variant: Variant | str, moves: Sequence[str], start_fen: str | None = None
) -> RecordReplay:
    """Replay recorded move texts; never raises a ``RulesError`` for a move (see ``error``)."""
    replay = RecordReplay(Game(variant, start_fen, automatic_draws=False))
    game = replay.game
    for index, text in enumerate(moves):
        try:
            game.play(text)
        except AmbiguousMoveError as exc:
            path = _resolve(
                game.position, exc.paths, moves[index + 1 : index + 1 + LOOKAHEAD_PLIES]
            )
            if path is None:
                replay.error = exc
                return replay
            game.play(path)
            others = ", ".join(p for p in exc.paths if p != path)
            replay.warnings.append(
                f"ply {game.ply} {text!r} fits several capture paths; read as {path}, the one "
                f"after which the recorded moves go on (not {others})"
            )
        except RulesError as exc:
            replay.error = exc
            return replay
    if replay.past_draw is not None:
        ply, termination = replay.past_draw
        replay.warnings.append(
            f"played on past an automatic draw ({termination.value.replace('_', ' ')} at ply "
            f"{ply}, as claim rules allowed); kept as recorded to ply {game.ply}"
        )
    return replay


def _resolve(position: Position, paths: Sequence[str], following: Sequence[str]) -> str | None:
    """The one path after which most of ``following`` can be played, or None on a tie."""
    reach = {path: _reach(position.play(path), following) for path in paths}
    best = max(reach.values())
    winners = [path for path, count in reach.items() if count == best]
    return winners[0] if len(winners) == 1 else None


def _reach(position: Position, moves: Sequence[str]) -> int:
    """How many of ``moves`` can be played in turn from ``position`` (ambiguity: the best path)."""
    for count, text in enumerate(moves):
        try:
            position = position.play(text)
        except AmbiguousMoveError as exc:
            rest = moves[count + 1 :]
            return count + 1 + max(_reach(position.play(path), rest) for path in exc.paths)
        except RulesError:
            return count
    return len(moves)
