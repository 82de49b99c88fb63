"""Blocks of ingest work done in worker processes, their results handed back in order.

Spawned processes (the caller may hold threads and database handles that a fork would copy;
a script that calls ingest needs the usual `if __name__ == "__main__"` guard for it), a few
blocks in flight per worker so memory stays flat, and each worker ends when the process that
started it is gone, even SIGKILLed. Where the pool cannot run or breaks, the blocks left are
done in this process: the same results, only slower.
"""
from __future__ import annotations

import multiprocessing
import os
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import TypeVar

B = TypeVar("B")
R = TypeVar("R")
AHEAD = 3   # blocks in flight per worker


def worker_count() -> int:
    return min(8, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1)


def _exit_with(parent: int) -> None:
    """Worker initializer: end when the ingest that started us is gone (even SIGKILLed)."""
    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(0.5)
        os._exit(1)
    threading.Thread(target=watch, daemon=True).start()


def in_order(blocks: Iterable[B], work: Callable[[B], R], workers: int,
             here: Callable[[B], bool] = lambda block: False) -> Iterator[tuple[B, R | None]]:
    """(block, work(block)) for every block, in the order given. `work` runs in `workers`
    processes (a module-level function: it travels by name). A block for which `here` is true
    comes back with None, when its turn comes, for the caller to do in this process."""
    if workers < 2:
        for block in blocks:
            yield block, None if here(block) else work(block)
        return
    pending: deque[tuple[B, Future | None, bool]] = deque()

    def take() -> tuple[B, R | None]:
        block, future, local = pending.popleft()
        if local:
            return block, None
        if future is None:
            return block, work(block)
        try:
            return block, future.result()
        except BrokenProcessPool:   # a worker died (out of memory, killed): do it here
            return block, work(block)

    pool = ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("spawn"),
                               initializer=_exit_with, initargs=(os.getpid(),))
    try:
        for block in blocks:
            local, future = here(block), None
            if not local:
                try:
                    future = pool.submit(work, block)
                except BrokenProcessPool:
                    future = None
            pending.append((block, future, local))
            while sum(1 for _, f, _ in pending if f is not None) >= workers * AHEAD:
                yield take()
        while pending:
            yield take()
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
