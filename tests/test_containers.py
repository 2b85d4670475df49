"""The container files describe a stack that can work (no Docker engine runs the tests).

docker-compose.yml: the app, PostgreSQL and Redis, with health checks, the app starting only
once both are healthy, and settings the app accepts. Dockerfile: a slim image running as a
non-root user that migrates and then serves on all interfaces.
"""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path
from typing import Any

import pytest
import yaml
from sqlalchemy.engine import make_url

from app.config import Settings

ROOT = Path(__file__).resolve().parents[1]
VARIABLE = re.compile(r"\$\{(\w+)(?::([-?])([^}]*))?\}")


def interpolate(value: str, env: dict[str, str]) -> str:
    """Compose's `${VAR}`, `${VAR:-default}` and `${VAR:?error}`."""

    def replace(match: re.Match[str]) -> str:
        name, kind, arg = match.groups()
        if env.get(name):
            return env[name]
        if kind == "-":
            return arg
        raise KeyError(f"{name}: {arg}")

    return VARIABLE.sub(replace, value)


@pytest.fixture(scope="module")
def compose() -> dict[str, Any]:
    data: dict[str, Any] = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
    return data


@pytest.fixture(scope="module")
def dockerfile() -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) pairs, continuation lines joined."""
    text = (ROOT / "Dockerfile").read_text().replace("\\\n", " ")
    lines = [line.strip() for line in text.splitlines()]
    pairs = []
    for line in lines:
        if line and not line.startswith("#"):
            instruction, _, args = line.partition(" ")
            pairs.append((instruction.upper(), args.strip()))
    return pairs


def test_services(compose: dict[str, Any]) -> None:
    """HAProxy publishes the port; the app publishes none, so `--scale app=3` can run."""
    assert set(compose["services"]) == {"proxy", "app", "postgres", "redis"}
    app, proxy = compose["services"]["app"], compose["services"]["proxy"]
    assert app["build"] == "." and "ports" not in app
    assert "8000:8000" in proxy["ports"]
    config = next(v for v in proxy["volumes"] if "haproxy.cfg" in v).split(":")[0]
    assert (ROOT / config).is_file()


def test_app_waits_for_healthy_dependencies(compose: dict[str, Any]) -> None:
    services = compose["services"]
    assert services["app"]["depends_on"] == {
        "postgres": {"condition": "service_healthy"},
        "redis": {"condition": "service_healthy"},
    }
    for name in ("app", "postgres", "redis"):
        check = services[name]["healthcheck"]
        assert check["test"][0] in ("CMD", "CMD-SHELL"), name
        assert check["retries"] >= 3, name
    assert "pg_isready" in services["postgres"]["healthcheck"]["test"][1]
    assert services["redis"]["healthcheck"]["test"][1:] == ["redis-cli", "ping"]
    assert "/readyz" in " ".join(services["app"]["healthcheck"]["test"])


def test_app_environment_is_valid_production_settings(compose: dict[str, Any]) -> None:
    env = compose["services"]["app"]["environment"]
    assert {"DATABASE_URL", "REDIS_URL"} <= set(env)
    # Every variable the app gets is a setting (a typo would be silently ignored).
    assert {key.lower() for key in env} <= set(Settings.model_fields)

    secrets = {"POSTGRES_PASSWORD": "pg-s3cret"}
    values = {k: interpolate(str(v), secrets) for k, v in env.items()}
    settings = Settings(**{k.lower(): v for k, v in values.items()}, _env_file=None)
    assert settings.environment == "production"
    assert settings.broker_url == "redis://redis:6379/0"

    database = make_url(settings.database_url)
    postgres = compose["services"]["postgres"]["environment"]
    assert database.drivername == "postgresql+asyncpg"
    assert database.host == "postgres"
    assert database.username == postgres["POSTGRES_USER"]
    assert database.database == postgres["POSTGRES_DB"]
    assert database.password == interpolate(postgres["POSTGRES_PASSWORD"], secrets)
    assert database.password == "pg-s3cret"


def test_the_only_secret_to_supply_is_the_database_password(compose: dict[str, Any]) -> None:
    """The server needs no secret key: with POSTGRES_PASSWORD set, every variable resolves."""
    for service in compose["services"].values():
        for key, value in (service.get("environment") or {}).items():
            assert key != "SECRET_KEY"
            interpolate(str(value), {"POSTGRES_PASSWORD": "pg-s3cret"})


def test_database_password_must_be_supplied(compose: dict[str, Any]) -> None:
    """No password to fall back on: compose refuses to start without POSTGRES_PASSWORD."""
    services = compose["services"]
    for value in (
        services["postgres"]["environment"]["POSTGRES_PASSWORD"],
        services["app"]["environment"]["DATABASE_URL"],
    ):
        with pytest.raises(KeyError, match="POSTGRES_PASSWORD"):
            interpolate(value, {})


def test_image_is_slim_python_311(dockerfile: list[tuple[str, str]]) -> None:
    assert dockerfile[0] == ("FROM", "python:3.11-slim")


def test_image_runs_as_non_root(dockerfile: list[tuple[str, str]]) -> None:
    users = [args for instruction, args in dockerfile if instruction == "USER"]
    assert users and users[-1] not in ("root", "0")
    last_user = max(i for i, (instruction, _) in enumerate(dockerfile) if instruction == "USER")
    last_cmd = max(i for i, (instruction, _) in enumerate(dockerfile) if instruction == "CMD")
    assert last_user < last_cmd


def test_image_migrates_then_serves_on_all_interfaces(dockerfile: list[tuple[str, str]]) -> None:
    cmd = json.loads([args for i, args in dockerfile if i == "CMD"][-1])
    assert cmd[:2] == ["sh", "-c"]
    migrate, _, serve = cmd[2].partition("&&")
    assert "checkers migrate" in migrate
    assert shlex.split(serve)[:5] == ["exec", "checkers", "serve", "--host", "0.0.0.0"]
    assert ("EXPOSE", "8000") in dockerfile
    assert any(i == "HEALTHCHECK" and "/readyz" in args for i, args in dockerfile)


def test_image_gets_what_it_installs(dockerfile: list[tuple[str, str]]) -> None:
    copied = [args.split()[:-1] for instruction, args in dockerfile if instruction == "COPY"]
    sources = {source for group in copied for source in group}
    assert {"pyproject.toml", "README.md", "app", "migrations"} <= sources
    for source in sources:
        assert (ROOT / source).exists(), source
    ignored = (ROOT / ".dockerignore").read_text().split()
    assert {".git", ".venv", "*.db"} <= set(ignored)
    assert not sources & set(ignored)
