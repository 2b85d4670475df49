"""Which tier the running test is in (set by tests/conftest.py before each test): a real server
may start only in the `server` tier, so that a feature's rules stay in-process."""

from __future__ import annotations

current = "server"  # outside a test (a bench, a script), real servers are allowed


def require_real_servers(what: str) -> None:
    """Refuse to start `what` (a real server) in a test of the core or service tier."""
    if current != "server":
        raise RuntimeError(
            f"{what} in a test of the {current} tier: use the in-process `server` fixture, or"
            " `real_server` / `pytest.mark.server` where the wire, several processes or an"
            " outage is the point (CONTRIBUTING.md, the test tiers)"
        )
