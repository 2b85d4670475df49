"""`checkers config-doc`: docs/configuration.md, written from the settings (`app.config.Settings`).

Each setting's environment variable, type and default come from the model. Its section, and the
section's introduction, come from the comments of app/config.py: a blank line, then a comment
that starts with a title (`# Accounts`, `# Fair play (…): …`) opens a section. Its meaning is the
field's description if it has one, else its entry in `MEANINGS` below (what an operator needs
that the code's comments do not say), else its own comment in app/config.py.

`checkers config-doc > docs/configuration.md` rewrites the page; `--check PATH` compares a file
with what would be written and exits 1 when they differ (tests/commands/test_config_doc.py does
the same in `make test`).
"""

from __future__ import annotations

import argparse
import ast
import difflib
import inspect
import io
import re
import sys
import textwrap
import tokenize
import types
import typing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

USAGE_ERROR = 2
DIFFERS = 1
WIDTH = 100  # the docs' line width
DIFF_LINES = 40  # of the differences shown by --check
FIRST_SECTION = "Server"  # the settings before the first titled comment
# A comment opening a section: a short title alone, or a title, perhaps a parenthesis, a colon.
TITLE = re.compile(r"([A-Z][\w' -]{0,40}?)\s*(?:\([^)]*\))?:\s")
MAX_TITLE = 40

HEADER = """\
# Configuration

<!-- Written by `checkers config-doc` from app/config.py; do not edit by hand. Change the
     settings (or the command's text, app/commands/config_doc.py), then run
     `checkers config-doc > docs/configuration.md`. tests/commands/test_config_doc.py fails
     while this page and the settings differ. -->
"""
# Paragraphs after the header, wrapped when written.
INTRODUCTION = (
    "Settings come from environment variables{env_file}. Names are read {case}. Unknown "
    "variables are ignored: an environment written for an older version (one that still sets "
    "`SECRET_KEY`, say) starts this one unchanged.",
    "No secret key is needed: tokens are 256-bit random values of which only the SHA-256 is "
    "stored.",
    "The server processes of one site share `DATABASE_URL`, `REDIS_URL`, "
    "`ARCHIVE_DATABASE_URL` and `HEARTBEAT_SECONDS`. Behind a proxy, set `FORWARDED_ALLOW_IPS` "
    "to the proxy's address: otherwise every client counts as the proxy's address for every "
    "limit per address. Durations are in seconds unless "
    "the name says otherwise; a list is comma-separated. The limits and what each defends "
    "against are in [security.md](security.md); running several processes in "
    "[deploy.md](deploy.md).",
)

