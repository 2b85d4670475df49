"""The layout of docs/architecture.md, read from the code's imports.

`app/` is cut into subsystems, one folder each (`play`, `tables`, `tournaments`, …), each with
its use cases and its storage (`store.py`, `*_store.py`); the pure cores (`app.rules`,
`app.engine` and the pure modules of `ratings`, `tournaments`, `analysis`, `puzzles`) import
nothing of the server; the faces (`api`, `realtime`, `commands`) are thin and never import
storage. `ARROWS` is the one table of which subsystem may import which: it has no cycle but the
`BACK_EDGES` still to be removed, and each package's docstring names its arrows.
"""

from __future__ import annotations

import ast
import importlib
from collections.abc import Iterator
from functools import cache
from pathlib import Path

import pytest

APP = Path(__file__).resolve().parents[1] / "app"

# The pure modules of the subsystems that also hold services: each such set is a node of its
# own (`<subsystem>.core`), importable from anywhere above it.
PURE_MODULES = {
    "ratings": {"__init__", "categories", "glicko2", "limits"},
    "tournaments": {
        "__init__",
        "arena",
        "ballot",
        "deck_build",
        "round_robin",
        "swiss",
        "tiebreaks",
    },
    "analysis": {"__init__", "chances", "game"},
    "puzzles": {"__init__", "generate", "sources"},
}
# What every subsystem may use: the settings and the small vocabulary beside them at the top of
# `app/`, the shared storage (`app.db`: the engine, the schema, the audit log), the broker.
SHARED_PACKAGES = {"db", "broker"}
ENTRY_MODULES = {"main", "cli"}  # the entry points: they import the faces
FACES = {"api", "realtime", "commands", "web"}
PURE_CORES = {"rules", "engine", *(f"{name}.core" for name in PURE_MODULES)}

# Which subsystem may import which (besides `shared` and the pure cores, which all may), in
# the order of docs/architecture.md: an arrow points down the table.
ARROWS: dict[str, set[str]] = {
    "live": {"play"},  # a back edge, below
    "accounts": {"live"},
    "ratings": {"live", "accounts"},
    "notify": {"live", "accounts"},
    "play": {"live", "accounts", "ratings", "correspondence", "tables", "tournaments"},
    "correspondence": {"live", "accounts", "notify", "play"},
    "computer": {"live", "play"},
    "tables": {"live", "accounts", "ratings", "play", "correspondence", "computer"},
    "archive": {"accounts", "tables"},
    "matchmaking": {"live", "accounts", "ratings", "notify", "play", "tables"},
    "tournaments": {"live", "ratings", "notify", "play", "tables"},
    "moderation": {"live", "accounts", "ratings", "play", "tables"},
    "analysis": {"live", "accounts", "archive", "computer"},
    "puzzles": {"live"},
    "bots": {"live", "accounts", "matchmaking", "play", "tables"},
}
# Arrows against the grain, each to go (docs/architecture.md, "What is left to untangle"): the
# process's live state holds the cache of games and the move writer (`live.liveplay`); a
# game's end and a move call correspondence's notices and conditional moves, the arena's pause
# and berserk, and presence (`play.endings`, `play.games`, `play.timeouts`, `play.decisions`).
BACK_EDGES = {
    ("live", "play"),
    ("play", "correspondence"),
    ("play", "tables"),
    ("play", "tournaments"),
}
FACE_ARROWS: dict[str, set[str]] = {
    "api": set(ARROWS),
    "realtime": set(ARROWS),
    "commands": set(ARROWS) | {"realtime", "entry"},
    "entry": set(ARROWS) | FACES,
}
SUBSYSTEMS = set(ARROWS)


def module_of(path: Path) -> str:
    return ".".join(("app", *path.relative_to(APP).with_suffix("").parts)).removesuffix(".__init__")


