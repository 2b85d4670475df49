"""PDN reading and writing, against real files and against pydraughts' reader."""

from __future__ import annotations

import io
import random
import tracemalloc
from pathlib import Path

import pytest
from draughts.PDN import PDNReader

from app.rules import Game, get_variant
from app.rules.pdn import (
    MAX_TAG_LENGTH,
    MAX_TAGS,
    UnsupportedGameTypeError,
    read_games,
    write_game,
)

DATA = Path(__file__).parent.parent / "data"
ENGLISH_FILES = sorted(p for p in DATA.glob("*.pdn") if p.name != "DUTCH96H.pdn")


@pytest.mark.parametrize("path", ENGLISH_FILES, ids=lambda p: p.name)
def test_every_english_game_of_the_sample_files_replays_legally(path: Path) -> None:
    with path.open(encoding="utf-8") as stream:
        records = list(read_games(stream))
    assert records
    for record in records:
        assert record.error is None, (record.line, record.error)
        game = record.game()
        assert game.ply == len(record.moves)


def test_the_international_file_is_refused_clearly() -> None:
    with (DATA / "DUTCH96H.pdn").open(encoding="utf-8") as stream:
        records = list(read_games(stream))
    assert len(records) == 13
    for record in records:
        with pytest.raises(UnsupportedGameTypeError, match="GameType '20' .international"):
            record.variant()


def test_game_types_21_and_23_are_recognised() -> None:
    text = '[GameType "21"]\n1. 11-15 *\n\n[GameType "23,B,8,8,N1,0"]\n1. 11-15 *\n'
    english, pool = read_games(text)
    assert english.variant().name == "english" and pool.variant().name == "pool"
    (untyped,) = read_games("1. 11-15 *")
    assert untyped.variant().name == "english"
    assert untyped.variant(get_variant("pool")).name == "pool"


def test_reader_skips_comments_variations_numbers_and_annotations() -> None:
    text = """[Event "Quirks"]
[Result "1-0"]
1. 11-15 {a comment
over two lines} 23-19 (2. 9-14 (2... 22-17) 27-23 {nested}) 2. 8-11! $1 22-17?
3.9-13 3... 17x10 ; the rest of this line is a comment
4. 6x15 1-0
"""
    (record,) = read_games(text)
    assert record.error is None
    assert record.moves == ["11-15", "23-19", "8-11", "22-17", "9-13", "17x10", "6x15"]
    assert record.result == "1-0" and record.tags["Event"] == "Quirks"


def test_reader_accepts_x_for_steps_and_fen_in_any_order() -> None:
    text = '[FEN "W:W31,27,19:B17,12,5."]\n[Setup "1"]\n1... 19x15 *\n'
    (record,) = read_games(text)
    game = record.game()
    assert [str(m) for m in game.moves] == ["19-15"]


def test_fen_only_records_and_records_without_result() -> None:
    text = '[Event "A"]\n[FEN "B:W18:B14."]\n[Result "1-0"]\n\n[Event "B"]\n1. 11-15 23-19\n'
    first, second = read_games(text)
    assert first.moves == [] and first.result == "1-0" and first.fen == "B:W18:B14."
    assert second.moves == ["11-15", "23-19"] and second.tags == {"Event": "B"}


def test_a_broken_record_is_reported_and_the_next_one_still_read() -> None:
    text = '[Event "bad"]\n1. 11-15 e3-f4 *\n[Event "good"]\n1. 11-15 *\n'
    bad, good = read_games(text)
    assert bad.error is not None and "e3-f4" in bad.error
    assert good.error is None and good.moves == ["11-15"]


def test_an_unclosed_comment_or_variation_spoils_only_its_own_record() -> None:
    text = (
        '[Event "comment"]\n1. 11-15 {never closed\n\n'
        '[Event "variation"]\n1. 11-15 (23-19 \n\n'
        '[Event "last"]\n1. 9-13 *\n'
    )
    comment, variation, last = read_games(text)
    assert comment.error is not None and "comment not closed" in comment.error
    assert variation.error is not None and "variation not closed" in variation.error
    assert last.error is None and last.moves == ["9-13"]


def test_reader_streams_game_by_game() -> None:
    def lines() -> object:
        yield '[Event "1"]\n'
        yield "1. 11-15 *\n"
        raise AssertionError("read past the first game")

    records = read_games(lines())  # type: ignore[arg-type]
    assert next(records).moves == ["11-15"]


def random_game(seed: int, variant: str = "english", plies: int = 90) -> Game:
    rng = random.Random(seed)
    game = Game(variant)
    while game.outcome() is None and game.ply < plies:
        game.play(rng.choice(game.legal_moves()))
    return game


def test_writer_orders_tags_wraps_lines_and_places_comments() -> None:
    game = random_game(1)
    text = write_game(
        {"Round": "2", "Opening": "Old Faithful", "White": "W", "Event": "E", "GameType": "21"},
        game.moves,
        "0-1",
        comments={1: "0:59", 2: "1:00"},
    )
    head, body = text.split("\n\n", 1)
    assert head.splitlines() == [
        '[Event "E"]',
        '[Round "2"]',
        '[White "W"]',
        '[Result "0-1"]',
        '[GameType "21"]',
        '[Opening "Old Faithful"]',
    ]
    assert body.startswith(f"1. {game.moves[0]} {{0:59}} {game.moves[1]} {{1:00}} 2. ")
    assert all(len(line) <= 80 for line in body.splitlines())
    assert body.rstrip().endswith("0-1") and text.endswith("\n\n")