# What each setting means to an operator, where the field has no description of its own.
MEANINGS: dict[str, str] = {
    "environment": "`production` turns off `/docs`, `/redoc` and `/openapi.json` (see `API_DOCS`)",
    "database_url": "SQLAlchemy async URL: SQLite (`sqlite+aiosqlite:///path`) or PostgreSQL "
    "(`postgresql+asyncpg://user:pass@host/db`)",
    "redis_url": "`redis://host:6379/0` to fan live events out across server processes; unset: "
    "in-process broker (one process only)",
    "host": "interface `checkers serve` listens on",
    "port": "port `checkers serve` listens on",
    "log_level": "uvicorn log level",
    "forwarded_allow_ips": "proxies trusted for `X-Forwarded-For`/`-Proto` (comma-separated "
    "addresses or networks, or `*`)",
    "token_ttl_hours": "lifetime of a log-in token (720: 30 days)",
    "login_max_failures": "failed log-ins on one name from one address before that pair is "
    "locked (429); each further failure doubles the wait ([log-in limits](rest.md#log-in-limits))",
    "login_window_seconds": "the first lock's length, and the window of the per-address and "
    "per-name limits",
    "rated_shared_address_days": "a game at a rated table between two accounts that used one "
    "address (signing up, logging in, connecting) within this many days is casual, and two "
    "opponents who did are one source for linked gains; `0` turns both off "
    "([fair play](ratings.md#fair-play))",
    "rated_games_per_pair_per_day": "rated games a day between the same two players; their "
    "further games at rated tables are casual",
    "rated_linked_gain_per_day": "the most a rating gains in 24 hours from linked games: short "
    "ones, and those against an opponent met already in those 24 hours or sharing an address "
    "with one; the rest of such a gain is withheld",
    "rated_short_game_plies": "a rated game of fewer plies than this is short (a resignation or "
    "a loss at once): what it gains is linked",
    "rating_review_rise": "a rating that climbed this much in a week (from its lowest point "
    "that week) …",
    "rating_review_max_opponents": "… its gains won against at most this many different "
    "opponents, is queued for a moderator (`GET /api/admin/reviews`), as is one whose linked "
    "gains were withheld",
    "disconnect_grace_seconds": "how long a disconnected player's game waits for them, and how "
    "long a seat at a table with no game in progress is kept once its holder stops watching the "
    "table",
    "first_move_seconds": "how long each side has to make its first move (from the game's start, "
    "then from the first move) before the server aborts the game; no clock runs before both have "
    "moved",
    "ws_max_message_bytes": "largest websocket frame accepted",
    "ws_messages_per_second": "messages a connection may send per second (bursts of twice as many)",
    "chat_max_length": "longest chat message, in characters",
    "heartbeat_seconds": "how often each server process notes in the database that it is alive "
    "(keep it the same on every process); one silent for 3 intervals counts as gone",
    "sweep_seconds": "how often each process catches up table events it was not rung for (a "
    "broker outage), flags clocks that ran out and stands up players who did not come back; also "
    "how soon, at most, a revoked (logged-out) or expired token's websockets close",
    "table_log_retention_days": "how long the events of a closed table are kept (its games' moves "
    "stay in the archive); every process prunes older ones each minute, in batches; `0` keeps "
    "them for ever",
    "ai_workers": "processes, per server process, that search the computer opponent's moves at "
    "levels 5–8 (outside the event loop, at a lower CPU priority than the server); further "
    "searches wait their turn, taken in turn per player (levels 1–4, a few milliseconds of "
    "search, run in a thread of the server process and never wait for them). Each one keeps a "
    "CPU busy while the AI thinks. They start with the first game against the computer at level "
    "5 or above (its first move then waits a second or so for them)",
    "ai_workers_at_start": "start those processes, and load the engine's book and endgame "
    "database in them, with the server instead (a production server where the first game must "
    "not wait)",
    "ai_games_per_user": "games against the computer one user may play at once "
    "(`too_many_ai_games` beyond; a rematch counts as a new game)",
    "ai_games_per_address": "games against the computer in progress at once started from one "
    "client address, across its users and the server processes (`too_many_ai_games` beyond). "
    "Behind a proxy, set `FORWARDED_ALLOW_IPS` or every client counts as the proxy's address",
    "analysis_workers": "game analyses made at once per server process, each in a process of its "
    "own at Linux's idle scheduling class (the CPU only when nothing else wants it; "
    "[analysis.md](analysis.md)); `0` makes none here",
    "analysis_nodes": "the analysis's search budget per position",
    "analysis_idle": "run the analysis processes in the idle scheduling class; `false` gives them "
    "the server's priority (a machine that only analyses)",
    "analyses_per_day": "analyses a user may ask for in a day (one waiting at a time per user)",
    "analyses_per_address_per_day": "analyses a client address may ask for in a day",
    "login_address_max_failures": "failed log-ins one address may make per "
    "`LOGIN_WINDOW_SECONDS`, across names",
    "login_name_max_failures": "failed log-ins on one name per `LOGIN_WINDOW_SECONDS`, across "
    "addresses, beyond which addresses that failed on it wait",
    "login_lockout_max_seconds": "the longest a locked name and address pair waits",
    "registrations_per_address": "accounts one address may register per `ACCOUNTS_WINDOW_SECONDS`",
    "guests_per_address": "guest sessions one address may start per `ACCOUNTS_WINDOW_SECONDS`",
    "accounts_window_seconds": "the window of the two limits above",
    "tables_per_user": "open tables one user may host at once, across all rooms",
    "challenges_per_recipient": "challenges one player may receive, from anyone, per "
    "`CHALLENGE_WINDOW_SECONDS` (that many at once, then one every window / limit); beyond, "
    "`rate_limited` (REST 429 with `Retry-After`) and the player hears nothing; counted in the "
    "database, across processes",
    "challenges_per_pair": "challenges one player may make to one other per "
    "`CHALLENGE_WINDOW_SECONDS`, counted as above (a challenge-and-cancel loop cannot flood "
    "anyone with notices)",
    "challenge_window_seconds": "the window of the two challenge limits",
    "ws_max_per_ip": "websockets and event streams (`GET /api/stream/event`) one client address "
    "may hold on a process (HTTP 429 beyond; `0`: no cap). Behind a proxy, set "
    "`FORWARDED_ALLOW_IPS` or every client counts as the proxy's address",
    "ws_max_per_user": "websockets and event streams one signed-in user may hold on a process (a "
    "socket beyond is closed with 1013, a stream refused with 429; `0`: no cap)",
    "ws_max_connections": "websockets and event streams per process (HTTP 429 beyond). The server "
    "raises its open-file limit to the hard limit at start; unset, the cap is that limit less 5% "
    "(at least 256), for the database, Redis and HTTP. `/healthz` shows the limit and the count",
    "http_header_timeout_seconds": "`checkers serve` closes a connection whose request line and "
    "headers are not complete this long after it opened or after its previous response (slow "
    "loris, when exposed without the proxy: [deploy.md](deploy.md#exposed-without-the-proxy))",
    "http_keep_alive_seconds": "`checkers serve` closes a kept-alive connection idle this long",
    "http_limit_concurrency": "connections and requests at once past which `checkers serve` "
    "answers 503 (uvicorn's `limit_concurrency`); unset: the open-file limit less 100",
    "api_docs": "serve `/docs`, `/redoc` and `/openapi.json`; unset: on, off in production",
    "metrics_allow": "addresses or networks (comma-separated, or `*`) allowed to read `/metrics`: "
    "by default loopback and private networks; others get 403",
    "allowed_origins": "web origins besides the server's own whose pages may open `/ws` "
    "(comma-separated, e.g. `https://play.example.com,https://club.example.org`); other origins "
    "are refused (403)",
    "smtp_host": "the SMTP server e-mail is sent through; unset, no mail is sent (the inbox on "
    "the site still works). See [notifications.md](notifications.md)",
    "smtp_port": "its port",
    "smtp_security": "`starttls`, `tls` (implicit, usually port 465) or `none` (a relay on a "
    "trusted network)",
    "smtp_username": "log-in name at the SMTP server, if it wants one",
    "smtp_password": "password at the SMTP server, if it wants one",
    "mail_from": "the sender of every mail",
    "mail_retry_min_seconds": "the first wait before trying again a mail the SMTP server did not "
    "take; each wait doubles …",
    "mail_retry_max_seconds": "… up to this longest wait",
    "mail_max_attempts": "tries of one mail before it is given up (the default, with the "
    "default waits, spans about 43 hours): marked in the outbox, counted in "
    "`checkers_mail_given_up_total` and by the admin status",
    "confirmations_per_recipient": "confirmation mails one address may get a day, whichever "
    "accounts ask (letter case and a `+tag` ignored; that many at once, then one every "
    "day / limit); beyond, `rate_limited` (REST 429 with `Retry-After`)",
    "mail_lease_seconds": "how long a process holds a mail it is sending: the mail of a process "
    "that crashed meanwhile is sent by another (or by it, started again) after this",
    "public_url": "the address players reach the site at, for the links in mail (confirm your "
    "address, unsubscribe, the game); unset: `http://HOST:PORT`",
    "ws_messages_per_second_per_ip": "message units per second that all the websockets of one "
    "client address share, in bursts of twice as many (a ping or a move is 1 unit, `watch`, chat "
    "and table changes 5, `subscribe_lobby` 30). Beyond, that address's sockets are read more "
    "slowly (nothing is refused or closed); per process; `0`: no budget",
    "archive_database_url": "a read replica of `DATABASE_URL` (same URL forms) that the "
    "archive's REST reads use: `/api/games…` (search, one game, PDN, export), `/api/players…` and "
    "`/api/leaderboard`; unset: `DATABASE_URL`. Live play, accounts and administration always "
    "use `DATABASE_URL`; an archive read may lag by the replica's delay "
    "([scaling.md](scaling.md))",
    "shutdown_timeout_seconds": "on SIGTERM a process closes its websockets with 1012 (clients "
    "move to another process) and waits at most this long for their handlers before it exits",
    "database_pool_size": "each process's PostgreSQL connections kept open (4 are the move "
    "writers'; with `DATABASE_MAX_OVERFLOW`, at least 6 in all). With N processes PostgreSQL "
    "must allow N × (pool size + overflow) ([scaling.md](scaling.md))",
    "database_max_overflow": "connections each process opens beyond the pool under a burst",
}


