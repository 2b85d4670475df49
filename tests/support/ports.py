"""Ports for the servers the tests start as processes of their own.

Such a server binds its port itself, after the test chose it, so the choice must not be taken
meanwhile: not by a connection going out (the kernel draws their local ports from its ephemeral
range, /proc/sys/net/ipv4/ip_local_port_range, 32768-60999 by default: a port found free there
by binding port 0 is one of those), nor by another pytest-xdist worker choosing at the same
moment. So each worker takes its ports in turn from a block of its own below that range, each
checked free when chosen.
"""

from __future__ import annotations

import itertools
import os
import socket

FIRST_PORT = 20000
BLOCK = 500  # ports per worker: 20000-20499 for gw0, 20500-20999 for gw1, ...
WORKER_BLOCKS = 24  # 20000-31999, below the ephemeral range

_turns = itertools.count()


def _worker_index() -> int:
    worker = os.environ.get("PYTEST_XDIST_WORKER", "gw0")  # "gw3" under pytest-xdist
    digits = worker.removeprefix("gw")
    return int(digits) % WORKER_BLOCKS if digits.isdigit() else 0


def free_port() -> int:
    """A port of this worker's block, free now, and not chosen by it lately."""
    first = FIRST_PORT + _worker_index() * BLOCK
    for _ in range(BLOCK):
        port = first + next(_turns) % BLOCK
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue  # in use (a server of an earlier test still closing)
            return port
    raise RuntimeError(f"no free port in {first}-{first + BLOCK - 1}")
