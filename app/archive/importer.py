"""PDN import: load game collections into the archive, each game replayed by the rules engine.

Records are read as they were played (`app.rules.record`): a short capture the following moves
make clear, a remark glued to a move and a game played on past an automatic draw are stored, each
with a warning in the report.

A game is identified by a hash of its normalised form (variant, start position, the moves as the
engine writes them, result, and the tags that tell two games apart), stored in
`games.import_key`; importing the same file twice therefore adds nothing the second time.
Players are recorded by name as users of kind `imported`.
"""

from __future__ import annotations

import codecs
import hashlib
import json
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, TextIO

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from app.accounts import store as accounts
from app.archive import imports_store as imports
from app.rules import Color, Result, RulesError
from app.rules.pdn import PdnError, PdnGame, bounded_lines
from app.rules.record import replay_record
from app.status import GameStatus
from app.timeutil import as_utc, utcnow

NAME_MAX = 32  # users.name
# Tags that, with the moves, tell two records apart (two problems may share a position).
IDENTITY_TAGS = ("Event", "Site", "Date", "Round", "Black", "White")
UNKNOWN_NAMES = {"", "?", "-"}


class RejectedGame(Exception):
    """A record the archive will not store; the message says why, naming the move if one."""


@dataclass
class CheckedGame:
    """A record the rules engine accepted, ready to store."""

    variant: str
    start_fen: str | None
    moves: list[str]
    result: str
    termination: str | None
    tags: dict[str, str]
    black: str | None
    white: str | None
    played_on: datetime | None
    import_key: str
    warnings: list[str] = field(default_factory=list)
    """What was read by choice: a remark glued to a move, a resolved short capture, a game
    played on past an automatic draw (claim rules)."""


@dataclass
class ImportIssue:
    file: str
    number: int  # 1-based position of the game in its file
    line: int  # where the record starts
    label: str
    message: str


@dataclass
class ImportReport:
    imported: int = 0
    duplicates: int = 0
    rejected: list[ImportIssue] = field(default_factory=list)
    warnings: list[ImportIssue] = field(default_factory=list)


def _player(tags: dict[str, str], side: str) -> str | None:
    name = " ".join(tags.get(side, "").split())
    return None if name in UNKNOWN_NAMES else name[:NAME_MAX]


def _played_on(text: str) -> datetime | None:
    """The PDN Date when it is a complete date (`1996.01.13`, `1996-01-13`), else None."""
    for sep in ".-/":
        try:
            return as_utc(datetime.strptime(text, f"%Y{sep}%m{sep}%d"))
        except ValueError:
            continue
    return None


def label(tags: dict[str, str]) -> str:
    """A human name for a record in the error report."""
    event = tags.get("Event", "").strip()
    players = " - ".join(p for p in (tags.get("Black", ""), tags.get("White", "")) if p.strip())
    return " / ".join(part for part in (event, players) if part) or "(no tags)"


def check_game(record: PdnGame) -> CheckedGame:
    """Replay a PDN record with the rules engine; RejectedGame if any part of it is not legal."""
    if record.error is not None:
        raise RejectedGame(record.error)
    tags = dict(record.tags)
    try:
        variant = record.variant()
    except PdnError as exc:
        raise RejectedGame(str(exc)) from None
    declared = (record.result or tags.get("Result") or Result.UNFINISHED).strip()
    result = Result.parse(declared)
    if result is None:
        raise RejectedGame(f"unknown result {declared!r}")
    fen = tags.get("FEN", "").strip() or None
    try:
        start = variant.position(fen)
    except RulesError as exc:
        raise RejectedGame(f"bad FEN {fen!r}: {exc}") from None
    start_fen = start.fen() if fen is not None else None
    replay = replay_record(variant, record.moves, fen)
    if replay.error is not None:
        ply = replay.game.ply + 1
        index = ply if start.turn is Color.WHITE else ply - 1
        number = f"{index // 2 + 1}{'...' if index % 2 else '.'}"
        raise RejectedGame(f"move {number} {record.moves[ply - 1]}: {replay.error}")
    moves = [str(move) for move in replay.game.moves]
    outcome = replay.outcome()
    if outcome is not None and result is not Result.UNFINISHED and outcome.result() is not result:
        raise RejectedGame(
            f"result {result} contradicts the final position "
            f"({outcome.termination.value}: {outcome.result()})"
        )
    identity = [variant.name, start_fen or "", moves, result]
    identity += [" ".join(tags.get(t, "").split()) for t in IDENTITY_TAGS]
    key = hashlib.sha256(json.dumps(identity, ensure_ascii=False).encode()).hexdigest()
    return CheckedGame(
        variant=variant.name,
        start_fen=start_fen,
        moves=moves,
        result=result,
        termination=None if outcome is None else outcome.termination.value,
        tags=tags,
        black=_player(tags, "Black"),
        white=_player(tags, "White"),
        played_on=_played_on(tags.get("Date", "").strip()),
        import_key=key,
        warnings=[*record.warnings, *replay.warnings],
    )


