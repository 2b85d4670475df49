"""Settings read from the environment, as operators give them."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError

from app.config import Settings


@pytest.fixture(autouse=True)
def no_dotenv(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.chdir(tmp_path)  # no stray .env is read
    for name in ("ENVIRONMENT", "SECRET_KEY", "ALLOWED_ORIGINS"):
        monkeypatch.delenv(name, raising=False)


def test_production_starts_without_a_secret_key(monkeypatch: pytest.MonkeyPatch) -> None:
    """Tokens are random and stored as SHA-256: the server has no secret to be given."""
    monkeypatch.setenv("ENVIRONMENT", "production")
    assert Settings().environment == "production"


def test_an_old_environment_setting_secret_key_still_starts(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("ENVIRONMENT", "production")
    monkeypatch.setenv("SECRET_KEY", "dev-insecure-secret-key-change-me")
    settings = Settings()
    assert "secret_key" not in Settings.model_fields and not hasattr(settings, "secret_key")


def test_allowed_origins_are_read_and_normalised(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ALLOWED_ORIGINS", " https://Play.Example.com/ ,http://127.0.0.1:8080")
    assert Settings().allowed_origins == "https://play.example.com,http://127.0.0.1:8080"
    monkeypatch.delenv("ALLOWED_ORIGINS")
    assert Settings().allowed_origins == ""


@pytest.mark.parametrize("value", ["play.example.com", "https://play.example.com/lobby", "*"])
def test_an_allowed_origin_must_be_scheme_host_and_port(
    monkeypatch: pytest.MonkeyPatch, value: str
) -> None:
    monkeypatch.setenv("ALLOWED_ORIGINS", value)
    with pytest.raises(ValidationError, match="ALLOWED_ORIGINS"):
        Settings()


def test_the_database_pool_is_a_setting_and_holds_the_writers(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("DATABASE_POOL_SIZE", "3")
    monkeypatch.setenv("DATABASE_MAX_OVERFLOW", "5")
    settings = Settings()
    assert (settings.database_pool_size, settings.database_max_overflow) == (3, 5)
    monkeypatch.setenv("DATABASE_MAX_OVERFLOW", "2")
    with pytest.raises(ValidationError, match="at least 6"):
        Settings()


async def test_the_app_opens_the_pool_it_is_given() -> None:
    from app.main import create_app, open_database

    url = "postgresql+asyncpg://checkers@127.0.0.1:5432/checkers"  # not connected to here
    app = create_app(Settings(database_url=url, database_pool_size=3, database_max_overflow=5))
    async with open_database(app):
        pool = app.state.db.engine.pool
        assert (pool.size(), pool._max_overflow) == (3, 5)
