"""A tournament's settings as asked for, and their check: kinds, clocks, lengths and limits,
refused with a 400 `bad_request` that names what is wrong."""

from __future__ import annotations

from dataclasses import dataclass

from app.errors import Code
from app.live.liveplay import PlayError
from app.rules.variants import get_variant

KINDS = ("arena", "swiss", "round_robin")
BALLOTS = ("gayp", "3-move")
ROUND_ROBIN_MAX = 12
MAX_PLAYERS = 1000
MAX_ROUNDS = 30
MAX_MINUTES = 24 * 60
MAX_STARTS_IN = 30 * 24 * 3600
MIN_BASE_S, MAX_BASE_S, MAX_INCREMENT_S = 15, 3 * 3600, 180
MAX_OWN_OPEN = 3  # a player's tournaments not yet over
MAX_OWN_PER_DAY = 10
SWISS_DRAW_AFTER_MOVE = 30  # draw offers in a Swiss are refused before this move


@dataclass(frozen=True)
class Settings:
    """A tournament as asked for (`POST /api/tournaments`), checked by `checked`."""

    kind: str
    name: str
    variant: str
    base_s: int
    increment_s: int
    rated: bool
    starts_in: int
    minutes: int | None = None
    rounds: int | None = None
    double: bool = False
    ballot: str = "gayp"
    max_players: int | None = None
    every_minutes: int | None = None
    draw_after_move: int | None = None


def _bad(message: str) -> PlayError:
    return PlayError(Code.BAD_REQUEST, message)


def checked(s: Settings) -> Settings:
    """The settings, or a 400 `bad_request` naming what is wrong."""
    if s.kind not in KINDS:
        raise _bad(f"kind must be one of {', '.join(KINDS)}")
    if not s.name.strip() or len(s.name) > 80:
        raise _bad("name must be 1 to 80 characters")
    try:
        variant = get_variant(s.variant).name
    except (KeyError, ValueError):
        raise _bad("variant must be english or pool") from None
    if not MIN_BASE_S <= s.base_s <= MAX_BASE_S or not 0 <= s.increment_s <= MAX_INCREMENT_S:
        raise _bad(
            f"clock base must be {MIN_BASE_S} to {MAX_BASE_S} s and increment 0 to "
            f"{MAX_INCREMENT_S} s"
        )
    if not 0 <= s.starts_in <= MAX_STARTS_IN:
        raise _bad(f"starts_in must be 0 to {MAX_STARTS_IN} s")
    if s.ballot not in BALLOTS:
        raise _bad("ballot must be gayp or 3-move")
    if s.ballot == "3-move" and (variant != "english" or s.kind == "arena"):
        raise _bad("ballot matches are for English Swiss and round-robin events")
    minutes, rounds, max_players = s.minutes, s.rounds, s.max_players
    if s.kind == "arena":
        if minutes is None or not 1 <= minutes <= MAX_MINUTES:
            raise _bad(f"an arena needs minutes, 1 to {MAX_MINUTES}")
        rounds = None
    elif s.kind == "swiss":
        if rounds is None or not 1 <= rounds <= MAX_ROUNDS:
            raise _bad(f"a Swiss needs rounds, 1 to {MAX_ROUNDS}")
        minutes = None
    else:
        minutes, rounds = None, None
        max_players = min(max_players or ROUND_ROBIN_MAX, ROUND_ROBIN_MAX)
    if max_players is not None and not 2 <= max_players <= MAX_PLAYERS:
        raise _bad(f"max_players must be 2 to {MAX_PLAYERS}")
    if s.every_minutes is not None and not 10 <= s.every_minutes <= 7 * 24 * 60:
        raise _bad("every_minutes must be 10 to 10080")
    draw_after = s.draw_after_move
    if draw_after is None:
        draw_after = SWISS_DRAW_AFTER_MOVE if s.kind == "swiss" else 0
    if not 0 <= draw_after <= 200:
        raise _bad("draw_after_move must be 0 to 200")
    return Settings(
        kind=s.kind,
        name=s.name.strip(),
        variant=variant,
        base_s=s.base_s,
        increment_s=s.increment_s,
        rated=s.rated,
        starts_in=s.starts_in,
        minutes=minutes,
        rounds=rounds,
        double=s.double and s.kind == "round_robin",
        ballot=s.ballot,
        max_players=max_players,
        every_minutes=s.every_minutes,
        draw_after_move=draw_after,
    )
