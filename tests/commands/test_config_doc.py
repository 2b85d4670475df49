"""`checkers config-doc`: docs/configuration.md is what the settings (app/config.py) say."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from app.commands import config_doc
from app.config import Settings

PAGE = Path(__file__).resolve().parents[2] / "docs" / "configuration.md"


def run(*args: str) -> int:
    parser = argparse.ArgumentParser(prog="checkers")
    config_doc.register(parser.add_subparsers(dest="command", required=True))
    parsed = parser.parse_args(["config-doc", *args])
    result: int = parsed.func(parsed)
    return result


def test_the_page_is_what_the_settings_say() -> None:
    assert PAGE.read_text(encoding="utf-8") == config_doc.generate(), (
        "docs/configuration.md is out of date: run `checkers config-doc > docs/configuration.md`"
    )


def test_every_setting_has_its_row_with_a_meaning() -> None:
    rows = {s.variable: s for section in config_doc.sections(Settings) for s in section.settings}
    variables = [config_doc.setting_variable(Settings, name) for name in Settings.model_fields]
    assert sorted(rows) == sorted(variables)
    assert "DATABASE_URL" in rows
    assert [v for v, s in rows.items() if not s.meaning.strip()] == []
    page = config_doc.generate()
    assert [v for v in rows if f"| `{v}` |" not in page] == []


def test_each_meaning_written_for_the_page_names_a_setting() -> None:
    assert sorted(set(config_doc.MEANINGS) - set(Settings.model_fields)) == []


def test_settings_are_read_as_the_page_says() -> None:
    rows = {s.variable: s for section in config_doc.sections(Settings) for s in section.settings}
    assert rows["DATABASE_URL"].default == "`sqlite+aiosqlite:///./checkers.db`"
    assert rows["REDIS_URL"].default == "unset"
    assert rows["AI_WORKERS"].kind == "integer 1 to 64"
    assert rows["AI_GAMES_PER_USER"].kind == "integer ≥ 1"
    assert rows["ENVIRONMENT"].kind == "`development`, `test` or `production`"
    assert rows["SMTP_PASSWORD"].kind == "text (secret)"
    titles = [section.title for section in config_doc.sections(Settings)]
    assert titles[:3] == ["Server", "Accounts", "Fair play"]


def test_check_accepts_the_page_and_refuses_another(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run("--check", str(PAGE)) == 0
    stale = tmp_path / "configuration.md"
    stale.write_text(config_doc.generate().replace("`CHAT_MAX_LENGTH`", "`CHAT_LENGTH`"))
    assert run("--check", str(stale)) == 1
    err = capsys.readouterr().err
    assert f"{stale} differs from the settings" in err
    assert "+| `CHAT_MAX_LENGTH`" in err and "-| `CHAT_LENGTH`" in err
    assert run("--check", str(tmp_path / "missing.md")) == 2


def test_without_check_it_prints_the_page(capsys: pytest.CaptureFixture[str]) -> None:
    assert run() == 0
    assert capsys.readouterr().out == config_doc.generate()