def resolve(package: str, name: str) -> str:
    """`from package import name`: the module imported, if `name` is one, else the package."""
    candidate = APP.joinpath(*package.split(".")[1:], name)
    if candidate.with_suffix(".py").exists() or (candidate / "__init__.py").exists():
        return f"{package}.{name}"
    return package


def node(module: str) -> str:
    """The subsystem (or `shared`, `entry`, a face, a pure core) a module of ours belongs to."""
    parts = module.split(".")[1:]
    if not parts:
        return "shared"
    if len(parts) == 1 and not (APP / parts[0]).is_dir():
        return "entry" if parts[0] in ENTRY_MODULES else "shared"
    package = parts[0]
    if package in SHARED_PACKAGES:
        return "shared"
    if (
        package in PURE_MODULES
        and (parts[1] if len(parts) > 1 else "__init__") in (PURE_MODULES[package])
    ):
        return f"{package}.core"
    return package


@cache
def tree_of(path: Path) -> ast.Module:
    """`path`'s syntax tree, parsed once per test process. CPython 3.11's parser can fail with
    `SystemError: AST constructor recursion depth mismatch` when another thread of the process
    compiles at the same moment (CPython issue 106905): parsed again then."""
    source = path.read_text()
    try:
        return ast.parse(source, str(path))
    except SystemError:
        return ast.parse(source, str(path))


@cache
def imports_in(path: Path) -> frozenset[str]:
    """The modules of ours `path` imports (a function's own imports too)."""
    found: set[str] = set()
    for n in ast.walk(tree_of(path)):
        if isinstance(n, ast.ImportFrom) and n.module and n.level == 0:
            if n.module == "app" or n.module.startswith("app."):
                found.update(resolve(n.module, alias.name) for alias in n.names)
        elif isinstance(n, ast.Import):
            found.update(a.name for a in n.names if a.name.startswith("app."))
    return frozenset(found)


def modules() -> Iterator[tuple[str, Path]]:
    for path in sorted(APP.rglob("*.py")):
        yield module_of(path), path


def arrows_used() -> dict[tuple[str, str], list[str]]:
    """Each arrow between two nodes with the modules that make it."""
    used: dict[tuple[str, str], list[str]] = {}
    for module, path in modules():
        source = node(module)
        for target in {node(name) for name in imports_in(path)} - {source}:
            used.setdefault((source, target), []).append(module)
    return used


def allowed(source: str, target: str) -> bool:
    if target in PURE_CORES or target == "shared":
        return True
    if source in PURE_CORES:
        return False  # a pure core imports other pure cores only (checked below)
    if source == "shared":
        return False
    return target in ARROWS.get(source, FACE_ARROWS.get(source, set()))


def test_each_import_follows_an_arrow_of_the_table() -> None:
    wrong = {
        f"{source} -> {target}": sorted(found)
        for (source, target), found in arrows_used().items()
        if not allowed(source, target)
    }
    assert wrong == {}


def test_every_module_of_ours_belongs_to_a_known_node() -> None:
    known = SUBSYSTEMS | PURE_CORES | FACES | {"shared", "entry"}
    assert sorted({node(m) for m, _ in modules()} - known) == []


def test_the_arrows_have_no_cycle_but_the_back_edges_to_remove() -> None:
    graph = {s: {t for t in ts if (s, t) not in BACK_EDGES} for s, ts in ARROWS.items()}
    order: list[str] = []
    marks: dict[str, str] = {}

    def visit(name: str, path: tuple[str, ...]) -> None:
        if marks.get(name) == "done":
            return
        assert marks.get(name) != "open", f"a cycle: {' -> '.join((*path, name))}"
        marks[name] = "open"
        for target in sorted(graph.get(name, ())):
            visit(target, (*path, name))
        marks[name] = "done"
        order.append(name)

    for name in sorted(graph):
        visit(name, ())
    assert len(order) == len(graph)


