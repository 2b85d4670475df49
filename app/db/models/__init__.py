"""SQLAlchemy models: the whole schema, mirrored by the alembic migrations (a test compares
them). `base` holds the declarative base and the id limits; `people`, `play`, `ratings` and
`tournaments` the tables of accounts, of play, of ratings and of tournaments; `analysis` the
games' analyses; `puzzles` the puzzles and their players; `notifications` the inboxes, the
e-mail outbox and conditional moves. Importing this package registers
them all."""

from app.db.models.analysis import GameAnalysis
from app.db.models.base import MAX_EVENT_SEQ, MAX_ID, NAMING_CONVENTION, Base, BigId
from app.db.models.notifications import ConditionalMoves, Notification, OutboxMail
from app.db.models.people import (
    AccountAddress,
    Attendance,
    AuditEntry,
    AuthToken,
    Presence,
    RateLimit,
    ServerHeartbeat,
    User,
)
from app.db.models.play import Challenge, Game, GameTable, Move, Room, Seek, TableEvent
from app.db.models.puzzles import Puzzle, PuzzlePlayer, PuzzleRound
from app.db.models.ratings import Rating, RatingChange, RatingReview
from app.db.models.tournaments import Tournament, TournamentPlayer, TournamentPoints

__all__ = [
    "MAX_EVENT_SEQ",
    "MAX_ID",
    "NAMING_CONVENTION",
    "AccountAddress",
    "Attendance",
    "AuditEntry",
    "AuthToken",
    "Base",
    "BigId",
    "Challenge",
    "ConditionalMoves",
    "Game",
    "GameAnalysis",
    "GameTable",
    "Move",
    "Notification",
    "OutboxMail",
    "Presence",
    "Puzzle",
    "PuzzlePlayer",
    "PuzzleRound",
    "RateLimit",
    "Rating",
    "RatingChange",
    "RatingReview",
    "Room",
    "Seek",
    "ServerHeartbeat",
    "TableEvent",
    "Tournament",
    "TournamentPlayer",
    "TournamentPoints",
    "User",
]
