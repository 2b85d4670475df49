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


def test_the_engine_imports_only_the_rules() -> None:
    wrong = {
        module: sorted(name for name in names if not name.startswith(("app.rules", "app.engine")))
        for module, names in imports_of("engine").items()
    }
    assert {module: names for module, names in wrong.items() if names} == {}
