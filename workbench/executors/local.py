"""LocalExecutor: threads with bounded concurrency; outcomes committed in the caller's thread."""
from __future__ import annotations

import threading
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from typing import Any, Callable, Iterable, Sequence

from workbench.executors.protocol import ExecutorReport, pending, record_failure, was_stopped


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
        todo, report = pending(items, finished)
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
                        record_failure(report, item, exc, on_error)
                top_up()
        report.stopped = was_stopped(report, stop)
        return report
