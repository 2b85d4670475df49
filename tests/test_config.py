"""Settings read from the environment, as operators give them."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.config import Settings


@pytest.fixture(autouse=True)
def no_dotenv(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.chdir(tmp_path)  # no stray .env is read
    for name in ("ENVIRONMENT", "SECRET_KEY"):
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
