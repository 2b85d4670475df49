"""The layering of docs/architecture.md, read from the code's imports: faces (REST `app.api`,
websocket `app.realtime`) → services → rules / storage / broker; no face imports another, the
services import no face, and the rules import nothing of the server."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

APP = Path(__file__).resolve().parents[1] / "app"


def imports_of(package: str) -> dict[str, set[str]]:
    """Each module of `app.<package>` with the `app.*` modules it imports."""
    found: dict[str, set[str]] = {}
    for path in sorted((APP / package).rglob("*.py")):
        module = ".".join(("app", *path.relative_to(APP).with_suffix("").parts))
        names: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                names.add(node.module)
            elif isinstance(node, ast.Import):
                names.update(alias.name for alias in node.names)
        found[module] = {name for name in names if name == "app" or name.startswith("app.")}
    return found


@pytest.mark.parametrize(
    ("package", "forbidden"),
    [
        ("api", ("app.realtime",)),
        ("realtime", ("app.api",)),
        ("services", ("app.api", "app.realtime", "app.web", "app.main")),
        ("db", ("app.api", "app.realtime", "app.services")),
        ("broker", ("app.api", "app.realtime", "app.services", "app.db")),
    ],
)
def test_imports_point_downwards(package: str, forbidden: tuple[str, ...]) -> None:
    wrong = {
        module: sorted(name for name in names if name.startswith(forbidden))
        for module, names in imports_of(package).items()
    }
    assert {module: names for module, names in wrong.items() if names} == {}


def test_the_rules_import_nothing_of_the_server() -> None:
    wrong = {
        module: sorted(name for name in names if not name.startswith("app.rules"))
        for module, names in imports_of("rules").items()
    }
    assert {module: names for module, names in wrong.items() if names} == {}


# What a query is built from, and what runs one: below the faces and services, in `app.db`.
SQL_BUILDERS = frozenset(
    {"select", "update", "insert", "delete", "text", "func", "and_", "or_", "not_", "exists"}
    | {"bindparam", "literal", "case", "union", "tuple_", "aliased"}
)
QUERY_CALLS = frozenset(
    {"execute", "scalar", "scalars", "stream", "exec_driver_sql", "fetch", "fetchval", "fetchrow"}
    | {"prepare"}
)


def sql_outside_storage(package: str) -> dict[str, list[str]]:
    """Each module of `app.<package>` with the query builders it imports from SQLAlchemy and
    the query calls it makes (`session.execute(…)`, `conn.scalar(…)`, `driver.fetch(…)`)."""
    found: dict[str, list[str]] = {}
    for path in sorted((APP / package).rglob("*.py")):
        module = ".".join(("app", *path.relative_to(APP).with_suffix("").parts))
        wrong: list[str] = []
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("sqlalchemy"):
                wrong += [f"imports {a.name}" for a in node.names if a.name in SQL_BUILDERS]
            elif isinstance(node, ast.Import):
                wrong += [f"imports {a.name}" for a in node.names if a.name == "sqlalchemy"]
            elif (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr in QUERY_CALLS
            ):
                wrong.append(f"calls .{node.func.attr}() on line {node.lineno}")
        if wrong:
            found[module] = wrong
    return found


@pytest.mark.parametrize("package", ["services", "api", "realtime"])
def test_queries_are_written_and_run_only_in_the_storage_modules(package: str) -> None:
    """Services and faces call `app.db` functions; they build and run no SQL themselves."""
    assert sql_outside_storage(package) == {}


def test_storage_imports_only_settings_and_the_shared_vocabulary() -> None:
    # The rating categories are pure vocabulary too: a table's read picks its players' ratings
    # by the category its clock falls in.
    allowed = (
        "app.config",
        "app.db",
        "app.status",
        "app.timeutil",
        "app.rules",
        "app.ratings.categories",
    )
    wrong = {
        module: sorted(name for name in names if not name.startswith(allowed))
        for module, names in imports_of("db").items()
    }
    assert {module: names for module, names in wrong.items() if names} == {}


# Services whose storage is an `app.db` repository module: they import from SQLAlchemy no more
# than the session's type and its errors, so they cannot build a statement.
SERVICES_WITHOUT_SQL = ("accounts", "sessions", "limits", "rooms", "archive", "importer")
SQLALCHEMY_ALLOWED = {"AsyncSession", "async_sessionmaker", "IntegrityError", "Row"}


@pytest.mark.parametrize("service", SERVICES_WITHOUT_SQL)
def test_these_services_state_no_sql(service: str) -> None:
    path = APP / "services" / f"{service}.py"
    used = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("sqlalchemy"):
            used.update(f"{node.module}.{alias.name}" for alias in node.names)
        elif isinstance(node, ast.Import):
            used.update(a.name for a in node.names if a.name.startswith("sqlalchemy"))
    assert sorted(name for name in used if name.rpartition(".")[2] not in SQLALCHEMY_ALLOWED) == []


def test_the_ratings_import_nothing_of_the_server() -> None:
    wrong = {
        module: sorted(name for name in names if not name.startswith("app.ratings"))
        for module, names in imports_of("ratings").items()
    }
    assert {module: names for module, names in wrong.items() if names} == {}


def test_the_engine_imports_only_the_rules() -> None:
    wrong = {
        module: sorted(name for name in names if not name.startswith(("app.rules", "app.engine")))
        for module, names in imports_of("engine").items()
    }
    assert {module: names for module, names in wrong.items() if names} == {}


def test_the_analysis_imports_only_the_rules_and_the_engine() -> None:
    wrong = {
        module: sorted(
            name
            for name in names
            if not name.startswith(("app.rules", "app.engine", "app.analysis"))
        )
        for module, names in imports_of("analysis").items()
    }
    assert {module: names for module, names in wrong.items() if names} == {}


def test_the_puzzles_import_only_the_rules_the_engine_and_the_analysis() -> None:
    wrong = {
        module: sorted(
            name
            for name in names
            if not name.startswith(("app.rules", "app.engine", "app.analysis", "app.puzzles"))
        )
        for module, names in imports_of("puzzles").items()
    }
    assert {module: names for module, names in wrong.items() if names} == {}


# --- the live layer: one way, typed, never reading its own JSON back ------------------------

# Where text that crossed a process boundary (the log, the broker) is read: each table event
# once (`StoredEvent.data`), each lobby, control or user-channel message once
# (`events.decode`); the archive's counts read PostgreSQL's EXPLAIN, and the lichess-shaped bot
# routes a client's form or JSON body, neither of them our JSON.
JSON_READERS = frozenset(
    {"app.db.table_log", "app.services.events", "app.db.archive_counts", "app.api.lichess"}
)


def _calls(path: Path) -> list[ast.Call]:
    return [n for n in ast.walk(ast.parse(path.read_text(), str(path))) if isinstance(n, ast.Call)]


@pytest.mark.parametrize("package", ["services", "realtime", "api", "db"])
def test_no_module_reads_the_servers_json_back(package: str) -> None:
    wrong = []
    for path in sorted((APP / package).rglob("*.py")):
        module = ".".join(("app", *path.relative_to(APP).with_suffix("").parts))
        for call in _calls(path):
            func = call.func
            if (
                isinstance(func, ast.Attribute)
                and func.attr in {"loads", "load"}
                and isinstance(func.value, ast.Name)
                and func.value.id == "json"
                and module not in JSON_READERS
            ):
                wrong.append(f"{module}:{call.lineno}")
    assert wrong == []


@pytest.mark.parametrize("package", ["services", "realtime", "api", "db"])
def test_no_event_type_is_read_from_its_text(package: str) -> None:
    """An event's type is data (`StoredEvent.kind`, a message's `type` once decoded), never
    matched in the JSON text."""
    wrong = []
    for path in sorted((APP / package).rglob("*.py")):
        tree = ast.parse(path.read_text(), str(path))
        docstrings = {
            id(node.value)
            for node in ast.walk(tree)
            if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)
        }
        for node in ast.walk(tree):
            if (
                id(node) not in docstrings
                and isinstance(node, ast.Constant)
                and isinstance(node.value, str)
                and '"type":' in node.value
            ):
                wrong.append(f"{path.relative_to(APP)}:{node.lineno}")
    assert wrong == []


# The services' long-lived objects, as the faces name them: live play and the heartbeat.
SERVICE_OBJECTS = frozenset({"live", "beats"})


@pytest.mark.parametrize("package", ["realtime", "api"])
def test_the_faces_assign_nothing_into_live_play(package: str) -> None:
    """Data flows one way: the faces call the services and subscribe to what they announce
    (`LivePlay.subscribe`); they put no function or state of theirs into a service's object."""
    wrong = []
    for path in sorted((APP / package).rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            targets = node.targets if isinstance(node, ast.Assign) else []
            for target in targets:
                if isinstance(target, ast.Attribute) and (
                    (isinstance(target.value, ast.Name) and target.value.id in SERVICE_OBJECTS)
                    or (
                        isinstance(target.value, ast.Attribute)
                        and target.value.attr in SERVICE_OBJECTS
                    )
                ):
                    wrong.append(f"{path.relative_to(APP)}:{node.lineno}")
    assert wrong == []


def test_each_refusal_status_is_decided_by_its_code() -> None:
    """Error codes are `app.services.errors.Code` members, which carry their REST status: no
    refusal is raised with a status of its own, and no face maps codes to statuses."""
    wrong = []
    for path in sorted(APP.rglob("*.py")):
        for call in _calls(path):
            if any(k.arg == "http_status" for k in call.keywords):
                wrong.append(f"{path.relative_to(APP)}:{call.lineno}")
    assert wrong == []


MAX_MODULE_LINES = 400


@pytest.mark.parametrize("package", ["services", "realtime", "db", "api"])
def test_each_module_has_one_job_and_stays_readable(package: str) -> None:
    """A module does one job, explainable in a sentence: none in the layers that change most
    grows past `MAX_MODULE_LINES` (split it by job before it does)."""
    long = {
        str(path.relative_to(APP)): lines
        for path in sorted((APP / package).rglob("*.py"))
        if (lines := len(path.read_text().splitlines())) > MAX_MODULE_LINES
    }
    assert long == {}


@pytest.mark.parametrize("package", ["realtime", "api"])
def test_the_faces_use_services_not_storage(package: str) -> None:
    """A face reaches storage through the services: of `app.db` it imports only the session
    factory (`engine`) and the schema's types (`models`: rows the services hand back, `MAX_ID`)."""
    wrong = {
        module: sorted(n for n in names if n.startswith("app.db") and n not in FACE_STORAGE)
        for module, names in imports_of(package).items()
    }
    assert {module: names for module, names in wrong.items() if names} == {}


FACE_STORAGE = frozenset({"app.db.engine", "app.db.models"})
