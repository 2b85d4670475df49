"""The computer opponent: search and evaluation over the rules' bitboards, levels, opening book,
endgame database.

Pure like ``app.rules`` (which is all it imports): no I/O but reading the book and the endgame
database shipped inside the package. ``search(fen, variant, limits)`` takes and returns
picklable values, for a process pool.
"""

from app.engine.levels import LEVELS, MAX_LEVEL, level_limits
from app.engine.search import Limits, SearchResult, egdb_outcome, search, search_position

__all__ = [
    "LEVELS",
    "MAX_LEVEL",
    "Limits",
    "SearchResult",
    "egdb_outcome",
    "level_limits",
    "search",
    "search_position",
]
