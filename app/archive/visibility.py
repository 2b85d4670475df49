"""Who may see which game: the games of a private table belong to its players.

A game played at a private table is shown to the game's two players, to administrators and,
one game at a time, to whoever holds the table's invite code (the invited spectators of the
live table); to everyone else it does not exist. Every archive read goes through here, so the
listings, totals, exports and player pages leave such games out by the same rule as the game
page answers 404.
"""

from __future__ import annotations

from dataclasses import dataclass

from app.archive.store import EVERYTHING, PUBLIC_ONLY, Sight


@dataclass(frozen=True)
class Viewer:
    """Who is asking: a signed-in user (None: nobody), whether an administrator, and the
    invite code they hold (opens the games of the private table it belongs to)."""

    user_id: int | None = None
    admin: bool = False
    invite: str | None = None

    def sees_all_of(self, player_id: int | None) -> bool:
        """Whether every game `player_id` played is visible to this viewer (their own games,
        or an administrator's view): no condition needed on that player's history."""
        return self.admin or (player_id is not None and player_id == self.user_id)


ANYONE = Viewer()  # no account, no code: public games only


def visible_to(viewer: Viewer, player_id: int | None = None) -> Sight:
    """Which games `viewer` may list (of `player_id`'s games, if given): everything for an
    administrator and for a player's own history; else the public games and the viewer's own.

    An invite code opens a game page, not the listings. Games without a table (imported) are
    public: the flag is set from the table when a game starts (`games.is_private`).
    """
    if viewer.sees_all_of(player_id):
        return EVERYTHING
    if viewer.user_id is None:
        return PUBLIC_ONLY
    return Sight(member=viewer.user_id)


def may_see(
    viewer: Viewer,
    *,
    black_id: int | None,
    white_id: int | None,
    private: bool,
    invite_code: str | None,
) -> bool:
    """Whether `viewer` may see one game, given its players and its table's privacy."""
    if not private or viewer.admin:
        return True
    if viewer.user_id is not None and viewer.user_id in (black_id, white_id):
        return True
    return viewer.invite is not None and invite_code is not None and viewer.invite == invite_code
