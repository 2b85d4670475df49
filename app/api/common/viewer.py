"""`ViewerDep`: who reads the archive, from the optional bearer token.

The archive is public, but the games of private tables are their players' (see
`app.archive.visibility`): a request without a token sees the public games; with one, also
the games its user played, or every game for an administrator. A token that is sent but not
valid is refused (401), as everywhere.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Query

from app.api.common.deps import OptionalUser
from app.api.common.params import NAME_PATTERN
from app.archive.visibility import Viewer


def get_viewer(user: OptionalUser) -> Viewer:
    if user is None:
        return Viewer()
    return Viewer(user_id=user.id, admin=user.role == "admin")


ViewerDep = Annotated[Viewer, Depends(get_viewer)]
InviteQuery = Annotated[
    str | None,
    Query(
        min_length=1,
        max_length=32,
        pattern=NAME_PATTERN,
        description="The invite code of the private table the game was played at: opens the "
        "game to the table's invited spectators.",
    ),
]