def test_the_table_names_only_arrows_in_use() -> None:
    """An arrow no import makes any more leaves the table (a back edge removed, say)."""
    used = set(arrows_used())
    unused = sorted(f"{s} -> {t}" for s, ts in ARROWS.items() for t in ts if (s, t) not in used)
    assert unused == []


def test_each_subsystem_says_at_its_door_what_it_owns_and_may_use() -> None:
    """Each subsystem's docstring ends with the line `May import: a, b, c.` naming its arrows
    (the pure cores and the shared vocabulary aside), so that a newcomer reads them there."""
    wrong = {}
    for name, targets in ARROWS.items():
        doc = importlib.import_module(f"app.{name}").__doc__ or ""
        lines = [line for line in doc.strip().splitlines() if line.startswith("May import:")]
        said = (
            {t.strip() for t in lines[-1].removeprefix("May import:").strip(" .").split(",")}
            - {"nothing but the pure cores", ""}
            if lines
            else None
        )
        if said != targets:
            wrong[name] = (sorted(said) if said is not None else None, sorted(targets))
    assert wrong == {}


# The libraries that do I/O, wait or talk to a database: never in a pure core.
IO_LIBRARIES = ("asyncio", "fastapi", "sqlalchemy", "starlette", "httpx", "redis", "time", "socket")
# The engine reads the clock for its time limit: no other I/O.
CORE_LIBRARIES = {"engine": {"time"}}
# Which pure core may import which.
CORE_ARROWS = {
    "rules": set(),
    "engine": {"rules"},
    "ratings.core": set(),
    "tournaments.core": {"rules", "engine"},
    "analysis.core": {"rules", "engine"},
    "puzzles.core": {"rules", "engine", "analysis.core"},
}


