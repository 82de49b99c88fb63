"""A synthesis run's status, label, progress, runs table and resume command."""
from __future__ import annotations

from datetime import datetime, timedelta

import pandas as pd

from analysis import synth_runs as sr
from workbench.store.tasks import FUNNEL


def _run(**kw) -> dict:
    return {"run_id": "synth-1", "status": "running", "pid": 123, "n_paths": 10, "sampler": "random-walk",
            "created_at": datetime(2026, 1, 1, 12, 0, 0), **kw}


def test_effective_status_reads_dead_processes_as_interrupted():
    now = datetime(2026, 1, 1, 12, 5, 0)
    assert sr.effective_status(_run(), alive=True, now=now) == "running"
    assert sr.effective_status(_run(), alive=False, now=now) == "interrupted"
    assert sr.effective_status(_run(status="finished"), alive=False, now=now) == "finished"
    # no process id recorded yet: starting for a few seconds, then interrupted
    assert sr.effective_status(_run(pid=float("nan")), alive=False,
                               now=datetime(2026, 1, 1, 12, 0, 5)) == "starting"
    assert sr.effective_status(_run(pid=None), alive=False, now=now) == "interrupted"
    assert sr.pid_of(_run(pid=float("nan"))) is None and sr.pid_of(_run(pid=123.0)) == 123
    assert sr.resume_command("synth-1") == "workbench synth --resume --run-id synth-1"
    assert sr.resume_command("synth-1", "/w s") == "workbench synth --workspace '/w s' --resume --run-id synth-1"


def test_run_progress_fractions():
    run = _run()
    before = sr.run_progress({}, dict.fromkeys(FUNNEL, 0), run)
    assert [p["fraction"] for p in before] == [0.0] * 5
    assert before[0]["text"] == "paths sampled: 0 / 10"
    stages = {"sampled": 4, "synthesized": 2, "verified": 3, "failed": 1}
    p = {r["stage"]: r for r in sr.run_progress(stages, {"accepted": 2}, run)}
    assert p["sampled"]["fraction"] == 1.0 and p["sampled"]["done"] == 10
    assert (p["synthesized"]["done"], p["synthesized"]["total"], p["synthesized"]["fraction"]) == (6, 10, 0.6)
    assert (p["verified"]["done"], p["verified"]["fraction"]) == (4, 0.4)
    assert (p["accepted"]["done"], p["accepted"]["fraction"]) == (2, 0.2)
    assert p["failed"]["text"] == "synthesis failures: 1 / 10"
    # a sampler that drew fewer paths than asked: progress is over the paths it drew
    short = {r["stage"]: r for r in sr.run_progress({"verified": 5, "failed": 1}, {"accepted": 5}, run)}
    assert short["verified"]["fraction"] == 1.0 and short["verified"]["total"] == 6


def test_runs_table_and_default_run():
    t0 = datetime(2026, 1, 1, 12, 0, 0)
    runs = pd.DataFrame([_run(run_id="a", status="finished", created_at=t0),
                         _run(run_id="b", status="running", created_at=t0 + timedelta(minutes=1)),
                         _run(run_id="c", status="running", created_at=t0 + timedelta(minutes=2))])
    for col in ("provider", "concurrency", "seed", "finished_at", "message"):
        runs[col] = None
    statuses = {"a": "finished", "b": "running", "c": "interrupted"}
    table = sr.runs_table(runs, statuses)
    assert table["run_id"].tolist() == ["c", "b", "a"] and table["status"].tolist() == ["interrupted", "running",
                                                                                       "finished"]
    assert sr.default_run(runs, statuses) == "b"  # the newest live run beats a newer dead one
    assert sr.default_run(runs, {"a": "finished", "b": "failed", "c": "interrupted"}) == "c"
    assert sr.default_run(runs.iloc[0:0], {}) is None and sr.runs_table(runs.iloc[0:0], {}).empty
    assert sr.run_label(runs.iloc[0]) == "a · random-walk · 10 paths · 2026-01-01 12:00:00"


def test_the_no_task_note_fits_the_runs_synthesizer():
    assert "no offline recipe honours" in sr.failures_note("offline")
    llm = sr.failures_note("llm")
    assert "recipe" not in llm and "never fit its path" in llm and "--resume" in llm


def test_a_run_made_nothing_only_when_every_path_failed_before_a_task_existed():
    assert sr.made_nothing({"sampled": 0, "synthesized": 0, "verified": 0, "failed": 3})
    assert not sr.made_nothing({"sampled": 0, "synthesized": 0, "verified": 1, "failed": 2})
    assert not sr.made_nothing({"sampled": 2, "synthesized": 0, "verified": 0, "failed": 1})   # still going
    assert not sr.made_nothing({"sampled": 0, "synthesized": 0, "verified": 0, "failed": 0})   # no paths yet


def test_a_run_answered_by_a_test_double_says_so_in_its_provider():
    """Issue 22.4: the demo's scripted replay run read as provider `llm` on the Synthesis page."""
    runs = pd.DataFrame([_run(run_id="demo", provider="llm", llm_model="scripted-replay (demo price)"),
                         _run(run_id="real", provider="llm", llm_model="gpt-x"),
                         _run(run_id="off", provider="offline", llm_model=None)])
    for col in ("concurrency", "seed", "finished_at", "message"):
        runs[col] = None
    by = sr.runs_table(runs, {}).set_index("run_id")["provider"]
    assert by.to_dict() == {"demo": "llm · scripted-replay (demo price, test double)", "real": "llm · gpt-x",
                            "off": "offline"}
