"""Ratings where players see them, in the browser: beside names in the lobby and at the table
("1500?" while provisional), the change at the end of a rated game (one's own, or both players'
for a spectator; still there after a reload), in the archive and the replay, the player page's
ratings and history chart, and the leaderboard page (an idle player dropped off); a guest cannot
choose a rated table."""

from __future__ import annotations

import asyncio
import re
from datetime import UTC, datetime, timedelta

import httpx
import pytest
from playwright.sync_api import Browser, Page, expect
from sqlalchemy import select

from app.db.engine import Database
from app.db.models import Rating, User
from tests.conftest import in_thread
from tests.e2e.conftest import LiveServer
from tests.e2e.people import PASSWORD, arrive, register, square

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(300)]


def store_rating(database_url: str, name: str, rating: float, rd: float, days_ago: float) -> None:
    """An English blitz rating for `name`, as after a rated game `days_ago` days ago."""

    async def store() -> None:
        db = Database(database_url)
        try:
            async with db.session() as session:
                user_id = await session.scalar(select(User.id).where(User.name == name))
                session.add(
                    Rating(
                        user_id=user_id,
                        variant="english",
                        category="blitz",
                        rating=rating,
                        rd=rd,
                        volatility=0.06,
                        games=50,
                        last_game_at=datetime.now(UTC) - timedelta(days=days_ago),
                    )
                )
                await session.commit()
        finally:
            await db.dispose()

    in_thread(asyncio.run, store())


def open_rated_table(page: Page, room: str) -> int:
    page.locator(f'[data-room="{room}"]').get_by_role("button", name="Open a table").click()
    dialog = page.get_by_role("dialog")
    dialog.get_by_label("Your colour").select_option("black")
    dialog.get_by_label("Rated").check()
    dialog.get_by_role("button", name="Open table").click()
    expect(page).to_have_url(re.compile(r"#/table/\d+$"))
    return int(re.findall(r"#/table/(\d+)", page.url)[0])


def move(page: Page, text: str) -> None:
    a, b = (int(n) for n in text.split("-"))
    square(page, a).click()
    square(page, b).click()


