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
