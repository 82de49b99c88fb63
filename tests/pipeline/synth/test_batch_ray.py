"""Synthesis batches on the local Ray cluster of the test suite (a head and a second node
process, each with one `docker` slot; tests/workbench/executors/ray_cluster.py), offline, with
real containers: the same task ids and verdicts per path as the local executor, and a stopped
Ray batch resumed on Ray skips the paths it finished."""
import shutil
import threading

import pytest

from pipeline.synth.batch import run_synth
from workbench.sandbox.engine import Engine
from workbench.store import tasks as store
from workbench.workspace import Workspace
from tests.workbench.executors.ray_cluster import ray_cluster  # noqa: F401

pytestmark = [pytest.mark.docker, pytest.mark.slow]
N_PATHS = 4


def _per_path(ws: Workspace, run_id: str) -> dict[str, tuple]:
    """path id -> (stage, task id, verdict, first failed check, bundle hash)."""
    with ws.db.read() as con:
        rows = con.execute("""SELECT rt.path_id, rt.stage, rt.task_id, t.verdict, t.failed_check, t.bundle_hash
                              FROM run_tasks rt LEFT JOIN tasks t USING (task_id)
                              WHERE rt.run_id = ? ORDER BY rt.path_id""", [run_id]).fetchall()
    return {r[0]: tuple(r[1:]) for r in rows}


def _no_containers_left():
    assert Engine(sweep=False).orphaned_containers() == []   # look without sweeping: a sweep would hide a leak


def test_an_offline_batch_on_ray_makes_the_same_tasks_as_locally(graph_workspace, ray_cluster, engine, tmp_path):
    ws = graph_workspace
    ray_ws = Workspace.open(shutil.copytree(ws.root, tmp_path / "ray_ws"))
    here = run_synth(ws, n_paths=N_PATHS, seed=7, concurrency=2, engine=engine)
    there = run_synth(ray_ws, n_paths=N_PATHS, seed=7, concurrency=2, engine=engine,
                      executor="ray", ray_address=ray_cluster.address)
    assert here.status == there.status == "finished", (here.as_dict(), there.as_dict())
    assert (here.sampled, here.accepted, here.rejected, here.failed) == \
        (there.sampled, there.accepted, there.rejected, there.failed) and here.sampled == N_PATHS
    local, remote = _per_path(ws, here.run_id), _per_path(ray_ws, there.run_id)
    # What must not depend on where a path ran: its task (an id hashed from its steps), stage and
    # verdict (path ids, and the bundle metadata naming them, are the sample batch's own)
    assert sorted(v[:4] for v in local.values()) == sorted(v[:4] for v in remote.values()), (local, remote)
    assert all(stage in ("verified", "failed") for stage, *_ in local.values()), local
    assert there.accepted >= 1 and there.timings["docker_s"] > 0      # the checks ran on the workers
    for task_id in (t for _, t, verdict, *_ in remote.values() if verdict):
        assert (ray_ws.root / "tasks" / task_id / "task.toml").exists()   # the driver wrote the bundles
        assert list(store.checks_for(ray_ws.db, task_id).check_name) == \
            list(store.checks_for(ws.db, task_id).check_name)
    _no_containers_left()


def test_a_stopped_ray_batch_resumed_on_ray_skips_the_paths_it_finished(graph_workspace, ray_cluster, engine):
    ws = graph_workspace
    stop = threading.Event()

    def on_progress(r):
        if r["verified"] + r["failed"] >= 1:
            stop.set()
    first = run_synth(ws, n_paths=N_PATHS, seed=9, concurrency=1, engine=engine, stop=stop, progress=on_progress,
                      executor="ray", ray_address=ray_cluster.address)
    assert first.status == "cancelled" and 1 <= first.verified + first.failed < N_PATHS, first.as_dict()
    done_before = store.tasks_frame(ws.db).dropna(subset=["verified_at"]).set_index("task_id")["verified_at"]
    finished_paths = {p for p, (stage, *_) in _per_path(ws, first.run_id).items() if stage in ("verified", "failed")}
    second = run_synth(ws, resume=True, run_id=first.run_id, engine=engine, executor="ray",
                       ray_address=ray_cluster.address)
    assert second.status == "finished" and second.verified + second.failed == N_PATHS, second.as_dict()
    assert second.reused == 0                          # finished paths were not even looked at again
    after = store.tasks_frame(ws.db).set_index("task_id")["verified_at"]
    assert all(after[t] == when for t, when in done_before.items())   # not verified again
    assert finished_paths < set(_per_path(ws, first.run_id))
    _no_containers_left()
