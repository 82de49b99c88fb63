"""Rollout batches on the local Ray cluster of the test suite (a head and a second node process,
each with one `docker` resource; tests/workbench/executors/ray_cluster.py), real containers:
the same records as the local executor, a batch that survives its second node being killed
mid-batch with every rollout stored exactly once, and resume on Ray skipping what is stored."""
import json
import shutil
import threading

import pytest

from pipeline.rollouts.batch import run_rollouts
from workbench.sandbox.engine import Engine
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


def test_a_batch_survives_its_second_node_killed_mid_batch(tasks_ws, ray_cluster, engine):
    """Once the first rollout is stored the second node's raylet is killed: a rollout running
    there is retried on the head, every rollout is stored exactly once, nothing is lost, and no
    container of the dead node's worker is left behind."""
    ws, ids = tasks_ws
    killed = []

    def on_progress(c):
        if c["ran"] == 1 and not killed:
            killed.append(ray_cluster.kill_node())
    report = run_rollouts(ws, agent="oracle", task_ids=ids, k=3, concurrency=2, engine=engine,
                          progress=on_progress, executor="ray", ray_address=ray_cluster.address)
    assert killed, "the node was never killed"
    assert report.status == "done" and report.ran == 6 and report.passed == 6, report.as_dict()
    frame = store.rollouts_frame(ws.db, report.run_id)
    assert len(frame) == 6 and frame.rollout_id.is_unique and frame.passed.all()
    assert sorted(zip(frame.task_id, frame["sample"])) == sorted((t, s) for t in ids for s in range(3))
    for folder in frame.folder:
        assert json.loads((ws.root / folder / "result.json").read_text())["passed"]
    _no_containers_left()
