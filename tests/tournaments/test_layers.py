"""app.tournaments is pure: it imports only the rules and the engine of ours, and nothing that
does I/O, waits or talks to a database."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "app" / "tournaments"
OURS = ("app.rules", "app.engine", "app.tournaments")
FORBIDDEN = ("asyncio", "fastapi", "sqlalchemy", "starlette", "httpx", "redis", "time", "socket")


def imported(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
        elif isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
    return names


def test_the_tournaments_package_imports_only_pure_code() -> None:
    wrong = {}
    for path in sorted(PACKAGE.glob("*.py")):
        names = imported(path)
        bad = sorted(
            n
            for n in names
            if (n.startswith("app") and not n.startswith(OURS)) or n.split(".")[0] in FORBIDDEN
        )
        if bad:
            wrong[path.name] = bad
    assert wrong == {}