def test_a_rated_game_shows_ratings_and_their_change_everywhere(
    browser: Browser, server: LiveServer
) -> None:
    ana, bea, cy = (arrive(browser, server.url).page for _ in range(3))
    register(ana, "ana")
    register(bea, "bea")
    # Ana is established in English blitz; an idle player (last game 8 days ago) is not on
    # the leaderboard any more, however good.
    store_rating(server.database_url, "ana", 1623.7, 60.0, 0.01)
    httpx.post(
        f"{server.url}/api/auth/register", json={"name": "idle", "password": PASSWORD}
    ).raise_for_status()
    store_rating(server.database_url, "idle", 2100.0, 50.0, 8)

    table_id = open_rated_table(ana, "english-blitz")
    card = bea.locator(f'.table-card[data-table="{table_id}"]')
    expect(card.locator(".seats")).to_have_text("ana (1623)")
    expect(card).to_contain_text("rated")
    card.get_by_role("button", name=f"Sit at table {table_id}").click()
    expect(bea.locator(".player-bar.bottom .name")).to_contain_text("bea (1500?)")
    expect(bea.locator(".player-bar.top .name")).to_contain_text("ana (1623)")
    expect(ana.locator(".player-bar.bottom .name")).to_contain_text("ana (1623)")
    expect(ana.locator(".player-bar.top .name")).to_contain_text("bea (1500?)")
    # A provisional rating says so where it is shown.
    expect(ana.locator(".player-bar.top .rating")).to_have_attribute("data-provisional", "true")
    cy.goto(f"{server.url}/#/table/{table_id}")
    expect(cy.locator(".player-bar .name")).to_contain_text(["ana (1623)", "bea (1500?)"])

    move(ana, "11-15")
    expect(bea.locator(".move-list .move")).to_have_text(["11-15"])
    move(bea, "24-19")
    expect(ana.locator(".move-list .move")).to_have_text(["11-15", "24-19"])
    bea.get_by_role("button", name="Resign").click()
    bea.get_by_role("button", name="Confirm resignation").click()

    expect(ana.locator(".game-over")).to_contain_text(
        re.compile(r"Your rating: 1623 → \d+ \(\+\d+\)")
    )
    expect(bea.locator(".game-over")).to_contain_text(
        re.compile(r"Your rating: 1500 → \d+ \(−\d+\)")
    )
    banner = cy.locator(".game-over")
    expect(banner).to_contain_text(re.compile(r"ana: 1623 → \d+ \(\+\d+\)"))
    expect(banner).to_contain_text(re.compile(r"bea: 1500 → \d+ \(−\d+\)"))
    expect(ana.locator(".player-bar.bottom .rating-diff")).to_have_text(re.compile(r"^\+\d+$"))
    expect(ana.locator(".player-bar.top .rating-diff")).to_have_text(re.compile(r"^−\d+$"))
    # Reloaded after the end, the table still shows the change (the snapshot carries it).
    bea.reload()
    expect(bea.locator(".game-over")).to_contain_text(
        re.compile(r"Your rating: 1500 → \d+ \(−\d+\)")
    )
    expect(bea.locator(".player-bar.bottom .rating-diff")).to_have_text(re.compile(r"^−\d+$"))

    # The archive and the replay show the ratings before the game, and the change.
    ana.goto(f"{server.url}/#/games")
    row = ana.locator(".games-list tbody tr").first
    expect(row.locator("td").nth(1)).to_contain_text(re.compile(r"ana \(1623\) \+\d+"))
    expect(row.locator("td").nth(2)).to_contain_text(re.compile(r"bea \(1500\?\) −\d+"))
    row.get_by_role("link", name=re.compile("Replay game")).click()
    expect(ana.locator(".player-bar").first).to_contain_text("(1")
    expect(ana.locator(".player-bar", has_text="ana")).to_contain_text("ana (1623)")

    # Ana's page: her rating, and its history as a chart drawn by the client.
    ana.goto(f"{server.url}/#/players/ana")
    line = ana.locator('.ratings-list tr[data-category="blitz"]')
    expect(line).to_contain_text(re.compile(r"English.*Blitz"))
    expect(line.locator(".rating-value")).to_have_text(re.compile(r"^16\d\d$"))
    chart = ana.locator('.rating-history[data-category="blitz"] svg.rating-chart')
    expect(chart).to_be_visible()
    expect(chart.locator("path.line")).to_have_attribute("d", re.compile(r"^M[\d.]+,[\d.]+$"))
    expect(chart).to_have_attribute("aria-label", re.compile(r"rating history: from 16\d\d"))
    bea.goto(f"{server.url}/#/players/bea")
    expect(bea.locator('.ratings-list tr[data-category="blitz"] .rating-value')).to_have_text(
        re.compile(r"^1[23]\d\d\?$")
    )

    # The leaderboard: Ana (established, active); not Bea (provisional), not the idle player.
    cy.get_by_role("link", name="Leaderboards").click()
    cy.get_by_role("link", name="Blitz").first.click()
    board = cy.locator("table.leaderboard tbody tr")
    expect(board).to_have_count(1)
    expect(board.first).to_contain_text(re.compile(r"^1\s*ana\s*16\d\d"))
    cy.get_by_role("link", name="Rapid").first.click()
    expect(cy.get_by_text("Nobody is on this leaderboard yet.")).to_be_visible()


def test_a_guest_is_told_why_rated_tables_are_not_for_them(
    browser: Browser, server: LiveServer
) -> None:
    page = arrive(browser, server.url).page
    page.get_by_role("button", name="Sign in").click()
    page.get_by_role("dialog").get_by_role("button", name="Play as a guest").click()
    expect(page.locator(".conn")).to_have_text("Connected")
    page.locator('[data-room="english-blitz"]').get_by_role("button", name="Open a table").click()
    dialog = page.get_by_role("dialog")
    expect(dialog.get_by_label("Rated")).to_be_disabled()
    expect(dialog).to_contain_text("Rated games are for registered accounts: sign up to play one.")
