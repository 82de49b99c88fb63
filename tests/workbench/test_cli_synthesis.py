"""The sandbox and synthesis commands as a user runs them: `doctor` piped into a narrow
terminal, `synth` arguments, and a resumed run's summary."""
from __future__ import annotations

import json

import pytest

from pipeline.verify import failures
from tests.helpers import cli
from workbench.models import CheckResult, TaskRecord
from workbench.store import tasks as store

LONG_IMAGE = "registry.example.com/some-team/a-base-image-name-far-longer-than-forty-columns:2026-12-01"


@pytest.mark.parametrize("env", [{"WORKBENCH_BASE_IMAGE": LONG_IMAGE},
                                 {"DOCKER_HOST": "unix:///nonexistent/docker.sock"}], ids=["long-image", "no-engine"])
def test_doctor_piped_to_a_narrow_terminal_cuts_nothing(env, monkeypatch):
    """A table cut at the terminal's width left `scripts/setup-harbo…`: every detail and
    every fix must come out whole, each on one line, however narrow the terminal."""
    from workbench.sandbox.doctor import diagnose
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    expected = diagnose()
    r = cli("doctor", env={**env, "COLUMNS": "40", "TERM": "dumb"})   # stdout is a pipe here
    lines = r.stdout.splitlines()
    assert r.returncode == (0 if all(f.ok or not f.required for f in expected) else 1), r.stdout + r.stderr
    for f in expected:
        assert any(f.name in line and f.state in line and line.rstrip().endswith(f.detail) for line in lines), \
            (f, r.stdout)
        if not f.ok:
            assert any(line.strip() == f"fix: {f.fix}" for line in lines), (f.fix, r.stdout)
    assert "…" not in r.stdout
    shown = [f for f in expected if f.name in ("base image", "Docker engine") and not f.ok]
    assert shown, "each case is meant to show one long finding"


def test_synth_refuses_paths_longer_than_the_synthesizer_composes(tmp_path):
    r = cli("synth", "--workspace", str(tmp_path / "ws"), "--max-len", "7")
    assert r.returncode == 2 and "--max-len 7: the synthesizer composes at most 5 steps" in r.stderr
    r = cli("synth", "--workspace", str(tmp_path / "ws"), "--min-len", "4", "--max-len", "3")
    assert r.returncode == 2 and "need 1 <= --min-len <= --max-len, got 4 and 3" in r.stderr


def test_synth_llm_without_an_endpoint_says_how_to_set_one(tmp_path):
    """No endpoint: refused with the advice before the engine is asked and before a run is recorded."""
    from workbench.workspace import Workspace
    root = tmp_path / "ws"
    r = cli("synth", "--workspace", str(root), "--provider", "llm", "--budget-usd", "1",
            env={"DOCKER_HOST": "unix:///nonexistent/docker.sock", "COLUMNS": "40"})
    text = " ".join(r.stderr.split())
    assert r.returncode == 1, r.stdout + r.stderr
    assert "provider 'llm' needs an LLM endpoint: set WORKBENCH_LLM_BASE_URL" in text and "Settings page" in text
    assert "Docker" not in text                             # the engine was never asked
    assert store.runs(Workspace.open(root).db).empty


@pytest.mark.parametrize("value, message", [("-1", "must be 0 or more, got -1"), ("nan", "must be 0 or more"),
                                            ("two", "not a number of dollars: 'two'")])
def test_budget_usd_must_be_dollars(tmp_path, value, message):
    r = cli("synth", "--workspace", str(tmp_path / "ws"), "--provider", "llm", "--budget-usd", value)
    assert r.returncode == 2 and "--budget-usd" in r.stderr and message in r.stderr, r.stderr


def _finished_run(ws, concurrency: int) -> str:
    """A cancelled run whose four paths are all done: two accepted tasks that read the same,
    one rejected, one whose synthesis failed. Resuming it has nothing left to do."""
    run_id = "synth-prepared"
    store.create_run(ws.db, run_id, "random-walk", 4, 0, "offline", concurrency, None)
    store.attach_paths(ws.db, run_id, "batch-x", ["p1", "p2", "p3", "p4"])
    for i, (key, ok) in enumerate([("K", True), ("K", True), ("L", False)], 1):
        store.save_task(ws.db, TaskRecord(
            task_id=f"t{i}", name=f"workbench/task-{i}", path_id=f"p{i}", category="git", difficulty="easy",
            n_steps=2, recipes=["a", "b"], skill_ids=[], scenario_ids=[], bundle_dir=f"tasks/t{i}",
            bundle_hash="h"), near_dup_key=key)
        checks = [CheckResult(name="build", passed=True), CheckResult(name="oracle", passed=ok, reason="r")]
        store.save_verification(ws.db, f"t{i}", checks, None, run_id, f"p{i}", verdict=failures.verdict(checks),
                                failed_check=failures.first_failed(checks))
    store.set_path_stage(ws.db, run_id, "p4", "failed", error="synthesis failed: x")
    store.set_run_status(ws.db, run_id, "cancelled", "stopped")
    return run_id


