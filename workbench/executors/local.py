"""LocalExecutor: threads with bounded concurrency; outcomes committed in the caller's thread."""
from __future__ import annotations

import threading
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from typing import Any, Callable, Iterable, Sequence

from workbench.executors.protocol import ExecutorReport


class LocalExecutor:
    def __init__(self, concurrency: int = 2):
        if concurrency < 1:
            raise ValueError(f"concurrency must be at least 1, got {concurrency}")
        self.concurrency = concurrency

    def run(self, items: Sequence[Any], process: Callable[[Any], Any], *,
            finished: Iterable[str] = (),
            commit: Callable[[Any, Any], None],
            on_error: Callable[[Any, BaseException], None] | None = None,
            stop: threading.Event | None = None) -> ExecutorReport:
        done_keys = set(finished)
        report = ExecutorReport(submitted=len(items))
        todo = [it for it in items if it.key not in done_keys]
        report.skipped = len(items) - len(todo)
        stop = stop or threading.Event()
        queue = iter(todo)
        running: dict[Future, Any] = {}
        with ThreadPoolExecutor(self.concurrency, thread_name_prefix="work") as pool:
            def top_up() -> None:
                # Submit lazily, so a stop leaves the rest unstarted rather than queued.
                while len(running) < self.concurrency and not stop.is_set():
                    item = next(queue, None)
                    if item is None:
                        return
                    running[pool.submit(process, item)] = item
            top_up()
            while running:
                ready, _ = wait(running, return_when=FIRST_COMPLETED)
                for fut in ready:
                    item = running.pop(fut)
                    exc = fut.exception()
                    if exc is None:
                        commit(item, fut.result())
                        report.done += 1
                    else:
                        report.failed += 1
                        report.errors[item.key] = f"{type(exc).__name__}: {exc}"
                        if on_error is not None:
                            on_error(item, exc)
                top_up()
        report.stopped = stop.is_set() and report.done + report.failed + report.skipped < report.submitted
        return report
