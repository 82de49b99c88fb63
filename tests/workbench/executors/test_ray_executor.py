"""RayExecutor on a real two-node local cluster (ray_cluster.py): the contract of LocalExecutor,
outcomes through the object store, and a node killed mid-batch."""
import threading
import time

import pytest

from tests.workbench.executors import ray_work
from tests.workbench.executors.ray_cluster import ray_cluster  # noqa: F401
from tests.workbench.executors.ray_work import Item

pytestmark = pytest.mark.slow
ray = pytest.importorskip("ray")

from workbench.executors.ray_executor import RayExecutor, RayItemLost  # noqa: E402


def executor(cluster, **kw) -> RayExecutor:
    kw.setdefault("base_image", None)       # the image ensure has its own tests (test_ray_nodes)
    return RayExecutor(cluster.address, **kw)


def test_skips_finished_keys_and_commits_in_the_callers_thread_on_both_nodes(ray_cluster):
    caller = threading.get_ident()
    committed = []

    def commit(item, outcome):
        assert threading.get_ident() == caller      # only the driver writes
        committed.append((item.n, outcome[0]))
        nodes.add(outcome[1])

    nodes: set[str] = set()
    items = [Item(i, seconds=0.3) for i in range(8)]
    report = executor(ray_cluster).run(items, ray_work.tenfold, finished={"k1", "k4"}, commit=commit)
    assert sorted(committed) == [(i, i * 10) for i in (0, 2, 3, 5, 6, 7)]
    assert (report.submitted, report.skipped, report.done, report.failed, report.stopped) == (8, 2, 6, 0, False)
    assert nodes == set(ray_cluster.node_ids())     # each node's docker slot took items


def test_outcomes_come_back_through_the_object_store(ray_cluster):
    got = {}
    executor(ray_cluster).run([Item(i) for i in range(3)], ray_work.big, commit=lambda i, o: got.update({i.n: o}))
    assert {n: (len(o), o[:1]) for n, o in got.items()} == {n: (2 * 1024 * 1024, bytes([n])) for n in range(3)}


def test_an_exception_goes_to_on_error_as_itself_and_is_not_retried(ray_cluster, tmp_path):
    errors, done = [], []
    report = executor(ray_cluster).run(
        [Item(i, str(tmp_path)) for i in range(4)], ray_work.boom_on_two, commit=lambda i, o: done.append(o),
        on_error=lambda i, e: errors.append((i.n, type(e).__name__, str(e))))
    assert sorted(done) == [0, 1, 3] and errors == [(2, "RuntimeError", "boom")]
    assert report.failed == 1 and report.errors == {"k2": "RuntimeError: boom"}
    assert len(ray_work.tries(str(tmp_path), "k2")) == 1     # application errors are not retried


def test_stop_leaves_the_rest_unstarted(ray_cluster, tmp_path):
    stop = threading.Event()

    def commit(item, outcome):
        stop.set()                                  # the first result asks the batch to stop

    report = executor(ray_cluster, concurrency=1).run(
        [Item(i, str(tmp_path)) for i in range(5)], ray_work.tenfold, commit=commit, stop=stop)
    assert report.done == 1 and report.stopped
    assert [k for k in (f"k{i}" for i in range(5)) if ray_work.tries(str(tmp_path), k)] == ["k0"]


def test_in_flight_is_bounded_and_defaults_to_the_docker_slots(ray_cluster, tmp_path):
    ex = executor(ray_cluster, concurrency=1)
    starts = []
    ex.run([Item(i, str(tmp_path), 0.2) for i in range(3)], ray_work.tenfold,
           commit=lambda i, o: starts.append(time.monotonic()))
    assert starts[1] - starts[0] >= 0.18 and starts[2] - starts[1] >= 0.18     # one at a time
    assert executor(ray_cluster).slots() == 2


def _kill_when_second_node_starts(cluster, log_dir: str, items) -> threading.Thread:
    second = cluster.second_node_id()

    def watch():
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if any(second in ray_work.tries(log_dir, it.key) for it in items):
                cluster.kill_second_node()
                return
            time.sleep(0.05)

    t = threading.Thread(target=watch, daemon=True)
    t.start()
    return t