@pytest.mark.docker
def test_resume_counts_the_whole_run_and_keeps_its_concurrency(workspace):
    """A resumed run reported only what the resumed part did ("5 accepted" of 29), and the
    CLI's default concurrency always replaced the run's own."""
    run_id = _finished_run(workspace, concurrency=1)
    ws = str(workspace.root)
    r = cli("synth", "--workspace", ws, "--resume", "--json")
    assert r.returncode == 0, r.stdout + r.stderr
    report = json.loads(r.stdout)
    assert report["run_id"] == run_id and report["status"] == "finished"
    assert (report["sampled"], report["verified"], report["accepted"], report["rejected"], report["failed"]) \
        == (4, 3, 2, 1, 1)
    assert report["reasons"] == {"oracle": 1} and report["concurrency"] == 1
    assert report["provider"] == "offline" and report["cost_usd"] == 0.0      # nothing left to do: nothing spent
    assert report["timings"] == {"llm_s": 0.0, "docker_s": 0.0, "total_s": 0.0}
    assert report["near_duplicates"] == [{"task_id": "t2", "name": "workbench/task-2", "duplicate_of": "t1"}]
    assert store.get_run(workspace.db, run_id)["message"].startswith("2 accepted, 1 rejected, 1 failed")

    r = cli("synth", "--workspace", ws, "--resume", "--run-id", run_id, "--concurrency", "3")
    assert r.returncode == 0, r.stdout + r.stderr
    text = " ".join(r.stdout.split())
    assert f"Run {run_id} finished: 4 paths → 3 tasks, 2 accepted (50% of sampled), 1 rejected, 1 failed" in text
    assert "1 near-duplicate task(s)" in text and "t2 workbench/task-2 repeats t1" in text
    r = cli("synth", "--workspace", ws, "--resume", "--run-id", run_id, "--json", "--concurrency", "3")
    assert json.loads(r.stdout)["concurrency"] == 3       # the user's word wins over the stored one


@pytest.mark.docker
def test_synth_says_why_each_failed_path_gave_no_task(workspace):
    """The report said "1 failed" and nothing more: on the dev corpus half the paths gave no
    task ("no offline recipe for …") and only the dashboard said why."""
    run_id = _finished_run(workspace, concurrency=1)
    store.set_path_stage(workspace.db, run_id, "p4", "failed",
                         error="no offline recipe for resume-tailoring: needs state kinds [markdown-doc]")
    r = cli("synth", "--workspace", str(workspace.root), "--resume", env={"COLUMNS": "40"})
    assert r.returncode == 0, r.stdout + r.stderr
    lines = [line.strip() for line in r.stdout.splitlines()]
    assert "1 path(s) gave no task:" in lines
    assert "p4: no offline recipe for resume-tailoring: needs state kinds [markdown-doc]" in lines


@pytest.mark.parametrize("args, message", [
    (["--executor", "ray", "--provider", "llm"], "--executor ray runs the offline synthesizer only"),
    (["--ray-address", "127.0.0.1:6379"], "--ray-address '127.0.0.1:6379' is only for --executor ray")])
def test_synth_refuses_an_executor_it_cannot_use_before_anything_is_recorded(tmp_path, args, message):
    """The llm provider's client (call log, cache, budget) lives in the driver: not on Ray yet."""
    from workbench.workspace import Workspace
    root = tmp_path / "ws"
    r = cli("synth", "--workspace", str(root), *args, env={"DOCKER_HOST": "unix:///nonexistent/docker.sock"})
    assert r.returncode == 1 and message in " ".join(r.stderr.split()), r.stdout + r.stderr
    assert "Docker" not in r.stderr                         # the engine was never asked
    assert store.runs(Workspace.open(root).db).empty


@pytest.mark.docker
def test_synth_on_a_ray_address_where_nothing_listens_says_so_on_the_launched_run(workspace):
    """Launched from the page with a run id: the refusal is the run's message, not an 'interrupted' run."""
    store.create_run(workspace.db, "synth-noray", "inverse-frequency", 2, 0, "offline", 1, None)
    r = cli("synth", "--workspace", str(workspace.root), "--paths", "2", "--run-id", "synth-noray",
            "--executor", "ray", "--ray-address", "127.0.0.1:9", "--no-progress", timeout=120)
    assert r.returncode == 1, r.stdout + r.stderr
    run = store.get_run(workspace.db, "synth-noray")
    assert run["status"] == "failed" and "127.0.0.1:9" in run["message"], run


def test_the_cost_line_of_a_run_answered_by_a_test_double_says_so(workspace):
    """Issue 22.4: `workbench synth --provider llm` against the replay server printed "LLM cost $…"
    at the made-up demo price as if a model's."""
    from workbench.cli_synthesis import _double_cost
    from workbench.llm.call_log import CallLog, CallRecord
    store.create_run(workspace.db, "s-double", "random-walk", 1, 0, "llm", 1, None)
    store.create_run(workspace.db, "s-real", "random-walk", 1, 0, "llm", 1, None)
    log = CallLog(workspace.db)
    for run, model in (("s-double", "scripted-replay (demo price)"), ("s-real", "gpt-x")):
        log.add(CallRecord(stage="synth_plan", item="t", provider="openai-compatible", model=model, attempt=1,
                           latency_ms=1, prompt_tokens=1, completion_tokens=1, cost_usd=0.1, batch_id=run))
    log.flush()
    note = _double_cost(workspace, "s-double")
    assert note.startswith(" by scripted-replay (demo price, test double): a test double")
    assert _double_cost(workspace, "s-real") == "" and _double_cost(workspace, "nope") == ""
