"""Rollout batches on the local Ray cluster of the test suite (a head and a second node process,
each with one `docker` resource; tests/workbench/executors/ray_cluster.py), real containers:
the same records as the local executor, a batch that survives its second node being killed
mid-batch with every rollout stored exactly once, and resume on Ray skipping what is stored."""
import json
import shutil
import threading
import time

import psutil
import pytest

from pipeline.rollouts.batch import run_rollouts
from workbench.sandbox.engine import OWNER_LABEL, Engine
from workbench.store import rollouts as store
from workbench.workspace import Workspace
from tests.pipeline.rollouts.demo_tasks import tasks_template, tasks_ws  # noqa: F401
from tests.workbench.executors.ray_cluster import ray_cluster  # noqa: F401

pytestmark = [pytest.mark.docker, pytest.mark.slow]

# What a rollout's result says about the task and the agent; timings and paths differ by run.
SAME = ("rollout_id", "task_id", "agent", "agent_label", "model", "sample", "reward", "passed", "failure_class",
        "n_tests", "n_failed", "turns")


def _records(ws: Workspace, run_id: str) -> dict[str, dict]:
    """rollout id -> what must be the same wherever it ran: the record's fields, its per-test
    outcomes and its folder's file names (result.json's own fields too)."""
    frame = store.rollouts_frame(ws.db, run_id)
    tests = store.test_outcomes(ws.db, run_id)
    out = {}
    for row in frame.to_dict("records"):
        folder = ws.root / row["folder"]
        result = json.loads((folder / "result.json").read_text())
        mine = tests[tests.rollout_id == row["rollout_id"]]
        out[row["rollout_id"]] = {
            "record": {k: row[k] for k in SAME}, "result": {k: result[k] for k in SAME},
            "tests": sorted(zip(mine.test_name, mine.outcome)),
            "files": sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file())}
    return out


def _no_containers_left():
    assert Engine(sweep=False).orphaned_containers() == []   # look without sweeping: a sweep would hide a leak


def test_oracle_and_nop_on_ray_give_the_same_records_as_locally(tasks_ws, ray_cluster, engine, tmp_path):
    ws, ids = tasks_ws
    ray_ws = Workspace.open(shutil.copytree(ws.root, tmp_path / "ray_ws"))
    for agent in ("oracle", "nop"):
        here = run_rollouts(ws, agent=agent, task_ids=ids, k=2, concurrency=2, engine=engine)
        there = run_rollouts(ray_ws, agent=agent, task_ids=ids, k=2, concurrency=2, engine=engine,
                             executor="ray", ray_address=ray_cluster.address)
        assert here.status == there.status == "done", (here.as_dict(), there.as_dict())
        assert (here.ran, here.passed) == (there.ran, there.passed) == (4, 4 if agent == "oracle" else 0)
        assert _records(ws, here.run_id) == _records(ray_ws, there.run_id)
        params = json.loads(store.get_run(ray_ws.db, there.run_id)["params"])
        assert (params["executor"], params["ray_address"]) == ("ray", ray_cluster.address)
    _no_containers_left()


def test_resume_on_ray_skips_the_stored_rollouts(tasks_ws, ray_cluster, engine):
    ws, ids = tasks_ws
    stop = threading.Event()

    def on_progress(c):
        if c["ran"] >= 1:
            stop.set()
    first = run_rollouts(ws, agent="oracle", task_ids=ids, k=2, concurrency=1, engine=engine, stop=stop,
                         progress=on_progress, executor="ray", ray_address=ray_cluster.address)
    assert first.status == "cancelled" and 1 <= first.ran < 4, first.as_dict()
    stored = set(store.rollouts_frame(ws.db, first.run_id).rollout_id)
    again = run_rollouts(ws, resume=True, run_id=first.run_id, engine=engine)   # on Ray again: the run's params
    assert again.status == "done" and again.skipped == len(stored) and again.ran == 4 - len(stored)
    frame = store.rollouts_frame(ws.db, first.run_id)
    assert len(frame) == 4 and frame.rollout_id.is_unique and frame.passed.all()
    assert stored <= set(frame.rollout_id)
    _no_containers_left()


def _busy_worker_of(node) -> str | None:
    """The owner label of a sandbox container whose owner is a worker process of `node` (a
    child of its raylet): a rollout running there now."""
    raylet = node.all_processes["raylet"][0].process.pid
    for c in Engine(sweep=False).sandbox_containers():
        owner = (c.get("Labels") or {}).get(OWNER_LABEL, "")
        pid = owner.rpartition(":")[2]
        try:
            if pid.isdigit() and raylet in {p.pid for p in psutil.Process(int(pid)).parents()}:
                return owner
        except psutil.NoSuchProcess:
            continue
    return None


def test_a_batch_survives_its_second_node_killed_mid_batch(tasks_ws, ray_cluster, engine):
    """Once the first rollout is stored, and while a rollout runs in a container of the second
    node's worker, that node's raylet is killed (SIGKILL): the rollout is retried on the head,
    every rollout is stored exactly once, nothing is lost, and the dead worker's container is
    not left behind."""
    ws, ids = tasks_ws
    first_stored, finished = threading.Event(), threading.Event()
    killed: list[str] = []

    def kill_when_busy():
        first_stored.wait()
        while not finished.is_set():
            if owner := _busy_worker_of(ray_cluster.second):
                killed.append(ray_cluster.second_node_id())
                ray_cluster.kill_second_node()
                killed.append(owner)
                return
            time.sleep(0.1)
    killer = threading.Thread(target=kill_when_busy, daemon=True)
    killer.start()
    try:
        report = run_rollouts(ws, agent="oracle", task_ids=ids, k=3, concurrency=2, engine=engine,
                              progress=lambda c: c["ran"] >= 1 and first_stored.set(), executor="ray",
                              ray_address=ray_cluster.address)
        finished.set()
        killer.join(5)
        assert len(killed) == 2, "no rollout was seen running on the second node"
        ray_cluster.wait_dead(killed[0])
    finally:
        finished.set()
        first_stored.set()
        ray_cluster.restore_second_node()     # later tests see two nodes again
    assert report.status == "done" and report.ran == 6 and report.passed == 6, report.as_dict()
    frame = store.rollouts_frame(ws.db, report.run_id)
    assert len(frame) == 6 and frame.rollout_id.is_unique and frame.passed.all()
    assert sorted(zip(frame.task_id, frame["sample"])) == sorted((t, s) for t in ids for s in range(3))
    for folder in frame.folder:
        assert json.loads((ws.root / folder / "result.json").read_text())["passed"]
    owners = {(c.get("Labels") or {}).get(OWNER_LABEL) for c in Engine(sweep=False).sandbox_containers()}
    assert killed[1] not in owners                # the dead worker's container is gone
    _no_containers_left()
