"""`import harbor-job`: a real Harbor job (Harbor's oracle and nop on two exported demo tasks)
imported as rollouts of the matching tasks — oracle reward 1, nop 0, per-test outcomes from
the CTRF report our exported test.sh writes — and importing twice adds nothing. A hand-made
job folder covers the rest: matching by name and by the export's folder, unmatched trials,
malformed files and links reported with the trial and what was wrong, never a crash."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from pipeline.export.harbor import export_harbor
from pipeline.export.harbor_job_import import harbor_digest, import_harbor_job
from pipeline.export.harbor_runner import ensure_harbor, run_harbor_job
from pipeline.synth.batch import run_synth
from tests.helpers import sum_bundle
from tests.pipeline.export.test_harbor_export import add_task
from workbench.sandbox.bundle import read_bundle
from workbench.store import rollouts as ro_store
from workbench.store import tasks as task_store


def _count(ws, table: str) -> int:
    with ws.db.read() as con:
        return con.execute(f"SELECT count(*) FROM {table}").fetchone()[0]


@pytest.mark.docker
@pytest.mark.slow
def test_a_real_harbor_job_imports_as_rollouts_of_the_exported_tasks(graph_workspace, tmp_path):
    ensure_harbor()
    ws = graph_workspace
    report = run_synth(ws, n_paths=3, seed=5, concurrency=2)
    accepted = task_store.accepted_tasks(ws.db)
    assert len(accepted) >= 2, report.as_dict()
    chosen = list(accepted.task_id[:2])
    export = export_harbor(ws, tmp_path / "tasks", task_ids=chosen)
    assert len(export.exported) == 2
    job = run_harbor_job(tmp_path / "tasks", ["oracle", "nop"], n_concurrent=2, jobs_dir=tmp_path / "jobs",
                         timeout_s=600, job_name="demo-job")
    assert job.errors() == {}, job.errors()

    imported = import_harbor_job(ws, job.job_dir)

    assert imported.unmatched == [] and imported.malformed == [], imported
    assert len(imported.imported) == 4 and {t.matched_by for t in imported.imported} == {"digest"}
    frame = ro_store.rollouts_frame(ws.db)
    assert sorted(frame.task_id) == sorted(chosen * 2)
    assert set(frame.source) == {"harbor"} and set(frame.agent) == {"harbor:oracle", "harbor:nop"}
    by_agent = {a: g for a, g in frame.groupby("agent")}
    oracle, nop = by_agent["harbor:oracle"], by_agent["harbor:nop"]
    assert list(oracle.reward) == [1.0, 1.0] and oracle.passed.all()
    assert list(nop.reward) == [0.0, 0.0] and not nop.passed.any() and set(nop.failure_class) == {"test_assertion"}
    assert all("task's own solution" in label for label in oracle.agent_label)
    tests = ro_store.test_outcomes(ws.db)
    for tid in chosen:
        n_tests = read_bundle(ws.root / accepted.set_index("task_id").loc[tid, "bundle_dir"]).text(
            "tests/test_outputs.py").count("\ndef test_")
        mine = tests[tests.task_id == tid]
        assert (mine[mine.agent == "harbor:oracle"].outcome == "passed").sum() == n_tests > 0
        assert (mine[mine.agent == "harbor:nop"].outcome == "failed").sum() >= 1
    for rec in frame.to_dict("records"):
        details = json.loads(rec["details"])
        assert details["tests_from"] == "ctrf.json" and rec["n_tests"] > 0     # per-test results from CTRF
        folder = ws.root / rec["folder"]
        assert (folder / "verifier" / "ctrf.json").exists() and (folder / "result.json").exists()
        assert rec["run_id"].startswith("harbor-") and rec["model"] is None
    runs = ro_store.runs(ws.db)
    assert set(runs.agent) == {"harbor:oracle", "harbor:nop"} and set(runs.status) == {"done"}

    n_rollouts, n_tests = _count(ws, "rollouts"), _count(ws, "rollout_tests")
    again = import_harbor_job(ws, tmp_path / "jobs")        # the jobs folder this time: same trials
    assert len(again.imported) == 4 and all(t.again for t in again.imported)
    assert (_count(ws, "rollouts"), _count(ws, "rollout_tests")) == (n_rollouts, n_tests)
    left = subprocess.run(["docker", "ps", "-a", "-q", "--filter", "label=com.docker.compose.project"],
                          capture_output=True, text=True, check=True).stdout.split()
    assert left == []


# --- a hand-made job folder, shaped as harbor 0.26 writes one ------------------------------------

CTRF_FAIL = {"results": {"tool": {"name": "pytest"}, "summary": {"tests": 1, "passed": 0, "failed": 1},
                         "tests": [{"name": "test_sum", "status": "failed", "duration": 2, "message": "assert '' == '6'"}]}}
CTRF_PASS = {"results": {"tool": {"name": "pytest"}, "summary": {"tests": 1, "passed": 1, "failed": 0},
                         "tests": [{"name": "test_sum", "status": "passed", "duration": 2}]}}


def _trial(job: Path, name: str, *, task_name: str, folder: str, agent: str = "terminus-2",
           digest: str | None = None, reward=1.0, ctrf=CTRF_PASS, exception: str | None = None,
           model: str | None = "openai/gpt-4o") -> Path:
    d = job / name
    (d / "agent").mkdir(parents=True)
    (d / "verifier").mkdir()
    result = {"schema_version": 1, "id": f"uuid-{name}", "task_name": task_name, "trial_name": name,
              "task_id": {"path": f"/somewhere/tasks/{folder}"}, "config": {"job_id": "job-1234abcd",
                                                                           "agent": {"name": agent, "model_name": model}},
              "agent_info": {"name": agent, "version": "1", "model_info": {"name": "gpt-4o", "provider": "openai"}},
              "agent_result": {"n_input_tokens": 1200, "n_output_tokens": 300, "cost_usd": 0.01},
              "verifier_result": {"rewards": {"reward": reward}} if reward is not None else None,
              "exception_info": {"exception_type": exception, "exception_message": "took too long"} if exception else None,
              "started_at": "2026-12-01T10:00:00Z", "finished_at": "2026-12-01T10:01:00Z",
              "agent_execution": {"started_at": "2026-12-01T10:00:05Z", "finished_at": "2026-12-01T10:00:50Z"}}
    (d / "result.json").write_text(json.dumps(result))
    if digest:
        (d / "lock.json").write_text(json.dumps({"schema_version": 2, "task": {"name": folder,
                                                                            "digest": f"sha256:{digest}"}}))
    if ctrf is not None:
        (d / "verifier" / "ctrf.json").write_text(json.dumps(ctrf))
    (d / "verifier" / "reward.txt").write_text(f"{reward}\n")
    (d / "trial.log").write_text("trial log\n")
    return d


def _trajectory(model: str) -> dict:
    return {"schema_version": "ATIF-v1.6", "session_id": "s1", "agent": {"name": "terminus-2", "version": "2",
                                                                        "model_name": model},
            "steps": [{"step_id": 1, "source": "user", "message": "Sum the numbers."},
                      {"step_id": 2, "source": "agent", "message": '{"analysis": "sum", "commands": []}',
                       "model_name": model}]}


@pytest.fixture
def hand_job(workspace, tmp_path):
    ws = workspace
    sum_a = sum_bundle(name="workbench/sum-a")
    add_task(ws, "t-a", sum_a, name="workbench/sum-a")
    add_task(ws, "t-twin1", sum_bundle(name="workbench/twin", numbers="1\n"), name="workbench/twin")
    add_task(ws, "t-twin2", sum_bundle(name="workbench/twin", numbers="2\n"), name="workbench/twin")
    add_task(ws, "t-old", sum_bundle(name="workbench/old"), name="workbench/old")
    job = tmp_path / "jobs" / "my-job"
    job.mkdir(parents=True)
    (job / "result.json").write_text(json.dumps({"id": "job-1234abcd", "n_total_trials": 8, "stats": {}}))
    good = _trial(job, "sum-a__good1", task_name="workbench/sum-a", folder="sum-a", digest=harbor_digest(sum_a))
    (good / "agent" / "trajectory.json").write_text(json.dumps(_trajectory("gpt-4o")))
    _trial(job, "sum-a__fail1", task_name="workbench/sum-a", folder="sum-a", reward=0.0, ctrf=CTRF_FAIL,
           digest=harbor_digest(sum_a))
    _trial(job, "sum-a__slow1", task_name="workbench/sum-a", folder="sum-a", reward=0.0, ctrf=CTRF_FAIL,
           exception="AgentTimeoutError")
    _trial(job, "twin-t-twin2__x1", task_name="workbench/twin", folder="twin-t-twin2")    # no lock: by folder
    _trial(job, "old__changed", task_name="workbench/old", folder="old", digest="ab" * 32)  # edited since export
    _trial(job, "other__x", task_name="someone/else", folder="else")
    bad = job / "sum-a__garbage"
    bad.mkdir()
    (bad / "result.json").write_text("{not json")
    (bad / "trial.log").write_text("")
    unfinished = job / "sum-a__unfinished"
    unfinished.mkdir()
    (unfinished / "config.json").write_text(json.dumps({"trial_name": "sum-a__unfinished"}))
    linked = _trial(job, "sum-a__linked", task_name="workbench/sum-a", folder="sum-a", digest=harbor_digest(sum_a))
    os.symlink("/etc/passwd", linked / "agent" / "trajectory.json")
    os.symlink("/etc/hostname", linked / "verifier" / "junit.xml")
    (linked / "verifier" / "evil\nname.txt").write_text("a name no rollout folder may hold")
    return ws, job


def test_a_hand_made_job_matches_reports_and_never_crashes(hand_job):
    ws, job = hand_job
    report = import_harbor_job(ws, job)

    got = {t.trial.split("/")[-1]: t for t in report.imported}
    assert set(got) == {"sum-a__good1", "sum-a__fail1", "sum-a__slow1", "twin-t-twin2__x1", "sum-a__linked"}
    assert got["sum-a__good1"].matched_by == "digest" and got["sum-a__slow1"].matched_by == "name"
    assert got["twin-t-twin2__x1"].task_id == "t-twin2" and got["twin-t-twin2__x1"].matched_by == "folder"
    unmatched = {p.trial.split("/")[-1]: p.what for p in report.unmatched}
    assert set(unmatched) == {"old__changed", "other__x"}
    assert "no task here has the content Harbor ran" in unmatched["old__changed"]
    assert "t-old has that name but other content" in unmatched["old__changed"]
    assert "no task named 'someone/else'" in unmatched["other__x"]
    malformed = {p.trial.split("/")[-1]: p.what for p in report.malformed}
    assert "not JSON" in malformed["sum-a__garbage"] and "no result.json" in malformed["sum-a__unfinished"]
    notes = [p.what for p in report.notes if p.trial.endswith("sum-a__linked")]
    assert any("trajectory.json is a link" in n for n in notes) and any("junit.xml" in n for n in notes)
    assert any("evil" in n and "control characters" in n for n in notes)

    rows = {r["rollout_id"]: r for r in ro_store.rollouts_frame(ws.db).to_dict("records")}
    good = rows[got["sum-a__good1"].rollout_id]
    assert (good["agent"], good["model"], good["passed"], good["turns"]) == ("harbor:terminus-2", "openai/gpt-4o", True, 1)
    assert good["prompt_tokens"] == 1200 and good["cost_usd"] == 0.01 and good["agent_s"] == 45.0
    assert (ws.root / good["folder"] / "trajectory.json").exists()
    slow = rows[got["sum-a__slow1"].rollout_id]
    assert slow["failure_class"] == "timeout" and "AgentTimeoutError" in slow["error"]
    fail = rows[got["sum-a__fail1"].rollout_id]
    assert fail["failure_class"] == "test_assertion" and fail["n_failed"] == 1
    linked = rows[got["sum-a__linked"].rollout_id]
    assert not (ws.root / linked["folder"] / "trajectory.json").exists()
    assert "root:" not in (ws.root / linked["folder"] / "agent.log").read_text()
    samples = sorted(r["sample"] for r in rows.values() if r["task_id"] == "t-a")
    assert samples == [0, 1, 2, 3]      # one run (job, agent), numbered within the task
    assert "2 trial(s) matched no task" in report.summary() and "2 trial(s) could not be read" in report.summary()

    before = _count(ws, "rollouts")
    again = import_harbor_job(ws, job)
    assert _count(ws, "rollouts") == before and all(t.again for t in again.imported)


def test_a_trajectory_our_models_reject_is_left_out_with_a_note(hand_job):
    ws, job = hand_job
    (job / "sum-a__good1" / "agent" / "trajectory.json").write_text('{"schema_version": "ATIF-v1.6", "steps": 3}')
    report = import_harbor_job(ws, job)
    notes = [p.what for p in report.notes if p.trial.endswith("sum-a__good1")]
    assert any("trajectory.json left out" in n and "not valid ATIF" in n for n in notes)
    assert any(t.trial.endswith("sum-a__good1") for t in report.imported)


def test_not_a_job_folder_is_reported(workspace, tmp_path):
    report = import_harbor_job(workspace, tmp_path / "missing")
    assert report.imported == [] and "is not a folder" in report.malformed[0].what
    (tmp_path / "empty" / "sub").mkdir(parents=True)
    report = import_harbor_job(workspace, tmp_path / "empty")
    assert "no Harbor trial folders" in report.malformed[0].what
    shutil.rmtree(tmp_path / "empty")


def test_imported_trials_export_as_rows_named_as_harbor_named_them(hand_job, tmp_path):
    from pipeline.export.trajectories import export_trajectories
    ws, job = hand_job
    import_harbor_job(ws, job)
    report = export_trajectories(ws, tmp_path / "sft", fmt="chat-jsonl")
    rows = [json.loads(x) for x in (tmp_path / "sft" / "conversations.jsonl").read_text().splitlines()]
    assert len(rows) == 1 and report.no_trajectory                   # only good1 brought a trajectory
    row = rows[0]
    assert (row["agent"], row["model"], row["model_provider"]) == ("harbor:terminus-2", "openai/gpt-4o", "openai")
    assert (row["trial_name"], row["task"], row["task_id"]) == ("sum-a__good1", "workbench/sum-a", "t-a")
    assert row["run_id"] == "harbor-job-1234-terminus-2-openai-gpt-4o" and row["date"] == "2026-12-01T10:00:00Z"
    assert row["conversations"] == [{"role": "user", "content": "Sum the numbers."},
                                    {"role": "assistant", "content": '{"analysis": "sum", "commands": []}'}]
