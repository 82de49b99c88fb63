"""The executor contract (DESIGN §9). A work item is processed by a pure function into an
outcome (files + records, held in memory); only the driver — the caller's `commit` — writes
outcomes into the workspace (files under runs/, rows in DuckDB). Work already finished is
known by the item's content key and skipped before anything runs. Locally outcomes are
handed over in memory; on Ray they travel back through the object store, so workers need no
shared disk and never touch DuckDB.

For the Ray executor `process` and every item must pickle (cloudpickle): plain data, no open
connection, lock or event. Items carry what a worker reads (a bundle's files, a path's
steps): nothing is read from the driver's disk. `process` is usually a bound method or a
functools.partial over a stage's worker context; that context is pickled once per batch:
- an `Engine` in it pickles as "connect to this node's engine" (workbench.sandbox.engine:
  it becomes the worker process's own `node_engine()`), so keep it as a field;
- a threading.Event / Lock / Semaphore does not pickle and means nothing on another
  machine: the context drops it in `__getstate__` and makes a fresh one in `__setstate__`:

      def __getstate__(self):
          state = self.__dict__.copy()
          state["stop"] = None             # the driver's stop is enforced by the driver
          return state
      def __setstate__(self, state):
          self.__dict__.update(state)
          self.stop = threading.Event()

  A stop set on the driver then reaches no running item — the contract only promises that
  no new item starts; an item that must end early needs its own deadline;
- an open DuckDB connection, Workspace or file handle has no place in it: workers never
  touch the store; read what they need into the item on the driver.
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
    skipped: int = 0          # finished before (by key); on Ray also a key repeated within the batch
    done: int = 0             # processed and committed in this run
    failed: int = 0           # the function raised (or Ray lost the item); the error went to `on_error`
    stopped: bool = False     # `stop` was set before every item ran
    errors: dict[str, str] = field(default_factory=dict)   # key -> message
    # Ray: node id -> the base image there: "present" / "loaded" / "failed: why" / "shipped on its first item"
    nodes: dict[str, str] = field(default_factory=dict)


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


def pending(items: Sequence[Any], finished: Iterable[str]) -> tuple[list[Any], ExecutorReport]:
    """What every executor does first: the items still to run (not finished by key), and a
    report that counts the rest as skipped."""
    done_keys = set(finished)
    todo = [it for it in items if it.key not in done_keys]
    return todo, ExecutorReport(submitted=len(items), skipped=len(items) - len(todo))


def record_failure(report: ExecutorReport, item: Any, exc: BaseException,
                   on_error: Callable[[Any, BaseException], None] | None) -> None:
    report.failed += 1
    report.errors[item.key] = f"{type(exc).__name__}: {exc}"
    if on_error is not None:
        on_error(item, exc)


def was_stopped(report: ExecutorReport, stop: threading.Event) -> bool:
    """`stop` was set and left some item unrun."""
    return stop.is_set() and report.done + report.failed + report.skipped < report.submitted
