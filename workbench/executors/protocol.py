"""The executor contract (DESIGN §9). A work item is processed by a pure function into an
outcome (files + records, held in memory); only the driver — the caller's `commit` — writes
outcomes into the workspace (files under runs/, rows in DuckDB). Work already finished is
known by the item's content key and skipped before anything runs. Locally outcomes are
handed over in memory; on Ray they travel back through the object store, so workers need no
shared disk and never touch DuckDB.

For the Ray executor `process` and every item must pickle (cloudpickle): plain data, no open
connection, lock or event. A stage's worker context that holds an Engine or a stop Event
drops them when pickled and makes its own on the worker (`Engine` pickles as "connect to
this node's engine"). Items carry what a worker reads (a bundle's files, a path's steps):
nothing is read from the driver's disk.
"""
from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Protocol, Sequence


EXECUTORS = ("local", "ray")   # `--executor`; local is the default and needs no Ray


class WorkItem(Protocol):
    @property
    def key(self) -> str:
        """Content key: two items with the same key are the same work."""


@dataclass
class ExecutorReport:
    submitted: int = 0
    skipped: int = 0          # finished before (by key)
    done: int = 0             # processed and committed in this run
    failed: int = 0           # the function raised; the error was committed by `on_error`
    stopped: bool = False     # `stop` was set before every item ran
    errors: dict[str, str] = field(default_factory=dict)   # key -> message


class Executor(Protocol):
    def run(self, items: Sequence[Any], process: Callable[[Any], Any], *,
            finished: Iterable[str] = (),
            commit: Callable[[Any, Any], None],
            on_error: Callable[[Any, BaseException], None] | None = None,
            stop: threading.Event | None = None) -> ExecutorReport:
        """Run `process(item)` for each item whose key is not in `finished`; call
        `commit(item, outcome)` in the caller's thread, one outcome at a time, as they arrive.
        An exception in `process` goes to `on_error(item, exc)` (also in the caller's thread)
        and does not stop the others. `stop` set: no new item starts; running ones finish."""