def text_encoding(path: Path) -> str:
    """UTF-8 (skipping a BOM) when the whole file decodes as UTF-8, else Latin-1, which older
    PDN collections use; either way a name like "Müller" arrives intact."""
    decoder = codecs.getincrementaldecoder("utf-8")()
    with path.open("rb") as raw:
        try:
            while block := raw.read(1 << 16):
                decoder.decode(block)
            decoder.decode(b"", final=True)
        except UnicodeDecodeError:
            return "latin-1"
    return "utf-8-sig"


class CountingReader:
    """The lines of a text stream, counting the characters read, for a progress bar."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream
        self.consumed = 0

    def __iter__(self) -> Iterator[str]:
        for line in bounded_lines(self._stream):  # a huge line is never held whole
            self.consumed += len(line)
            yield line


class Importer:
    """Stores checked games in batches, creating imported players by name as it goes."""

    def __init__(
        self, sessionmaker: async_sessionmaker[AsyncSession], batch_size: int = 200
    ) -> None:
        self._sessionmaker = sessionmaker
        self._batch_size = batch_size
        self._user_ids: dict[str, int] = {}
        self._seen: set[str] = set()
        self.report = ImportReport()

    async def import_records(
        self,
        file: str,
        records: Iterable[PdnGame],
        on_game: Callable[[int], None] | None = None,
    ) -> None:
        """Check and store every record of one file; a bad record is reported, not fatal."""
        batch: list[CheckedGame] = []
        for number, record in enumerate(records, start=1):
            try:
                checked = check_game(record)
            except RejectedGame as exc:
                issue = ImportIssue(file, number, record.line, label(record.tags), str(exc))
                self.report.rejected.append(issue)
            else:
                self.report.warnings += [
                    ImportIssue(file, number, record.line, label(record.tags), warning)
                    for warning in checked.warnings
                ]
                if checked.import_key in self._seen:
                    self.report.duplicates += 1
                else:
                    self._seen.add(checked.import_key)
                    batch.append(checked)
                if len(batch) >= self._batch_size:
                    await self._store(batch)
                    batch = []
            if on_game is not None:
                on_game(number)
        if batch:
            await self._store(batch)

    async def _users(self, session: AsyncSession, names: set[str]) -> None:
        missing = names - self._user_ids.keys()
        if not missing:
            return
        self._user_ids.update(await accounts.ids_of(session, missing))
        new = [name for name in missing if name not in self._user_ids]
        self._user_ids.update(await accounts.add_imported_users(session, new))

    def _game_row(self, checked: CheckedGame, now: datetime) -> dict[str, Any]:
        started = checked.played_on or now
        return {
            "variant": checked.variant,
            "black_id": None if checked.black is None else self._user_ids[checked.black],
            "white_id": None if checked.white is None else self._user_ids[checked.white],
            "start_fen": checked.start_fen,
            "status": GameStatus.FINISHED,
            "result": checked.result,
            "termination": checked.termination,
            "ply_count": len(checked.moves),
            "source": "import",
            "import_key": checked.import_key,
            "tags": checked.tags,
            "started_at": started,
            "finished_at": started,
        }

    async def _store(self, batch: list[CheckedGame]) -> None:
        now = utcnow()
        async with self._sessionmaker() as session, session.begin():
            existing = await imports.known_keys(session, [g.import_key for g in batch])
            fresh = [g for g in batch if g.import_key not in existing]
            self.report.duplicates += len(batch) - len(fresh)
            names = {n for g in fresh for n in (g.black, g.white) if n is not None}
            await self._users(session, names)
            games = await imports.add_games(
                session, [self._game_row(checked, now) for checked in fresh]
            )
            move_rows: list[dict[str, Any]] = [
                {"game_id": game.id, "ply": ply, "move": text, "played_at": game.started_at}
                for checked, game in zip(fresh, games, strict=True)
                for ply, text in enumerate(checked.moves, start=1)
            ]
            await imports.add_moves(session, move_rows)
            self.report.imported += len(fresh)
