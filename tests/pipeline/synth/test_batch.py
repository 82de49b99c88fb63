"""`workbench synth` end to end on the demo graph with real Docker: yield, resumability
after a stop and after a SIGKILL, and nothing lost or left behind."""
import os
import signal
import subprocess
import sys
import threading
import time
import tomllib

import pytest

from pipeline.synth.batch import run_synth
from workbench.sandbox.engine import Engine
from workbench.sandbox.bundle import read_bundle
from workbench.store import tasks as store
from workbench.store.status import workspace_status

pytestmark = pytest.mark.docker


def test_batch_accepts_most_paths_and_stores_every_check(graph_workspace):
    ws = graph_workspace
    seen = []
    report = run_synth(ws, n_paths=8, seed=3, concurrency=2, progress=seen.append)
    assert report.status == "finished" and report.sampled == 8
    assert report.verified + report.failed == 8
    assert report.accepted >= 7, report.as_dict()          # ≥ 90 % of sampled, rounded down
    assert seen and seen[-1]["verified"] == report.verified  # progress reached the caller
    t = report.timings                                        # offline: no LLM; the batch's own verification
    assert t["llm_s"] == 0 and 0 < t["docker_s"] < t["total_s"] <= report.seconds * report.concurrency
    assert report.provider == "offline" and report.cost_usd == 0
    funnel = store.funnel_counts(ws.db, report.run_id)
    assert funnel["sampled"] == 8 and funnel["accepted"] == report.accepted
    assert list(funnel.values()) == sorted(funnel.values(), reverse=True)   # a funnel only narrows
    frame = store.tasks_frame(ws.db)
    assert frame.near_dup_key.notna().all()                   # every task can be compared
    assert frame.name.is_unique                               # a name per task: one export folder each
    accepted = frame[frame.verdict == "accepted"]
    for row in accepted.itertuples():
        bundle = read_bundle(ws.root / row.bundle_dir)        # valid Harbor layout on disk
        assert 2 <= row.n_steps <= 5 and len(row.recipes) == row.n_steps
        checks = store.checks_for(ws.db, row.task_id).set_index("check_name")
        assert set(checks.index) == {"build", "noop", "oracle", "rubric", "decontam"}
        assert checks.loc["noop", "details"]["reward"] == 0 and checks.loc["oracle", "details"]["reward"] == 1
        assert "bash /tests/test.sh" in checks.loc["oracle", "log"]
        assert all(t["outcome"] == "passed" for t in checks.loc["oracle", "details"]["tests"])
        meta = tomllib.loads(bundle.text("task.toml"))["metadata"]
        assert meta["skill_ids"] == list(row.skill_ids) and meta["recipes"] == list(row.recipes)
    status = workspace_status(ws.db)
    assert status["tasks"]["accepted"] == len(accepted) and status["tasks"]["total"] == len(frame)
    assert Engine(sweep=False).orphaned_containers() == []   # look without sweeping: a sweep would hide a leak


def test_stop_then_resume_finishes_without_redoing_work(graph_workspace):
    ws = graph_workspace
    stop = threading.Event()

    def on_progress(r):
        if r["verified"] >= 2:
            stop.set()
    first = run_synth(ws, n_paths=6, seed=5, concurrency=1, progress=on_progress, stop=stop)
    assert first.status == "cancelled" and 2 <= first.verified < 6
    run = store.get_run(ws.db, first.run_id)
    assert run["status"] == "cancelled"
    done_before = store.tasks_frame(ws.db).dropna(subset=["verified_at"]).set_index("task_id")["verified_at"]
    second = run_synth(ws, resume=True, concurrency=2)
    assert second.run_id == first.run_id and second.status == "finished"
    assert store.stage_counts(ws.db, first.run_id)["verified"] + store.stage_counts(ws.db, first.run_id)["failed"] == 6
    # the report is the whole run's, not the resumed part's
    assert second.verified + second.failed == 6 and second.sampled == 6
    assert second.accepted == (store.tasks_frame(ws.db).verdict == "accepted").sum() >= first.accepted
    assert store.get_run(ws.db, first.run_id)["message"].startswith(f"{second.accepted} accepted")
    after = store.tasks_frame(ws.db).set_index("task_id")["verified_at"]
    for task_id, when in done_before.items():
        assert after[task_id] == when          # finished tasks were not verified again


def test_killed_cli_run_resumes_and_leaves_no_container(graph_workspace):
    ws = graph_workspace
    cmd = [sys.executable, "-m", "workbench.cli", "synth", "--workspace", str(ws.root), "--paths", "6",
           "--seed", "11", "--concurrency", "2", "--no-progress"]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    for line in proc.stdout:                      # kill it as soon as one task is verified
        if line.startswith("progress verified=") and not line.startswith("progress verified=0"):
            break
    proc.send_signal(signal.SIGKILL)
    proc.wait(30)
    run_id = store.runs(ws.db).iloc[0]["run_id"]
    assert store.get_run(ws.db, run_id)["status"] == "running"   # it never got to say otherwise
    r = subprocess.run(cmd[:6] + ["--resume", "--no-progress"], capture_output=True, text=True, timeout=600,
                       env={k: v for k, v in os.environ.items() if not k.startswith("WORKBENCH_LLM")})
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]
    assert f"Run {run_id} finished" in r.stdout
    counts = store.stage_counts(ws.db, run_id)
    assert counts["verified"] + counts["failed"] == 6 and counts["sampled"] == counts["synthesized"] == 0
    assert Engine(sweep=False).orphaned_containers() == []   # look without sweeping: a sweep would hide a leak


def test_without_a_graph_the_error_says_what_to_do(workspace):
    with pytest.raises(ValueError, match="workbench graph build"):
        run_synth(workspace, n_paths=2)
    assert store.runs(workspace.db).iloc[0]["status"] == "failed"


def test_ctrl_c_stops_at_once_and_keeps_finished_tasks(graph_workspace):
    ws = graph_workspace
    cmd = [sys.executable, "-m", "workbench.cli", "synth", "--workspace", str(ws.root), "--paths", "10",
           "--seed", "13", "--concurrency", "2", "--no-progress"]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    for line in proc.stdout:
        if line.startswith("progress verified=") and not line.startswith("progress verified=0"):
            break
    t0 = time.monotonic()
    proc.send_signal(signal.SIGINT)
    rest = proc.stdout.read()
    assert proc.wait(60) == 130 and time.monotonic() - t0 < 30
    assert "workbench synth --resume" in rest
    run = store.runs(ws.db).iloc[0]
    assert run["status"] == "cancelled"
    counts = store.stage_counts(ws.db, run["run_id"])
    assert 1 <= counts["verified"] < 10
    assert Engine(sweep=False).orphaned_containers() == []   # look without sweeping: a sweep would hide a leak


def test_llm_provider_without_an_endpoint_is_refused_with_advice(workspace, monkeypatch):
    monkeypatch.delenv("WORKBENCH_LLM_BASE_URL", raising=False)
    with pytest.raises(ValueError, match="set WORKBENCH_LLM_BASE_URL .* or configure one on the Settings page"):
        run_synth(workspace, n_paths=2, provider="llm")
    assert store.runs(workspace.db).empty     # refused before anything was recorded
    with pytest.raises(ValueError, match="choose one of offline, llm"):
        run_synth(workspace, n_paths=2, provider="gpt")
