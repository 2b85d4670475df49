"""HAProxy with the project's own `deploy/haproxy.cfg`, for tests that run servers behind it."""

from __future__ import annotations

import contextlib
import subprocess
from collections.abc import Iterator
from typing import Any

from tests.support.server import ROOT


def haproxy_config(port: int, backends: list[str]) -> str:
    """deploy/haproxy.cfg listening on 127.0.0.1:`port`, its servers `backends` ("host:port")
    instead of the compose network's."""
    text = (ROOT / "deploy" / "haproxy.cfg").read_text()
    kept, skipping = [], False
    for line in text.splitlines():
        if line.startswith("resolvers"):
            skipping = True
            continue
        if skipping and (not line.strip() or line.startswith(" ")):
            if not line.strip():
                skipping = False
            continue
        if "server-template" in line or line.strip().startswith("log stdout"):
            continue
        line = line.replace("bind :8000", f"bind 127.0.0.1:{port}")
        kept.append(line.replace("maxconn 100000", "maxconn 2000"))  # within our file limit
    kept += [f"    server app{n} {address} check" for n, address in enumerate(backends, 1)]
    return "\n".join(kept) + "\n"


@contextlib.contextmanager
def started(args: list[str], **options: Any) -> Iterator[subprocess.Popen[bytes]]:
    """A child process, ended (SIGTERM, then waited for) when the block ends."""
    process = subprocess.Popen(args, **options)
    try:
        yield process
    finally:
        if process.poll() is None:
            process.terminate()
            try:
                process.wait(15)
            except subprocess.TimeoutExpired:
                process.kill()  # never leave a process behind
                process.wait(5)
