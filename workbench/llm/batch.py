"""Run many async jobs with bounded concurrency; a spent budget stops the batch cleanly."""
from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Generic, TypeVar

from workbench.llm.budget import BudgetExceeded

if TYPE_CHECKING:
    from workbench.llm.client import LLMClient

T = TypeVar("T")
R = TypeVar("R")


@dataclass
class BatchOutcome(Generic[T, R]):
    results: list[tuple[T, R]] = field(default_factory=list)
    failures: list[tuple[T, str]] = field(default_factory=list)
    not_started: list[T] = field(default_factory=list)
    stopped: str | None = None  # why the batch stopped early, if it did


async def map_bounded(items: Iterable[T], fn: Callable[[T], Awaitable[R]], *, concurrency: int,
                      on_result: Callable[[T, R | None, str | None], None] | None = None) -> BatchOutcome[T, R]:
    """Apply fn to every item with at most `concurrency` in flight.

    A failing item is recorded with its reason and the others go on; `BudgetExceeded`
    stops new items from starting, lets running ones finish, and keeps every result.
    """
    queue: asyncio.Queue[T] = asyncio.Queue()
    for it in items:
        queue.put_nowait(it)
    outcome: BatchOutcome[T, R] = BatchOutcome()

    async def worker() -> None:
        while outcome.stopped is None:
            try:
                item = queue.get_nowait()
            except asyncio.QueueEmpty:
                return
            try:
                res = await fn(item)
            except BudgetExceeded as exc:
                outcome.stopped = str(exc)
                outcome.not_started.append(item)
                return
            except Exception as exc:  # one item's failure is reported, not raised
                reason = f"{type(exc).__name__}: {exc}"
                outcome.failures.append((item, reason))
                if on_result:
                    on_result(item, None, reason)
            else:
                outcome.results.append((item, res))
                if on_result:
                    on_result(item, res, None)

    await asyncio.gather(*(worker() for _ in range(max(1, concurrency))))
    while not queue.empty():
        outcome.not_started.append(queue.get_nowait())
    return outcome


def run_with_client(client: "LLMClient", items: Iterable[T], fn: Callable[[T], Awaitable[R]], *,
                    on_result: Callable[[T, R | None, str | None], None],
                    flush: Callable[[], None]) -> BatchOutcome[T, R]:
    """`map_bounded` at the client's concurrency in its own event loop, for a stage that
    stores results as they arrive: `flush` stores what is left whatever ends the batch (done,
    budget spent, Ctrl-C, a crash), then the client's call log is written."""
    async def run() -> BatchOutcome[T, R]:
        try:
            return await map_bounded(items, fn, concurrency=client.settings.concurrency, on_result=on_result)
        finally:
            await client.aclose()

    try:
        return asyncio.run(run())
    finally:
        flush()
        if client.log is not None:
            client.log.flush()
