"""Rollout batches launched the way the dashboard does: a detached process whose progress is
in the store, cancelled by SIGTERM to its process group, logged."""
import pytest

from pipeline.rollouts import jobs
from workbench.sandbox.engine import Engine
from workbench.store import rollouts as store
from tests.pipeline.rollouts.demo_tasks import tasks_template, tasks_ws  # noqa: F401
from tests.waiting import wait_until


@pytest.mark.docker
def test_launch_shows_progress_in_the_store_then_cancel_stops_cleanly(tasks_ws):
    ws, ids = tasks_ws
    run_id = jobs.launch(ws, jobs.RolloutParams(agent="oracle", task_ids=tuple(ids), k=3, concurrency=1))
    run = store.get_run(ws.db, run_id)
    assert run["status"] == "running" and jobs.is_alive(run["pid"])
    assert wait_until(lambda: jobs.counts(store.get_run(ws.db, run_id))["done"] >= 1, 240), jobs.log_tail(ws, run_id)
    live = jobs.counts(store.get_run(ws.db, run_id))
    assert live["total"] == 6 and live["passed"] >= 1                   # what the page shows while it runs
    assert store.get_run(ws.db, run_id)["message"].startswith("running: ")
    assert jobs.cancel(ws, run_id)
    assert wait_until(lambda: not jobs.is_alive(run["pid"]), 90)
    final = store.get_run(ws.db, run_id)
    assert final["status"] == "cancelled", (final, jobs.log_tail(ws, run_id))
    assert f"workbench rollout --resume {run_id}" in final["message"]
    stored = len(store.rollouts_frame(ws.db, run_id))
    assert 1 <= stored < 6 and jobs.counts(final)["done"] == stored    # kept what was finished, stopped before the end
    log = jobs.log_tail(ws, run_id)
    assert log.splitlines()[0].startswith(f"$ workbench rollout --workspace {ws.root} --agent oracle --tasks ")
    assert "progress done=1 total=6" in log
    assert Engine(sweep=False).orphaned_containers() == []   # look without sweeping: a sweep would hide a leak
    assert not jobs.cancel(ws, run_id)                        # nothing left to cancel


def test_a_refused_batch_says_why_on_its_run(workspace, monkeypatch):
    """terminus-2 with no endpoint: the launched process refuses, and the page reads why."""
    monkeypatch.delenv("WORKBENCH_LLM_BASE_URL", raising=False)
    run_id = jobs.launch(workspace, jobs.RolloutParams(agent="terminus-2", k=1))
    pid = store.get_run(workspace.db, run_id)["pid"]
    assert wait_until(lambda: not jobs.is_alive(pid), 120)
    run = store.get_run(workspace.db, run_id)
    assert run["status"] == "failed" and "needs an LLM endpoint" in run["message"]
    assert "--accepted" in jobs.log_tail(workspace, run_id).splitlines()[0]
    assert jobs.counts(run) == dict.fromkeys(("total", "done", "ran", "skipped", "passed", "failed", "not_run"), 0)


def test_bad_parameters_are_refused_before_anything_starts(workspace):
    with pytest.raises(ValueError, match="-k must be at least 1"):
        jobs.launch(workspace, jobs.RolloutParams(agent="oracle", k=0))
    with pytest.raises(ValueError, match="choose one of nop, oracle, ablation, noisy-oracle, red-team, terminus-2"):
        jobs.launch(workspace, jobs.RolloutParams(agent="claude"))
    with pytest.raises(ValueError, match="cannot run with --executor ray"):
        jobs.launch(workspace, jobs.RolloutParams(agent="terminus-2", replay="oracle", executor="ray"))
    with pytest.raises(ValueError, match="--ray-address 'auto' is only for --executor ray"):
        jobs.launch(workspace, jobs.RolloutParams(agent="oracle", ray_address="auto"))
    with pytest.raises(ValueError, match="--executor 'dask' is unknown: choose one of local, ray"):
        jobs.launch(workspace, jobs.RolloutParams(agent="oracle", executor="dask"))
    with pytest.raises(ValueError, match="--p must be between 0 and 1"):
        jobs.launch(workspace, jobs.RolloutParams(agent="noisy-oracle", keep_p=1.5))
    assert store.runs(workspace.db).empty


def test_the_launched_command_carries_the_executor_and_p(workspace):
    args = jobs.RolloutParams(agent="noisy-oracle", keep_p=0.7, executor="ray", ray_address="127.0.0.1:6379",
                              task_ids=("t1",)).cli_args(workspace, "rollout-x")
    assert args[args.index("--executor") + 1] == "ray" and args[args.index("--ray-address") + 1] == "127.0.0.1:6379"
    assert args[args.index("--p") + 1] == "0.7"
    plain = jobs.RolloutParams(agent="oracle").cli_args(workspace, "rollout-y")
    assert plain[plain.index("--executor") + 1] == "local" and "--ray-address" not in plain and "--p" not in plain
    from workbench.cli import build_parser
    parsed = build_parser().parse_args(args[:])
    assert (parsed.executor, parsed.ray_address, parsed.p) == ("ray", "127.0.0.1:6379", 0.7)


def test_a_launched_run_that_never_started_cannot_be_resumed_but_says_so(workspace, monkeypatch):
    from pipeline.rollouts.batch import run_rollouts
    monkeypatch.delenv("WORKBENCH_LLM_BASE_URL", raising=False)
    run_id = jobs.launch(workspace, jobs.RolloutParams(agent="terminus-2", k=1))   # refused: no endpoint
    pid = store.get_run(workspace.db, run_id)["pid"]
    assert wait_until(lambda: not jobs.is_alive(pid), 120)
    with pytest.raises(ValueError, match=f"run {run_id} never started .*launch it again"):
        run_rollouts(workspace, resume=True, run_id=run_id)
