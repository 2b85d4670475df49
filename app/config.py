"""Server settings, read once from the environment or a `.env` file."""

from __future__ import annotations

from functools import lru_cache
from typing import Literal

from pydantic import field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from app import origins


class Settings(BaseSettings):
    # Unknown variables are ignored: an environment written for an older version (one that
    # still sets SECRET_KEY, say) starts this one unchanged.
    model_config = SettingsConfigDict(env_file=".env", extra="ignore")

    environment: Literal["development", "test", "production"] = "development"
    database_url: str = "sqlite+aiosqlite:///./checkers.db"
    redis_url: str | None = None
    host: str = "127.0.0.1"
    port: int = 8000
    log_level: str = "info"
    # Proxies trusted to set X-Forwarded-For/-Proto (comma-separated IPs or networks, or "*").
    forwarded_allow_ips: str = "127.0.0.1"

    # Accounts
    token_ttl_hours: int = 24 * 30
    login_max_failures: int = 5
    login_window_seconds: int = 300

    # Live play
    disconnect_grace_seconds: float = 60.0
    ws_max_message_bytes: int = 4096
    ws_messages_per_second: float = 20.0  # per connection; bursts of twice as many
    chat_max_length: int = 300
    # Each process writes a heartbeat this often; one silent for 3 intervals counts as gone.
    heartbeat_seconds: float = 5.0
    # How often each process compares its tables with the event log (catching up rings lost
    # with the broker), flags clocks that ran out and stands up players who did not come back.
    sweep_seconds: float = 1.0

    @property
    def broker_url(self) -> str:
        """`memory://` unless Redis is configured."""
        return self.redis_url or "memory://"

    # Websocket handshake: the origins, besides the server's own, whose pages may open `/ws`
    # (comma-separated, such as `https://play.example.com`). Kept as their normalised text.
    allowed_origins: str = ""

    @field_validator("allowed_origins")
    @classmethod
    def _read_origins(cls, value: str) -> str:
        read = []
        for item in filter(None, (part.strip() for part in value.split(","))):
            origin = origins.normalise(item)
            if origin is None:
                raise ValueError(
                    f"ALLOWED_ORIGINS: {item!r} is not an origin such as https://play.example.com"
                )
            read.append(origin)
        return ",".join(read)

    @property
    def allowed_origin_set(self) -> frozenset[str]:
        return frozenset(filter(None, self.allowed_origins.split(",")))


@lru_cache
def get_settings() -> Settings:
    return Settings()
