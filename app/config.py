"""Server settings, read once from the environment or a `.env` file."""

from __future__ import annotations

import ipaddress
from functools import lru_cache
from typing import Annotated, Literal

from pydantic import Field, PositiveInt, SecretStr, field_validator, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from app import origins

Network = ipaddress.IPv4Network | ipaddress.IPv6Network


@lru_cache(maxsize=16)
def networks(spec: str) -> tuple[Network, ...] | None:
    """Comma-separated addresses or networks (`10.0.0.0/8`, `::1`); None for "*" (any)."""
    items = [item.strip() for item in spec.split(",") if item.strip()]
    if "*" in items:
        return None
    try:
        return tuple(ipaddress.ip_network(item, strict=False) for item in items)
    except ValueError as exc:
        raise ValueError(f"not an address or network: {exc}") from None


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

    # Fair play (`app.ratings.fair_play`): a game at a rated table is casual between accounts
    # that used one address within this many days, and beyond this many rated games a day
    # between the same two players; a rating gains at most so much a day from linked games
    # (short ones, or against a source already met that day); a rating that climbed this much
    # in a week, its gains won against at most this many opponents, is queued for a moderator.
    rated_shared_address_days: Annotated[float, Field(ge=0)] = 30.0
    rated_games_per_pair_per_day: Annotated[int, Field(ge=1)] = 3
    # The most a rating gains in 24 hours from linked games: games shorter than
    # `rated_short_game_plies`, and games against an opponent the player already met in those
    # 24 hours or who used an address such an opponent used (docs/ratings.md, "Fair play").
    rated_linked_gain_per_day: Annotated[float, Field(ge=0)] = 100.0
    # A rated game of fewer plies than this is short: what it gains is linked.
    rated_short_game_plies: Annotated[int, Field(ge=2)] = 20
    rating_review_rise: Annotated[float, Field(gt=0)] = 300.0
    rating_review_max_opponents: Annotated[int, Field(ge=1)] = 3

    # Live play
    disconnect_grace_seconds: float = 60.0
    # Each side must make its first move this long after the game starts (the side to move
    # first) or after the first move (the other side), else the game is aborted; no clock
    # runs before both have moved.
    first_move_seconds: Annotated[float, Field(gt=0)] = 30.0
    ws_max_message_bytes: int = 4096
    ws_messages_per_second: float = 20.0  # per connection; bursts of twice as many
    chat_max_length: int = 300
    # Each process writes a heartbeat this often; one silent for 3 intervals counts as gone.
    heartbeat_seconds: float = 5.0
    # How often each process compares its tables with the event log (catching up rings lost
    # with the broker), flags clocks that ran out and stands up players who did not come back.
    sweep_seconds: float = 1.0
    # A closed table's events are deleted this long after it closed (`app.live.retention`;
    # its games' moves stay in the archive); 0 keeps them for ever.
    table_log_retention_days: Annotated[float, Field(ge=0)] = 7.0

    # The computer opponent: processes searching its moves (outside the event loop), per
    # server process; searches beyond them wait their turn.
    ai_workers: Annotated[int, Field(ge=1, le=64)] = 1
    # Start them (and load the engine's book and endgame database in them) with the server;
    # otherwise the first game against the computer starts them, and its first move waits the
    # second or so that takes.
    ai_workers_at_start: bool = False
    # Games against the computer in progress at once, per user and per client address (across
    # processes; `too_many_ai_games` beyond), so that one address cannot keep every worker busy.
    ai_games_per_user: PositiveInt = 2
    ai_games_per_address: PositiveInt = 4

    # Game analysis (docs/analysis.md): processes running analyses, per server process, at the
    # lowest priority (live play and the computer's moves come first); the search's budget per
    # position; analyses asked for per user and per client address in a day (one at a time
    # per user).
    analysis_workers: Annotated[int, Field(ge=0, le=16)] = 1
    analysis_nodes: Annotated[int, Field(ge=1_000, le=5_000_000)] = 100_000
    # The analysis processes in Linux's idle scheduling class (false: the server's priority,
    # for a machine that only analyses, or tests that must not wait on a busy one).
    analysis_idle: bool = True
    analyses_per_day: PositiveInt = 20
    analyses_per_address_per_day: PositiveInt = 50
    # The analysis board (`GET /api/analysis/position`, open to anyone): its requests in
    # progress at once per client address (a page has a position and a search at most); one
    # more is refused at once (429, Retry-After).
    board_requests_per_address: PositiveInt = 4
    # Long lines (over 30 plies) waiting for or being replayed in the analysis board's process,
    # per server process; one more is refused at once (429, Retry-After).
    board_replays_queued: PositiveInt = 32
    # The analysis board's searches waiting for or running in the analysis processes, per
    # server process; one more is refused at once (429, Retry-After).
    board_searches_queued: PositiveInt = 4

    # Abuse limits: log-in, registration, guests (see app.accounts.limits; the pair limit is
    # login_max_failures, in login_window_seconds, above).
    login_address_max_failures: PositiveInt = 20  # per address across names, per window
    login_name_max_failures: PositiveInt = 20  # per name across addresses, per window
    login_lockout_max_seconds: PositiveInt = 86400  # the longest a locked pair waits
    registrations_per_address: PositiveInt = 5  # per accounts_window_seconds
    guests_per_address: PositiveInt = 10  # per accounts_window_seconds
    accounts_window_seconds: PositiveInt = 3600
    tables_per_user: PositiveInt = 3  # open tables a user hosts, across all rooms
    # Challenges a player may receive (from anyone), and may receive from one challenger, per
    # challenge_window_seconds (leaky buckets: so many at once, then one every window / limit),
    # so that a challenge-and-cancel loop cannot flood anyone with notices.
    challenges_per_recipient: PositiveInt = 20
    challenges_per_pair: PositiveInt = 5
    challenge_window_seconds: PositiveInt = 600
    # Stores of conditional moves a player may make per minute, across their games (a leaky
    # bucket: so many at once, then one every 60 / so many seconds): each checks up to 30 lines
    # of 30 plies against the rules.
    conditional_saves_per_minute: PositiveInt = 5

    # Exposure limits: websocket connection caps, API docs, metrics scraping.
    ws_max_per_ip: Annotated[int, Field(ge=0)] = 100  # open sockets per client address; 0: no cap
    ws_max_per_user: Annotated[int, Field(ge=0)] = 10  # open sockets per signed-in user; 0: no cap
    # Open sockets per process; unset: derived from the open-file limit (app/realtime/limits.py).
    ws_max_connections: Annotated[int, Field(ge=1)] | None = None
    # `checkers serve` exposed without the proxy: a connection whose request head (line and
    # headers) is not complete this long after it opened or after its previous response is
    # closed (slow loris); an idle kept-alive connection is closed after the keep-alive time;
    # past `http_limit_concurrency` connections and tasks, new requests get 503 at once
    # (unset: the open-file limit less 100).
    http_header_timeout_seconds: Annotated[float, Field(gt=0, allow_inf_nan=False)] = 10.0
    http_keep_alive_seconds: PositiveInt = 5
    http_limit_concurrency: Annotated[int, Field(ge=1)] | None = None
    # /docs, /redoc and /openapi.json; unset: served except in production.
    api_docs: bool | None = None
    # Who may read /metrics: comma-separated addresses or networks, or "*" for everyone.
    metrics_allow: str = "127.0.0.0/8,::1,10.0.0.0/8,172.16.0.0/12,192.168.0.0/16,fc00::/7"

    # Websocket handshake: the origins, besides the server's own, whose pages may open `/ws`
    # (comma-separated, such as `https://play.example.com`). Kept as their normalised text.
    allowed_origins: str = ""

    # E-mail (docs/notifications.md): off unless `smtp_host` is set. Mail is written to an
    # outbox in the transaction of what it tells, and each process's worker sends it through
    # this SMTP server (`starttls`, implicit `tls`, or `none` on a trusted network), trying
    # again with back-off (`mail_retry_min_seconds` doubling up to `mail_retry_max_seconds`)
    # while the server is down, and giving a mail up after `mail_max_attempts` tries.
    smtp_host: str | None = None
    smtp_port: Annotated[int, Field(ge=1, le=65535)] = 587
    smtp_security: Literal["starttls", "tls", "none"] = "starttls"
    smtp_username: str | None = None
    smtp_password: SecretStr | None = None
    mail_from: str = "Checkers <noreply@localhost>"
    mail_retry_min_seconds: Annotated[float, Field(gt=0)] = 30.0
    mail_retry_max_seconds: Annotated[float, Field(gt=0)] = 3600.0
    # Tries of one mail before it is given up (with the default waits, 50 span about 43 hours).
    mail_max_attempts: PositiveInt = 50
    # Confirmation mails one recipient gets a day, whichever accounts ask (a leaky bucket).
    confirmations_per_recipient: PositiveInt = 3
    # How long a process holds the mail it is sending: a crashed process's mail waits this long.
    mail_lease_seconds: Annotated[float, Field(gt=0)] = 120.0
    # The address players reach the site at, for the links in mail (confirm, unsubscribe, the
    # game); unset: http://HOST:PORT.
    public_url: str | None = None

    # Flooding: the messages per second, in units (a ping 1, a snapshot or a write several; see
    # app/realtime/budgets.py), that all the sockets of one client address share, with bursts
    # of twice as many. Beyond, its sockets are read more slowly. 0: no budget.
    ws_messages_per_second_per_ip: Annotated[float, Field(ge=0, allow_inf_nan=False)] = 100.0

    # Scale: a read replica for the archive's REST reads (game history, one game, export,
    # player records), which tolerate a replica's lag; unset: DATABASE_URL. Live play, accounts
    # and administration always use DATABASE_URL.
    archive_database_url: str | None = None
    # Each process's connection pool on PostgreSQL: connections kept open, and opened beyond
    # them under a burst; the 4 move writers hold 4 of them for good, so at least 6 in all. With
    # N processes the database must allow N × (pool size + overflow) (docs/scaling.md).
    # A stopping process (SIGTERM) waits at most this long for its connections' handlers to end.
    shutdown_timeout_seconds: Annotated[int, Field(ge=1)] = 10
    database_pool_size: Annotated[int, Field(ge=1)] = 10
    database_max_overflow: Annotated[int, Field(ge=0)] = 20

    @property
    def mail_enabled(self) -> bool:
        return self.smtp_host is not None

    @property
    def site_url(self) -> str:
        """The site's address, for links in mail (no trailing slash)."""
        return (self.public_url or f"http://{self.host}:{self.port}").rstrip("/")

    @property
    def broker_url(self) -> str:
        """`memory://` unless Redis is configured."""
        return self.redis_url or "memory://"

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

    @property
    def api_docs_served(self) -> bool:
        return self.api_docs if self.api_docs is not None else self.environment != "production"

    @model_validator(mode="after")
    def _pool_holds_the_writers(self) -> Settings:
        if self.database_pool_size + self.database_max_overflow < 6:
            raise ValueError(
                "DATABASE_POOL_SIZE + DATABASE_MAX_OVERFLOW must be at least 6: the move writers "
                "hold 4 connections"
            )
        return self

    @field_validator("metrics_allow")
    @classmethod
    def _valid_networks(cls, value: str) -> str:
        networks(value)  # a typo fails at start, naming the bad entry
        return value


@lru_cache
def get_settings() -> Settings:
    return Settings()