@pytest.mark.parametrize("seed", range(8))
def test_written_games_read_back_identically_with_ours_and_pydraughts(seed: int) -> None:
    game = random_game(seed)
    tags = {"Event": f"Game {seed}", "Black": "Anna", "White": "Ben", "GameType": "21"}
    text = write_game(tags, game.moves, "1/2-1/2", comments={2: "clock 0:30"})
    (ours,) = read_games(io.StringIO(text))
    assert ours.moves == [str(m) for m in game.moves]
    assert ours.tags == {**tags, "Result": "1/2-1/2"} and ours.result == "1/2-1/2"
    assert ours.game().fen() == game.fen()
    (theirs,) = PDNReader(pdn_text=text).games
    assert theirs.moves == ours.moves and theirs.tags == ours.tags
    assert theirs.game_ending == "1/2-1/2"


def test_written_game_from_a_setup_position_reads_back() -> None:
    game = Game("pool", "W:W27,30:B1,5")
    for text in ["27-23", "5-9", "23-19"]:
        game.play(text)
    pdn = write_game({"GameType": "23", "FEN": game.start_fen}, game.moves, "*")
    assert "1... 27-23 2. 5-9 23-19 *" in pdn
    (record,) = read_games(pdn)
    assert record.game().fen() == game.fen()


def test_reader_ignores_a_byte_order_mark_and_any_line_ending() -> None:
    text = '\ufeff[Event "bom"]\r\n1. 11-15 23-19 *\r\n\ufeff[Event "mac"]\r1. 9-13 *\r'
    bom, mac = read_games(text)
    assert bom.error is None and bom.tags == {"Event": "bom"} and bom.moves == ["11-15", "23-19"]
    assert mac.error is None and mac.moves == ["9-13"] and mac.line == 3


def test_tag_values_are_unescaped_as_the_writer_escapes_them() -> None:
    event = 'C:\\games "final" \\ round'
    (record,) = read_games(write_game({"Event": event, "Site": "a\r\nb\rc"}, ["11-15"], "*"))
    assert record.error is None and record.moves == ["11-15"]
    assert record.tags["Event"] == event and record.tags["Site"] == "a b c"
    (loose,) = read_games('[Site "C:\\games\\x"]\n*')  # a backslash escaping nothing is kept
    assert loose.tags["Site"] == "C:\\games\\x"


def test_brackets_and_tag_lines_inside_a_closed_comment_are_comment_text() -> None:
    text = (
        '[Event "a"]\n1. 11-15 {see [this] and (that)\n'
        '[Event "quoted"] from another game} 23-19 *\n'
    )
    (record,) = read_games(text)
    assert record.error is None and record.moves == ["11-15", "23-19"]
    assert record.tags == {"Event": "a"}


def test_an_error_quotes_a_long_word_only_in_part() -> None:
    (record,) = read_games("1. 11-15 " + "\x00" * 100_000 + " *")
    assert record.error is not None and len(record.error) < 200


def test_a_remark_glued_to_a_move_is_read_as_a_comment_with_a_warning() -> None:
    """Real files have `8-11Redoversteppedthetimecontrolonthismove.`: the move stands."""
    text = '[Event "glued"]\n1. 11-15 23-19\n2. 8-11Redoversteppedthetimecontrol. 22-17 0-1\n'
    (record,) = read_games(text)
    assert record.error is None
    assert record.moves == ["11-15", "23-19", "8-11", "22-17"] and record.result == "0-1"
    (warning,) = record.warnings
    assert warning.startswith("line 3: ") and "'Redoversteppedthetimecontrol.'" in warning


GOOD = '[Event "good {n}"]\n[Black "Ann"]\n[White "Bob"]\n1. 11-15 22-18 *\n\n'


@pytest.mark.parametrize(
    "bad",
    [
        '[Event "' + "x" * 1_000_000 + '"]\n1. 11-15 *\n\n',  # one huge tag
        '[Event "' + "x" * (MAX_TAG_LENGTH + 1) + '"]\n1. 11-15 *\n\n',  # just too long
        '[Event "huge line"]\n1. 11-15 {' + "y" * 1_000_000 + "} 22-18 *\n\n",
        '[Event "long comment"]\n1. 11-15 {'
        + "z" * 1000
        + "\n" * 0
        + ("w" * 99 + "\n") * 300
        + "} 22-18 *\n\n",
        "".join(f'[T{n} "v"]\n' for n in range(MAX_TAGS + 1)) + "1. 11-15 *\n\n",
    ],
    ids=["huge tag", "long tag", "huge line", "long comment", "many tags"],
)
def test_an_oversized_tag_or_comment_spoils_its_record_in_bounded_memory(bad: str) -> None:
    """A tag value, a comment, a line or a record's tags beyond the reader's bounds make that
    record unreadable with a clear reason, and the reader's memory stays small however big the
    value (a 30 MB tag once took 5 GB matching it)."""
    stream = io.StringIO(GOOD.format(n=1) + bad + GOOD.format(n=2))
    tracemalloc.start()
    try:
        records = list(read_games(stream))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 4_000_000, peak  # a line of MAX_LINE_LENGTH at most, and the records
    assert [r.tags.get("Event", "")[:20] for r in records][::2] == ["good 1", "good 2"]
    assert len(records) == 3 and records[0].error is None and records[2].error is None
    assert (
        records[1].error is not None
        and "longer than" in records[1].error
        or (records[1].error is not None and "tags" in records[1].error)
    ), records[1].error
    assert max(len(v) for r in records for v in r.tags.values()) <= MAX_TAG_LENGTH
