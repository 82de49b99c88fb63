"""Batches launched the way the dashboard does: detached, cancellable, logged."""
import pytest

from pipeline.synth import jobs
from workbench.sandbox.engine import Engine
from workbench.store import tasks as store
from tests.waiting import wait_until

pytestmark = pytest.mark.docker


def test_launch_then_cancel_stops_cleanly(graph_workspace):
    ws = graph_workspace
    run_id = jobs.launch(ws, jobs.SynthParams(n_paths=12, concurrency=1, seed=21))
    run = store.get_run(ws.db, run_id)
    assert run["status"] == "running" and jobs.is_alive(run["pid"])
    assert wait_until(lambda: store.stage_counts(ws.db, run_id)["verified"] >= 1, 240), jobs.log_tail(ws, run_id)
    assert jobs.cancel(ws, run_id)
    assert wait_until(lambda: not jobs.is_alive(run["pid"]), 60)
    final = store.get_run(ws.db, run_id)
    assert final["status"] == "cancelled", (final, jobs.log_tail(ws, run_id))
    counts = store.stage_counts(ws.db, run_id)
    assert 1 <= counts["verified"] < 12          # kept what was finished, stopped before the end
    assert "progress verified=" in jobs.log_tail(ws, run_id)
    assert Engine(sweep=False).orphaned_containers() == []   # look without sweeping: a sweep would hide a leak
    assert not jobs.cancel(ws, run_id)            # nothing left to cancel


def test_a_dead_process_is_reported_not_cancelled(workspace):
    run_id = jobs.launch(workspace, jobs.SynthParams(n_paths=2))   # no graph: the process fails fast
    pid = store.get_run(workspace.db, run_id)["pid"]
    assert wait_until(lambda: not jobs.is_alive(pid), 120)
    run = store.get_run(workspace.db, run_id)
    assert run["status"] == "failed" and "workbench graph build" in (run["message"] + jobs.log_tail(workspace, run_id))


def test_an_llm_batch_without_an_endpoint_fails_with_the_advice_and_logs_its_command(workspace, monkeypatch):
    """The page launches `--provider llm --budget-usd X`; the process it starts says what it ran
    (first log line) and, with no endpoint, why it stopped, on the run itself."""
    monkeypatch.delenv("WORKBENCH_LLM_BASE_URL", raising=False)
    run_id = jobs.launch(workspace, jobs.SynthParams(n_paths=2, provider="llm", budget_usd=2.5))
    pid = store.get_run(workspace.db, run_id)["pid"]
    assert wait_until(lambda: not jobs.is_alive(pid), 120)
    log = jobs.log_tail(workspace, run_id)
    first = log.splitlines()[0]
    assert first.startswith("$ workbench synth --workspace ") and "--provider llm" in first
    assert first.endswith(f"--run-id {run_id} --no-progress --budget-usd 2.5")
    run = store.get_run(workspace.db, run_id)
    assert run["status"] == "failed" and "set WORKBENCH_LLM_BASE_URL" in run["message"]
    assert "Settings page" in run["message"]