def test_a_node_killed_mid_batch_loses_nothing_and_commits_each_item_once(ray_cluster, tmp_path):
    log_dir = str(tmp_path)
    items = [Item(i, log_dir, 1.5) for i in range(6)]
    second = ray_cluster.second_node_id()
    committed, errors = [], []
    watcher = _kill_when_second_node_starts(ray_cluster, log_dir, items)
    try:
        report = executor(ray_cluster).run(items, ray_work.tenfold, commit=lambda i, o: committed.append(i.key),
                                           on_error=lambda i, e: errors.append((i.key, e)))
        watcher.join(5)
        assert ray_cluster.killed, "the second node never took an item"
        assert errors == [] and sorted(committed) == sorted(it.key for it in items)   # once each, none lost
        assert (report.done, report.failed) == (6, 0)
        retried = [it.key for it in items if ray_work.tries(log_dir, it.key)[:1] == [second]]
        assert retried, "no item was running on the killed node"
        for key in retried:                         # ran again, on the head, after the kill
            assert len(ray_work.tries(log_dir, key)) == 2 and ray_work.tries(log_dir, key)[1] != second
    finally:
        watcher.join(5)
        if ray_cluster.killed:
            ray_cluster.restore_second_node()


def test_an_item_lost_past_its_retries_goes_to_on_error_saying_so(ray_cluster, tmp_path):
    log_dir = str(tmp_path)
    items = [Item(i, log_dir, 1.5) for i in range(3)]
    committed, errors = [], {}
    watcher = _kill_when_second_node_starts(ray_cluster, log_dir, items)
    try:
        report = executor(ray_cluster, max_retries=0).run(
            items, ray_work.tenfold, commit=lambda i, o: committed.append(i.key),
            on_error=lambda i, e: errors.update({i.key: e}))
        watcher.join(5)
        assert ray_cluster.killed
        assert len(errors) == 1 and report.failed == 1 and report.done == 2
        (key, exc), = errors.items()
        assert isinstance(exc, RayItemLost)
        assert str(exc).startswith(f"Ray lost item {key} after 0 retries: NodeDiedError: Task failed because the node")
        assert sorted(committed + [key]) == ["k0", "k1", "k2"]
    finally:
        watcher.join(5)
        if ray_cluster.killed:
            ray_cluster.restore_second_node()


@pytest.mark.docker
def test_a_process_holding_an_engine_gets_its_workers_own(ray_cluster):
    import functools

    from workbench.sandbox.engine import Engine
    got = []
    executor(ray_cluster).run([Item(i) for i in range(2)], functools.partial(ray_work.engine_answers, Engine(sweep=False)),
                              commit=lambda i, o: got.append(o))
    assert got == [(True, True), (True, True)]


def test_a_commit_that_raises_ends_the_batch_and_starts_nothing_more(ray_cluster, tmp_path):
    def commit(item, outcome):
        raise OSError("disk full")

    with pytest.raises(OSError, match="disk full"):
        executor(ray_cluster, concurrency=1).run([Item(i, str(tmp_path)) for i in range(4)], ray_work.tenfold, commit=commit)
    assert [k for k in ("k0", "k1", "k2", "k3") if ray_work.tries(str(tmp_path), k)] == ["k0"]


def test_the_same_key_twice_in_a_batch_is_committed_once(ray_cluster):
    committed = []
    report = executor(ray_cluster).run([Item(1), Item(1), Item(2)], ray_work.tenfold,
                                       commit=lambda i, o: committed.append(i.key))
    assert sorted(committed) == ["k1", "k2"]
    assert (report.submitted, report.done, report.skipped) == (3, 2, 1)


def test_a_batch_whose_only_node_dies_fails_what_is_left_instead_of_waiting_for_ever(ray_cluster, tmp_path):
    # A third node is the only one offering `flaky`; once it is gone Ray would keep the items pending.
    node = ray_cluster.cluster.add_node(num_cpus=1, resources={"flaky": 1}, object_store_memory=80 * 1024 * 1024)
    try:
        ray_cluster.cluster.wait_for_nodes()
        log_dir, errors = str(tmp_path), {}
        items = [Item(i, log_dir, 2.0) for i in range(3)]

        def kill_when_started():
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline and not ray_work.tries(log_dir, "k0"):
                time.sleep(0.05)
            node.kill_raylet()

        killer = threading.Thread(target=kill_when_started, daemon=True)
        killer.start()
        t0 = time.monotonic()
        report = executor(ray_cluster, resources={"flaky": 1}, concurrency=1, no_node_grace_s=1).run(
            items, ray_work.tenfold, commit=lambda i, o: None, on_error=lambda i, e: errors.update({i.key: e}))
        killer.join(5)
        assert time.monotonic() - t0 < 40
        assert report.failed == 3 and sorted(errors) == ["k0", "k1", "k2"]
        assert all(isinstance(e, RayItemLost) for e in errors.values())
        assert "no alive node of the Ray cluster at" in str(errors["k1"]) and "has offered 'flaky' for 1 s" in str(errors["k1"])
    finally:
        ray_cluster.cluster.remove_node(node, allow_graceful=False)