@dataclass
class Setting:
    variable: str
    kind: str
    default: str
    meaning: str


@dataclass
class Section:
    title: str
    prose: str
    settings: list[Setting] = field(default_factory=list)


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    doc = subparsers.add_parser(
        "config-doc",
        help="print docs/configuration.md, written from the server's settings",
        description="Print the settings (environment variables, types, defaults, meanings) as "
        "Markdown: the text of docs/configuration.md. With --check PATH, compare PATH with it "
        "instead.",
    )
    doc.add_argument(
        "--check",
        metavar="PATH",
        help="exit status 1, showing the differences, when PATH is not what would be printed",
    )
    doc.set_defaults(func=run_config_doc)


def run_config_doc(args: argparse.Namespace) -> int:
    text = generate()
    if args.check is None:
        sys.stdout.write(text)
        return 0
    path = Path(args.check)
    try:
        current = path.read_text(encoding="utf-8")
    except OSError as exc:
        print(f"checkers: error: cannot read {path}: {exc.strerror}", file=sys.stderr)
        return USAGE_ERROR
    if current == text:
        print(f"{path} matches the settings")
        return 0
    diff = list(
        difflib.unified_diff(
            current.splitlines(), text.splitlines(), str(path), "the settings", lineterm=""
        )
    )
    if len(diff) > DIFF_LINES:
        diff = [*diff[:DIFF_LINES], f"… and {len(diff) - DIFF_LINES} more lines"]
    print(
        f"checkers: error: {path} differs from the settings (app/config.py); rewrite it with "
        f"`checkers config-doc > {path}`",
        *diff,
        sep="\n",
        file=sys.stderr,
    )
    return DIFFERS