def test_the_pure_cores_import_only_the_cores_below_them_and_do_no_io() -> None:
    wrong = {}
    for module, path in modules():
        core = node(module)
        if core not in CORE_ARROWS:
            continue
        tree = tree_of(path)
        names = {
            n.module
            for n in ast.walk(tree)
            if isinstance(n, ast.ImportFrom) and n.module and n.level == 0
        } | {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
        bad = sorted(
            name
            for name in names
            if name.split(".")[0] in set(IO_LIBRARIES) - CORE_LIBRARIES.get(core, set())
            or (name.startswith("app") and node(name) not in CORE_ARROWS[core] | {core})
        )
        bad += sorted(
            name for name in imports_in(path) if node(name) not in CORE_ARROWS[core] | {core}
        )
        if bad:
            wrong[module] = sorted(set(bad))
    assert wrong == {}


def test_no_subsystem_imports_a_face() -> None:
    wrong = {
        f"{source} -> {target}": sorted(found)
        for (source, target), found in arrows_used().items()
        if source in SUBSYSTEMS | PURE_CORES | {"shared"} and target in FACES | {"entry"}
    }
    assert wrong == {}


def test_no_face_imports_another_but_the_commands_the_server() -> None:
    wrong = {
        f"{source} -> {target}": sorted(found)
        for (source, target), found in arrows_used().items()
        if source in FACES and target in FACES and (source, target) != ("commands", "realtime")
    }
    assert wrong == {}


MAX_MODULES = 20  # per folder, its `__init__` aside


def test_no_folder_holds_more_than_about_twenty_modules() -> None:
    crowded = {
        str(folder.relative_to(APP)): count
        for folder in sorted({p.parent for p in APP.rglob("*.py")})
        if (count := len([p for p in folder.glob("*.py") if p.name != "__init__.py"])) > MAX_MODULES
    }
    assert crowded == {}


# --- storage ---------------------------------------------------------------------------------


def is_storage(module: str) -> bool:
    """Where SQL is written and run: the shared `app.db` and each subsystem's `store` modules."""
    leaf = module.rpartition(".")[2]
    return module.startswith("app.db") or leaf == "store" or leaf.endswith("_store")


# What a query is built from, and what runs one.
SQL_BUILDERS = frozenset(
    {"select", "update", "insert", "delete", "text", "func", "and_", "or_", "not_", "exists"}
    | {"bindparam", "literal", "case", "union", "tuple_", "aliased"}
)
QUERY_CALLS = frozenset(
    {"execute", "scalar", "scalars", "stream", "exec_driver_sql", "fetch", "fetchval", "fetchrow"}
    | {"prepare"}
)


def sql_in(path: Path) -> list[str]:
    """The query builders a module imports from SQLAlchemy and the query calls it makes
    (`session.execute(…)`, `conn.scalar(…)`, `driver.fetch(…)`)."""
    wrong: list[str] = []
    for n in ast.walk(tree_of(path)):
        if isinstance(n, ast.ImportFrom) and (n.module or "").startswith("sqlalchemy"):
            wrong += [f"imports {a.name}" for a in n.names if a.name in SQL_BUILDERS]
        elif isinstance(n, ast.Import):
            wrong += [f"imports {a.name}" for a in n.names if a.name == "sqlalchemy"]
        elif (
            isinstance(n, ast.Call)
            and isinstance(n.func, ast.Attribute)
            and n.func.attr in QUERY_CALLS
        ):
            wrong.append(f"calls .{n.func.attr}() on line {n.lineno}")
    return wrong


# Outside storage, SQL runs only where a process talks to its database as a whole: the
# heartbeat's advisory lock and the live layer's group commit of moves.
SQL_OUTSIDE_STORAGE = frozenset({"app.live.heartbeat", "app.play.commits"})


def test_queries_are_written_and_run_only_in_the_storage_modules() -> None:
    """Use cases and faces call their subsystem's storage; they build and run no SQL."""
    wrong = {
        module: found
        for module, path in modules()
        if node(module) in SUBSYSTEMS | FACES | {"entry"}
        and not is_storage(module)
        and module not in SQL_OUTSIDE_STORAGE
        and (found := sql_in(path))
    }
    assert wrong == {}


def test_storage_imports_only_storage_and_the_shared_vocabulary() -> None:
    """A store module imports other stores, the shared vocabulary and the pure cores: never a
    use case or a face."""
    wrong = {
        module: sorted(
            name
            for name in imports_in(path)
            if not is_storage(name) and node(name) not in PURE_CORES | {"shared"}
        )
        for module, path in modules()
        if is_storage(module)
    }
    assert {module: names for module, names in wrong.items() if names} == {}


# Use cases whose storage is their subsystem's store: they import from SQLAlchemy no more than
# the session's type and its errors, so they cannot build a statement.
SERVICES_WITHOUT_SQL = (
    "accounts/service",
    "accounts/sessions",
    "accounts/limits",
    "tables/rooms",
    "archive/service",
    "archive/importer",
)
SQLALCHEMY_ALLOWED = {"AsyncSession", "async_sessionmaker", "IntegrityError", "Row"}


@pytest.mark.parametrize("service", SERVICES_WITHOUT_SQL)
def test_these_services_state_no_sql(service: str) -> None:
    path = APP / f"{service}.py"
    used = set()
    for n in ast.walk(tree_of(path)):
        if isinstance(n, ast.ImportFrom) and (n.module or "").startswith("sqlalchemy"):
            used.update(f"{n.module}.{alias.name}" for alias in n.names)
        elif isinstance(n, ast.Import):
            used.update(a.name for a in n.names if a.name.startswith("sqlalchemy"))
    assert sorted(name for name in used if name.rpartition(".")[2] not in SQLALCHEMY_ALLOWED) == []


FACE_STORAGE = frozenset({"app.db.engine", "app.db.models", "app.db.migrate"})


def test_the_faces_use_services_not_storage() -> None:
    """A face reaches storage through the services: of the storage it imports only the
    session factory (`app.db.engine`), the schema's types (`app.db.models`: `MAX_ID`) and the
    migrations (`checkers migrate`)."""
    wrong = {
        module: sorted(n for n in imports_in(path) if is_storage(n) and n not in FACE_STORAGE)
        for module, path in modules()
        if node(module) in FACES
    }
    assert {module: names for module, names in wrong.items() if names} == {}


# --- the live layer: one way, typed, never reading its own JSON back ------------------------

# Where text that crossed a process boundary (the log, the broker) is read: each table event
# once (`StoredEvent.data`), each lobby, control or user-channel message once
# (`events.decode`); the archive's counts read PostgreSQL's EXPLAIN, and the lichess-shaped bot
# routes a client's form or JSON body, neither of them our JSON.
JSON_READERS = frozenset(
    {"app.live.log_store", "app.live.events", "app.archive.counts_store", "app.api.common.lichess"}
)
# Code that reads files, not messages: the shipped puzzles, the engine's book and endgame
# database, the commands' input.
FILE_READERS = frozenset(PURE_CORES | {"commands"})


def _calls(path: Path) -> list[ast.Call]:
    return [n for n in ast.walk(tree_of(path)) if isinstance(n, ast.Call)]


def test_no_module_reads_the_servers_json_back() -> None:
    wrong = []
    for module, path in modules():
        if module in JSON_READERS or node(module) in FILE_READERS:
            continue
        for call in _calls(path):
            func = call.func
            if (
                isinstance(func, ast.Attribute)
                and func.attr in {"loads", "load"}
                and isinstance(func.value, ast.Name)
                and func.value.id == "json"
            ):
                wrong.append(f"{module}:{call.lineno}")
    assert wrong == []


def test_no_event_type_is_read_from_its_text() -> None:
    """An event's type is data (`StoredEvent.kind`, a message's `type` once decoded), never
    matched in the JSON text."""
    wrong = []
    for module, path in modules():
        if node(module) in PURE_CORES:
            continue
        tree = tree_of(path)
        docstrings = {
            id(n.value)
            for n in ast.walk(tree)
            if isinstance(n, ast.Expr) and isinstance(n.value, ast.Constant)
        }
        for n in ast.walk(tree):
            if (
                id(n) not in docstrings
                and isinstance(n, ast.Constant)
                and isinstance(n.value, str)
                and '"type":' in n.value
            ):
                wrong.append(f"{path.relative_to(APP)}:{n.lineno}")
    assert wrong == []


# The services' long-lived objects, as the faces name them: live play and the heartbeat.
SERVICE_OBJECTS = frozenset({"live", "beats"})


@pytest.mark.parametrize("package", ["realtime", "api"])
def test_the_faces_assign_nothing_into_live_play(package: str) -> None:
    """Data flows one way: the faces call the services and subscribe to what they announce
    (`LivePlay.subscribe`); they put no function or state of theirs into a service's object."""
    wrong = []
    for path in sorted((APP / package).rglob("*.py")):
        for n in ast.walk(tree_of(path)):
            targets = n.targets if isinstance(n, ast.Assign) else []
            for target in targets:
                if isinstance(target, ast.Attribute) and (
                    (isinstance(target.value, ast.Name) and target.value.id in SERVICE_OBJECTS)
                    or (
                        isinstance(target.value, ast.Attribute)
                        and target.value.attr in SERVICE_OBJECTS
                    )
                ):
                    wrong.append(f"{path.relative_to(APP)}:{n.lineno}")
    assert wrong == []


def test_each_refusal_status_is_decided_by_its_code() -> None:
    """Error codes are `app.errors.Code` members, which carry their REST status: no refusal is
    raised with a status of its own, and no face maps codes to statuses."""
    wrong = []
    for path in sorted(APP.rglob("*.py")):
        for call in _calls(path):
            if any(k.arg == "http_status" for k in call.keywords):
                wrong.append(f"{path.relative_to(APP)}:{call.lineno}")
    assert wrong == []
