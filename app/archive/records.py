"""A stored game as a record: its PDN (tags, moves with clock comments) and its NDJSON line,
for export and replay; the archive's queries are `archive`'s."""

from __future__ import annotations

import json
from datetime import datetime
from functools import lru_cache
from typing import Any

from app.archive.service import GameRating, GameRecord
from app.archive.store import Colour as Colour
from app.archive.store import GameFilter as GameFilter
from app.archive.store import Order as Order
from app.rules import Game as RulesGame
from app.rules import RulesError, get_variant
from app.rules.pdn import write_game


def positions_after(record: GameRecord) -> list[str | None]:
    """The FEN after each ply, replayed by the rules engine; None from a ply the engine rejects
    (a stored game is checked when it is played or imported, so that means a damaged record).
    An imported game may go on past an automatic draw (claim rules), so none is applied here."""
    game = RulesGame(get_variant(record.variant), start_fen=record.start_fen, automatic_draws=False)
    fens: list[str | None] = []
    for move in record.moves:
        try:
            game.play(move)
        except RulesError:
            break
        fens.append(game.fen())
    return fens + [None] * (len(record.moves) - len(fens))


def start_position(record: GameRecord) -> str:
    return get_variant(record.variant).position(fen=record.start_fen).fen()


# Tags written from the game's own columns; a stored tag of the same name is not repeated.
_OWN_TAGS = {"Event", "Site", "Date", "Round", "Black", "White", "Result", "GameType", "FEN"} | {
    "TimeControl",
    "Termination",
    "SetUp",
    "Setup",
}


@lru_cache(maxsize=8192)
def clock_comment(seconds: int) -> str:
    """`[%clock h:mm:ss]`; cached, as an export writes one per move and clocks repeat."""
    seconds = max(seconds, 0)
    return f"[%clock {seconds // 3600}:{seconds // 60 % 60:02d}:{seconds % 60:02d}]"


def pdn_tags(record: GameRecord, site: str) -> dict[str, str]:
    """The PDN tag pairs of a game: the seven standard ones first, then what we know of it:
    `BlackElo`/`WhiteElo` (the ratings before a game that moved them), `TimeControl`,
    `Termination`, and the tags an imported record came with."""
    stored = record.tags
    event = f"{'Rated' if record.rated else 'Casual'} {record.variant} game"
    if record.room_name:
        event += f", {record.room_name}"
    tags = {
        "Event": stored.get("Event") or event,
        "Site": stored.get("Site") or site,
        "Date": stored.get("Date") or record.started_at.strftime("%Y.%m.%d"),
        "Round": stored.get("Round") or "-",
        "Black": record.black or stored.get("Black") or "?",
        "White": record.white or stored.get("White") or "?",
        "Result": record.result,
        "GameType": str(get_variant(record.variant).pdn_game_type),
    }
    if record.start_fen:
        tags["FEN"] = record.start_fen
    # A game that moved ratings: each player's rating before it, whole points as shown.
    if record.black_rating is not None and record.white_rating is not None:
        tags["BlackElo"] = str(record.black_rating.rating)
        tags["WhiteElo"] = str(record.white_rating.rating)
    if record.clock_base_s is not None:
        tags["TimeControl"] = f"{record.clock_base_s}+{record.clock_increment_s}"
    if record.termination:
        tags["Termination"] = record.termination
    tags.update({k: str(v) for k, v in stored.items() if k not in _OWN_TAGS and k not in tags})
    return tags


LABEL_WORDS = {"inaccuracy": "Inaccuracy", "mistake": "Mistake", "blunder": "Blunder"}


def analysis_comment(ply: dict[str, Any]) -> str:
    """An analysed ply as a comment: `[%eval -97] Blunder. 9-14 was best.` (the evaluation
    after the move, in centipieces from Black's side or `#N`)."""
    text = f"[%eval {ply['eval']['text']}]"
    label = ply.get("label")
    if label:
        text += f" {LABEL_WORDS[label]}."
        if ply.get("best"):
            text += f" {ply['best']} was best."
    return text


def render_pdn(record: GameRecord, site: str, analysis: list[dict[str, Any]] | None = None) -> str:
    """The game as a PDN record; each move's clock, when known, as a `{[%clock h:mm:ss]}`,
    and with `analysis` (its analysed plies) each move's evaluation and label."""
    comments = {
        ply: clock_comment(ms // 1000)
        for ply, ms in enumerate(record.clocks_ms, start=1)
        if ms is not None
    }
    for analysed in analysis or ():
        ply = analysed["ply"]
        note = analysis_comment(analysed)
        comments[ply] = f"{comments[ply]} {note}" if ply in comments else note
    return write_game(pdn_tags(record, site), record.moves, record.result, comments)


def _iso(value: datetime | None) -> str | None:
    return None if value is None else value.isoformat()


def _rating_doc(rating: GameRating | None) -> dict[str, Any] | None:
    if rating is None:
        return None
    return {"rating": rating.rating, "provisional": rating.provisional, "diff": rating.diff}


def render_ndjson(record: GameRecord) -> str:
    """The game as one JSON line: the summary fields, tags, moves and clocks (ms left)."""
    doc = {
        "id": record.id,
        "variant": record.variant,
        "status": record.status,
        "result": record.result,
        "termination": record.termination,
        "black": record.black,
        "white": record.white,
        "rated": record.rated,
        "room": record.room,
        "source": record.source,
        "start_fen": record.start_fen,
        "clock_base_s": record.clock_base_s,
        "clock_increment_s": record.clock_increment_s,
        "ply_count": record.ply_count,
        "started_at": _iso(record.started_at),
        "finished_at": _iso(record.finished_at),
        "black_rating": _rating_doc(record.black_rating),
        "white_rating": _rating_doc(record.white_rating),
        "tags": record.tags,
        "moves": record.moves,
        "clocks_ms": record.clocks_ms if any(c is not None for c in record.clocks_ms) else None,
    }
    return json.dumps(doc, separators=(",", ":"), ensure_ascii=False) + "\n"