def generate() -> str:
    """The Markdown of docs/configuration.md."""
    from app.config import Settings

    config = Settings.model_config
    env_file = config.get("env_file")
    values = {
        "env_file": f" (or a `{env_file}` file in the working directory)"
        if isinstance(env_file, str)
        else "",
        "case": "as written" if config.get("case_sensitive") else "ignoring case",
    }
    parts = [HEADER, *(_wrap(paragraph.format(**values)) + "\n" for paragraph in INTRODUCTION)]
    names = {name: setting_variable(Settings, name) for name in Settings.model_fields}
    for section in sections(Settings):
        parts.append(f"## {section.title}\n")
        if section.prose:
            parts.append(_wrap(_markdown(section.prose, names)) + "\n")
        rows = ["| variable | type | default | meaning |", "|---|---|---|---|"]
        rows += [
            f"| `{s.variable}` | {_cell(s.kind)} | {_cell(s.default)} | {_cell(s.meaning)} |"
            for s in section.settings
        ]
        parts.append("\n".join(rows) + "\n")
    return "\n".join(parts)


def sections(settings: type[Any]) -> list[Section]:
    """The settings in the order of their class, in the sections its comments open."""
    lines, _ = inspect.getsourcelines(settings)
    source = textwrap.dedent("".join(lines))
    text = source.splitlines()
    full, trailing = _comments(source)
    tree = ast.parse(source)
    cls = tree.body[0]
    assert isinstance(cls, ast.ClassDef)
    fields = settings.model_fields
    found: list[Section] = []
    for node in cls.body:
        if not (isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name)):
            continue
        name = node.target.id
        if name not in fields:
            continue
        above = node.lineno - 1
        while above in full:
            above -= 1
        block = " ".join(full[row] for row in range(above + 1, node.lineno))
        opens = above < 1 or not text[above - 1].strip()
        title = _title(block) if opens and block else None
        if title is not None:
            found.append(Section(title, "" if block == title else block))
            block = ""
        elif not found:
            found.append(Section(FIRST_SECTION, ""))
        end = node.end_lineno or node.lineno
        after = [trailing[row] for row in range(node.lineno, end + 1) if row in trailing]
        own = " ".join([block, *after] if block else after)
        info = fields[name]
        found[-1].settings.append(
            Setting(
                variable=setting_variable(settings, name),
                kind=_kind(info.annotation, list(info.metadata)),
                default=_default(info.default),
                meaning=info.description or MEANINGS.get(name) or own,
            )
        )
    return found


