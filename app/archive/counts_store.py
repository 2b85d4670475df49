"""Counting an archive query: exact while an index serves it cheaply, else PostgreSQL's
estimate (read from the plan), so that a count never reads the whole table."""

from __future__ import annotations

import json
import logging
from typing import Any

from sqlalchemy import (
    ClauseElement,
    Executable,
    Select,
    func,
    select,
)
from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.ext.compiler import compiles

from app.archive.store import Branches
from app.db.models import Game

logger = logging.getLogger(__name__)


class _Explain(Executable, ClauseElement):
    """PostgreSQL's `EXPLAIN (FORMAT JSON)` of a statement: its plan, not run."""

    inherit_cache = False

    def __init__(self, statement: Select[Any]) -> None:
        self.statement = statement


@compiles(_Explain, "postgresql")
def _compile_explain(element: _Explain, compiler: Any, **kw: Any) -> str:
    statement: str = compiler.process(element.statement, **kw)
    return "EXPLAIN (FORMAT JSON) " + statement


async def _plan(session: AsyncSession, statement: Select[Any]) -> dict[str, Any]:
    document = (await session.execute(_Explain(statement))).scalar_one()
    if isinstance(document, str):
        document = json.loads(document)
    plan: dict[str, Any] = document[0]["Plan"]
    return plan


# A count whose plan reads the whole table and costs more than this (PostgreSQL's cost units:
# about 70,000 games) is estimated instead; a smaller archive is counted however it is read.
COUNT_COST_LIMIT = 2_500.0


# A count from an index that costs more than this (about 400,000 games: some 50 ms) is
# estimated too: the busiest player's history of 800,000 games would take 200 ms to count.
# (At the server's `random_page_cost` of 1.1, `app.db.engine`: an index-only count costs about
# 0.63 of what it did at the default 4, at which this limit was 20,000.)
COUNT_INDEX_COST_LIMIT = 12_500.0


def _reads_whole_table(plan: dict[str, Any]) -> bool:
    if plan.get("Node Type") == "Seq Scan" and plan.get("Relation Name") == "games":
        return True
    return any(_reads_whole_table(child) for child in plan.get("Plans", []))


async def count(session: AsyncSession, branches: Branches) -> tuple[int, bool]:
    """Matching games, counted per branch in one statement (each an index-only count for a
    player's history), and whether the figure is exact.

    On PostgreSQL a count that no index serves (a filter on columns no index holds, such as
    the number of plies, over the whole archive) would read the whole table: past
    `COUNT_COST_LIMIT` the planner's estimate of the matches is given instead (not exact);
    so is a count of more matches than an index range is read in a few dozen milliseconds
    (`COUNT_INDEX_COST_LIMIT`). SQLite always counts."""
    counts = [
        select(func.count()).select_from(Game).where(*conds).scalar_subquery() for conds in branches
    ]
    statement = select(*counts)
    if session.get_bind().dialect.name == "postgresql":
        plan = await _plan(session, statement)
        cost = plan["Total Cost"]
        if cost > COUNT_INDEX_COST_LIMIT or (cost > COUNT_COST_LIMIT and _reads_whole_table(plan)):
            estimates = [
                (await _plan(session, select(Game.id).where(*conds)))["Plan Rows"]
                for conds in branches
            ]
            return int(sum(estimates)), False
    row = (await session.execute(statement)).one()
    return sum(row), True
