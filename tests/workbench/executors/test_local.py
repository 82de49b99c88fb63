import threading
import time
from dataclasses import dataclass

import pytest

from workbench.executors.local import LocalExecutor


@dataclass(frozen=True)
class Item:
    n: int

    @property
    def key(self) -> str:
        return f"k{self.n}"


def test_skips_finished_keys_and_commits_in_the_callers_thread():
    caller = threading.get_ident()
    committed, workers = [], set()

    def process(item):
        workers.add(threading.get_ident())
        time.sleep(0.01)
        return item.n * 10

    def commit(item, outcome):
        assert threading.get_ident() == caller     # only the driver writes
        committed.append((item.n, outcome))

    report = LocalExecutor(3).run([Item(i) for i in range(8)], process, finished={"k1", "k4"}, commit=commit)
    assert sorted(committed) == [(i, i * 10) for i in (0, 2, 3, 5, 6, 7)]
    assert (report.submitted, report.skipped, report.done, report.failed) == (8, 2, 6, 0)
    assert caller not in workers


def test_an_exception_goes_to_on_error_and_the_others_still_run():
    errors, done = [], []

    def process(item):
        if item.n == 2:
            raise RuntimeError("boom")
        return item.n

    report = LocalExecutor(2).run([Item(i) for i in range(4)], process, commit=lambda i, o: done.append(o),
                                  on_error=lambda i, e: errors.append((i.n, str(e))))
    assert sorted(done) == [0, 1, 3] and errors == [(2, "boom")]
    assert report.failed == 1 and report.errors == {"k2": "RuntimeError: boom"}


def test_stop_leaves_the_rest_unstarted():
    stop = threading.Event()
    started = []

    def process(item):
        started.append(item.n)
        stop.set()                  # the first item asks the batch to stop
        return item.n

    report = LocalExecutor(1).run([Item(i) for i in range(5)], process, commit=lambda i, o: None, stop=stop)
    assert started == [0] and report.done == 1 and report.stopped


def test_concurrency_is_bounded():
    live, peak, lock = [0], [0], threading.Lock()

    def process(item):
        with lock:
            live[0] += 1
            peak[0] = max(peak[0], live[0])
        time.sleep(0.02)
        with lock:
            live[0] -= 1

    LocalExecutor(2).run([Item(i) for i in range(8)], process, commit=lambda i, o: None)
    assert peak[0] == 2


def test_concurrency_below_one_is_refused():
    with pytest.raises(ValueError, match="at least 1"):
        LocalExecutor(0)
