"""The table page over a link that breaks (issue 32): three figures, measured in Chromium.

    .venv/bin/python bench/table_link.py                 # a 20 s cut, 5 rounds of each
    .venv/bin/python bench/table_link.py --cut 20 --rounds 5

The server runs in this process (uvicorn in a thread, a migrated SQLite database, as the
browser tests run it); Black's page reaches it through `tests/support/tcp_proxy.py`, White is a
protocol client straight to the server. Printed, each as min / median / max over the rounds:

- clock error: after a cut of `--cut` seconds during which two moves were made (White's, then
  Black's from another device), the largest gap between a clock the page shows and the
  server's time left (the last move event's `clocks`, the side to move's running since `at`),
  read as the page draws it;
- stall seen: from the proxy stalling the link (nothing forwarded, nothing closed) to the
  page's badge saying so (page's own clock, both ends);
- premove: from White's move reaching the page (the frame's arrival, page's wall clock) to
  the server accepting Black's premove (`at` of its move event, same machine's clock).

Needs Chromium at /usr/bin/chromium (or CHROMIUM_PATH).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path
from urllib.parse import urlsplit

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from playwright.sync_api import Browser, expect, sync_playwright  # noqa: E402

from tests.e2e.conftest import CHROMIUM_ARGS, CHROMIUM_PATH, running_server  # noqa: E402
from tests.e2e.link import (  # noqa: E402
    Player,
    click_move,
    clock_error_ms,
    frame_arrival_ms,
    start_game,
)
from tests.support.tcp_proxy import tcp_proxy  # noqa: E402


def clock_round(browser: Browser, url: str, n: int, cut: float) -> float:
    port = urlsplit(url).port
    assert port is not None
    with tcp_proxy(port) as proxy:
        person, table, token = start_game(browser, proxy.url, url, names=(f"cb{n}", f"cw{n}"))
        phone = Player.connect(url, token)
        table.page_plays()
        table.client_plays()
        table.page_plays()
        proxy.cut()
        time.sleep(cut / 2)
        table.client_plays()
        time.sleep(cut / 2 - 1)
        last = table.client_plays(by=phone)
        time.sleep(1)
        proxy.restore()
        expect(person.page.locator(".move-list .move")).to_have_count(5)
        error = clock_error_ms(person.page, last)
        person.context.close()
        phone.close()
        table.white.close()
    return error


def stall_round(browser: Browser, url: str, n: int) -> float:
    port = urlsplit(url).port
    assert port is not None
    with tcp_proxy(port) as proxy:
        person, table, _ = start_game(browser, proxy.url, url, names=(f"sb{n}", f"sw{n}"))
        page = person.page
        table.page_plays()
        page.evaluate(
            """() => {
              const conn = document.querySelector(".conn");
              new MutationObserver(() => {
                if (conn.dataset.state === "stalled" && !window.__stalledAt)
                  window.__stalledAt = performance.now();
              }).observe(conn, { attributes: true });
            }"""
        )
        proxy.stall()
        began = page.evaluate("performance.now()")
        page.wait_for_function("() => window.__stalledAt", timeout=60_000)
        seen = float(page.evaluate("window.__stalledAt")) - began
        proxy.restore()
        person.context.close()
        table.white.close()
    return seen


def premove_round(browser: Browser, url: str, n: int) -> float:
    person, table, _ = start_game(browser, url, url, names=(f"pb{n}", f"pw{n}"))
    page = person.page
    table.page_plays("9-13")
    click_move(page, "10-14")
    expect(page.locator(".move-status")).to_contain_text("Premove 10-14")
    white = table.client_plays(move="21-17")
    sent = table.white.expect("move", game=table.game, ply=table.ply + 1)
    delay = float(sent["at"]) - frame_arrival_ms(page, "move", game=table.game, ply=white["ply"])
    person.context.close()
    table.white.close()
    return delay


def line(name: str, values: list[float]) -> str:
    return (
        f"{name:<44} min {min(values):8.1f}  median {statistics.median(values):8.1f}  "
        f"max {max(values):8.1f} ms  ({len(values)} rounds)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cut", type=float, default=20.0, help="seconds the link stays cut")
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    with (
        tempfile.TemporaryDirectory() as directory,
        running_server(Path(directory)) as server,
        sync_playwright() as playwright,
    ):
        browser = playwright.chromium.launch(
            executable_path=CHROMIUM_PATH, headless=True, args=CHROMIUM_ARGS
        )
        clocks = [clock_round(browser, server.url, n, args.cut) for n in range(args.rounds)]
        print(line(f"clock error after a {args.cut:.0f} s cut, 2 missed moves", clocks))
        stalls = [stall_round(browser, server.url, n) for n in range(args.rounds)]
        print(line("stall to the page saying so", stalls))
        premoves = [premove_round(browser, server.url, n) for n in range(args.rounds)]
        print(line("opponent's move at the page to premove stored", premoves))
        browser.close()


if __name__ == "__main__":
    main()
