"""analysis/rollout_runs.py: the launch form's parameters, the batches table, progress and the
status notes of the Rollouts page."""
from __future__ import annotations

from datetime import datetime

import pandas as pd

from analysis import rollout_runs as rv
from pipeline.agents.protocol import AGENT_LABELS


def test_form_params_follow_the_agent_and_the_endpoint():
    nop = rv.form_params(agent="nop", task_ids=["t1"], k=2, concurrency=3, temperature=0.9, model="m",
                         replay="oracle", online=True)
    assert (nop.agent, nop.task_ids, nop.k, nop.concurrency, nop.temperature, nop.model, nop.replay) == \
        ("nop", ("t1",), 2, 3, 0.0, None, None)
    # no endpoint: terminus-2 can only play the scripted replay model
    offline = rv.form_params(agent="terminus-2", task_ids=[], k=3, concurrency=2, temperature=0.7, model=None,
                             replay=None, online=False)
    assert (offline.replay, offline.model, offline.temperature) == (rv.BEHAVIOURS[0], None, 0.7)
    online = rv.form_params(agent="terminus-2", task_ids=[], k=3, concurrency=2, temperature=0.0, model="",
                            replay=None, online=True, budget_usd=1.5)
    assert (online.replay, online.model, online.budget_usd) == (None, None, 1.5)
    double = rv.form_params(agent="terminus-2", task_ids=[], k=3, concurrency=2, temperature=0.0, model="gpt",
                            replay="floods", online=True, budget_usd=1.5)
    assert (double.replay, double.model, double.budget_usd) == ("floods", None, None)


def _run(run_id, status="done", counts=None, n_done=0, n_passed=0, agent="ablation", model=None, **more):
    params = {"counts": counts} if counts is not None else {}
    return {"run_id": run_id, "agent": agent, "model": model, "k": 3, "concurrency": 2, "n_tasks": 2,
            "params": params, "status": status, "pid": None, "message": more.get("message"),
            "created_at": more.get("created_at", datetime(2026, 12, 1, 10, 0)), "finished_at": None,
            "n_done": n_done, "n_passed": n_passed}


def test_the_runs_table_is_newest_first_with_labels_and_stored_of_total():
    runs = pd.DataFrame([_run("r-old", counts={"total": 6, "done": 6}, n_done=6, n_passed=2),
                         _run("r-new", agent="terminus-2", model="m", n_done=1, n_passed=1,
                              created_at=datetime(2026, 12, 1, 11, 0))])
    table = rv.runs_table(runs, {"r-new": "interrupted"})
    assert table["run_id"].tolist() == ["r-new", "r-old"]
    assert table["status"].tolist() == ["interrupted", "done"]
    assert table["rollouts"].tolist() == ["1", "6 / 6"] and table["passed"].tolist() == [1, 2]
    assert table["agent"].tolist() == [AGENT_LABELS["terminus-2"], AGENT_LABELS["ablation"]]
    assert table["model"].tolist() == ["m", "—"]
    assert list(rv.runs_table(runs.iloc[0:0], {}).columns) == rv.TABLE_COLUMNS
    assert rv.run_label(runs.iloc[1].to_dict()) == "r-new · terminus-2 · m · k=3 · 2026-12-01 11:00:00"
    assert rv.run_label(runs.iloc[0].to_dict()) == "r-old · ablation · k=3 · 2026-12-01 10:00:00"


def test_a_batch_against_the_scripted_replay_model_says_so_in_its_agent_and_model():
    """Issue 22.7: the model column cut "scripted-terminus:oracle (test double)" to "scripted…"; the
    agent column now says the run played a test double, and the model is labelled by the one rule."""
    runs = pd.DataFrame([_run("r-double", agent="terminus-2", model="scripted-terminus:floods (test double)"),
                         _run("r-old", agent="terminus-2", model="openai/scripted-terminus")])
    table = rv.runs_table(runs, {})
    assert all("test double" in a and "LLM agent" not in a for a in table["agent"])
    assert table["model"].tolist() == ["scripted-terminus:floods (test double)",
                                       "openai/scripted-terminus (test double)"]
    assert "openai/scripted-terminus (test double)" in rv.run_label(runs.iloc[1].to_dict())


def test_progress_from_the_runs_counts_and_none_before_it_counted():
    run = _run("r", counts={"total": 6, "done": 3, "skipped": 1, "passed": 1, "failed": 1})
    bars = rv.run_progress(run)
    assert [b["text"] for b in bars] == ["rollouts finished: 3 / 6 (1 already stored, skipped)", "passed: 1 of 2 run"]
    assert [b["fraction"] for b in bars] == [0.5, 0.5]
    assert rv.run_progress(_run("r")) == []
    as_text = _run("r") | {"params": '{"counts": {"total": 2, "done": 2, "passed": 2}}'}   # JSON as the store keeps it
    assert rv.run_progress(as_text)[1]["text"] == "passed: 2 of 2 run"


def test_status_notes_say_what_happened_and_how_to_resume():
    assert rv.status_note("done", _run("r", message="4 rollouts, 3 passed"))[0] == "success"
    level, text = rv.status_note("cancelled", _run("r1", message="stopped by the user"), "/ws")
    assert level == "warning" and "stopped by the user" in text and "workbench rollout --workspace /ws --resume r1" in text
    assert rv.status_note("failed", _run("r1"))[0] == "error"
    assert rv.status_note("pending", _run("r1"))[1].startswith("Recorded, not started yet")
    assert rv.status_note("running", _run("r1"))[1].startswith("Running (process …)")
    assert rv.resume_command("r9") == "workbench rollout --resume r9"