def setting_variable(settings: type[Any], name: str) -> str:
    """The environment variable a field is read from: its alias, else the prefix and its name."""
    info = settings.model_fields[name]
    alias = info.validation_alias if isinstance(info.validation_alias, str) else info.alias
    variable = str(alias or f"{settings.model_config.get('env_prefix') or ''}{name}")
    return variable if settings.model_config.get("case_sensitive") else variable.upper()


def _markdown(comment: str, names: dict[str, str]) -> str:
    """A comment of app/config.py as the page says it: settings by their variables' names
    (`smtp_host` is `SMTP_HOST`), and the docs pages it names as links."""
    comment = re.sub(r"\bdocs/([\w-]+\.md)\b", r"[\1](\1)", comment)
    for name, variable in names.items():
        if "_" in name:  # not `host` or `port`, which are words too
            comment = re.sub(rf"`?\b{name}\b`?", f"`{variable}`", comment)
            comment = re.sub(rf"(?<!`)\b{variable}\b(?!`)", f"`{variable}`", comment)
    return comment


def _comments(source: str) -> tuple[dict[int, str], dict[int, str]]:
    """The comments of `source` by line: those alone on their line, and those after code."""
    alone: dict[int, str] = {}
    after: dict[int, str] = {}
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type == tokenize.COMMENT:
            row, column = token.start
            text = token.string.lstrip("#").strip()
            (after if token.line[:column].strip() else alone)[row] = text
    return alone, after


def _title(block: str) -> str | None:
    if len(block) <= MAX_TITLE and ":" not in block and not block.endswith("."):
        return block
    match = TITLE.match(block)
    return match.group(1) if match else None


def _kind(annotation: Any, metadata: list[Any]) -> str:
    """`integer 1 to 64`, `number > 0`, `` `a`, `b` or `c` ``, `text`…"""
    origin = typing.get_origin(annotation)
    if origin in (typing.Union, types.UnionType):
        inner = [arg for arg in typing.get_args(annotation) if arg is not type(None)]
        return _kind(inner[0], metadata) if len(inner) == 1 else " or ".join(map(_kind_of, inner))
    if origin is typing.Annotated:
        base, *extra = typing.get_args(annotation)
        for item in extra:
            metadata += list(getattr(item, "metadata", [item]))
        return _kind(base, metadata)
    if origin is typing.Literal:
        values = [f"`{value}`" for value in typing.get_args(annotation)]
        return ", ".join(values[:-1]) + " or " + values[-1] if len(values) > 1 else values[0]
    kind = _kind_of(annotation)
    bounds = {
        key: getattr(item, key)
        for item in metadata
        for key in ("ge", "gt", "le", "lt")
        if getattr(item, key, None) is not None
    }
    if annotation is int and "gt" in bounds:
        bounds["ge"] = bounds.pop("gt") + 1
    if "ge" in bounds and "le" in bounds:
        kind += f" {bounds['ge']} to {bounds['le']}"
    else:
        symbols = {"ge": "≥", "gt": ">", "le": "≤", "lt": "<"}
        kind += "".join(f" {symbols[key]} {value}" for key, value in bounds.items())
    if any(getattr(item, "allow_inf_nan", True) is False for item in metadata):
        kind += ", finite"
    return kind


def _kind_of(annotation: Any) -> str:
    names = {int: "integer", float: "number", str: "text", bool: "`true` or `false`"}
    if annotation in names:
        return names[annotation]
    if getattr(annotation, "__name__", "") == "SecretStr":
        return "text (secret)"
    return str(getattr(annotation, "__name__", annotation))


def _default(value: Any) -> str:
    if value is None:
        return "unset"
    if isinstance(value, bool):
        return f"`{str(value).lower()}`"
    if value == "":
        return "empty"
    return f"`{value}`"


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def _wrap(text: str) -> str:
    return textwrap.fill(text, WIDTH, break_long_words=False, break_on_hyphens=False)


def main(argv: list[str] | None = None) -> int:
    """`python -m app.commands.config_doc`: the command without the rest of `checkers`."""
    parser = argparse.ArgumentParser(prog="checkers")
    register(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(["config-doc", *(sys.argv[1:] if argv is None else argv)])
    result: int = args.func(args)
    return result


if __name__ == "__main__":
    sys.exit(main())
