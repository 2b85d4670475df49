"""What runs for the life of the server, in parts that say what they need and what they serve.

A part is an async context manager `part(app)` declared with `@lifespan_part(needs=…,
provides=…)`: the names of what it reads from `app.state` and of what it puts there. `enter`
orders the parts so that each comes after the parts that provide what it needs (otherwise in
the order given), so the order of a list of parts never matters; a need that no part provides
and `app.state` does not hold, two parts that need each other, or a part that does not put on
`app.state` what it promised stop the start-up with a `LifespanError` naming them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from contextlib import AbstractAsyncContextManager, AsyncExitStack
from dataclasses import dataclass

from fastapi import FastAPI

PartFunction = Callable[[FastAPI], AbstractAsyncContextManager[None]]


class LifespanError(RuntimeError):
    """The lifespan parts cannot start: a need nobody serves, a cycle, a broken promise."""


@dataclass(frozen=True)
class LifespanPart:
    run: PartFunction
    needs: frozenset[str]
    provides: frozenset[str]

    @property
    def name(self) -> str:
        return getattr(self.run, "__name__", repr(self.run))

    def __call__(self, app: FastAPI) -> AbstractAsyncContextManager[None]:
        return self.run(app)


def lifespan_part(
    *, needs: Iterable[str] = (), provides: Iterable[str] = ()
) -> Callable[[PartFunction], LifespanPart]:
    """Declare a lifespan part with the `app.state` names it reads and those it sets."""

    def declare(run: PartFunction) -> LifespanPart:
        return LifespanPart(run, frozenset(needs), frozenset(provides))

    return declare


def in_order(parts: Sequence[LifespanPart], given: Iterable[str] = ()) -> list[LifespanPart]:
    """The parts, each after those that provide what it needs; `given` is what `app.state`
    already holds. Raises LifespanError when a need cannot be met."""
    have = set(given)
    provided = {name for part in parts for name in part.provides}
    for part in parts:
        missing = part.needs - have - provided
        if missing:
            raise LifespanError(
                f"lifespan part {part.name} needs app.state.{', app.state.'.join(sorted(missing))},"
                " which no part provides"
            )
    ordered: list[LifespanPart] = []
    waiting = list(parts)
    while waiting:
        ready = next((part for part in waiting if part.needs <= have), None)
        if ready is None:
            names = ", ".join(part.name for part in waiting)
            raise LifespanError(f"lifespan parts {names} need each other")
        waiting.remove(ready)
        ordered.append(ready)
        have |= ready.provides
    return ordered


async def enter(stack: AsyncExitStack, app: FastAPI, parts: Sequence[LifespanPart]) -> None:
    """Enter the parts in order on `stack` (left in reverse when it closes), checking that each
    put on `app.state` what it declared."""
    given = {name for part in parts for name in part.needs if hasattr(app.state, name)}
    for part in in_order(parts, given):
        await stack.enter_async_context(part(app))
        unset = sorted(name for name in part.provides if not hasattr(app.state, name))
        if unset:
            raise LifespanError(
                f"lifespan part {part.name} did not set app.state.{', app.state.'.join(unset)}"
            )
