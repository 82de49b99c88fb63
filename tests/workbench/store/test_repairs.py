"""Repair attempts and task cost in a real DuckDB file: attempts replaced per task, the repair
count and the cost from llm_calls on the task, a bad attempt refused with where and why and
nothing stored lost, the verdict x repairs counts per run."""
from __future__ import annotations

import pandas as pd
import pytest

from pipeline.repair.attempts import RepairAttempt
from workbench.llm.call_log import CallLog, CallRecord
from workbench.models import TaskRecord
from workbench.store import repairs
from workbench.store import tasks as task_store
from workbench.store.migrations import current_version

DIFF = "--- a/environment/Dockerfile\n+++ b/environment/Dockerfile\n@@ -1 +1 @@\n-FROM ubuntu\n+FROM workbench-base\n"


def _task(ws, task_id: str, provider: str = "llm", verdict: str | None = None, run_id: str | None = None) -> None:
    task_store.save_task(ws.db, TaskRecord(task_id=task_id, name=f"skillgraph/{task_id}", path_id=f"p-{task_id}",
                                           category="text-processing", difficulty="easy", n_steps=2, recipes=[],
                                           skill_ids=["s1", "s2"], scenario_ids=[], provider=provider,
                                           bundle_dir=f"tasks/{task_id}", bundle_hash="h"))
    if run_id:
        task_store.attach_paths(ws.db, run_id, "b", [f"p-{task_id}"])
        task_store.set_path_stage(ws.db, run_id, f"p-{task_id}", "synthesized", task_id)
    if verdict:
        with ws.db.write() as con:
            con.execute("UPDATE tasks SET verdict = ? WHERE task_id = ?", [verdict, task_id])


def _calls(ws, item: str, *stages_costs: tuple[str, float]) -> None:
    log = CallLog(ws.db)
    for stage, cost in stages_costs:
        log.add(CallRecord(stage=stage, item=item, provider="openai-compatible", model="m", attempt=1,
                           latency_ms=10.0, prompt_tokens=100, completion_tokens=20, cost_usd=cost))
    log.flush()


def _attempt(n: int, artifact: str = "environment", **kw) -> dict:
    base = dict(n=n, artifact=artifact, check="build", reason="pull access denied for ubuntu", diff=DIFF,
                prompt_tokens=300, completion_tokens=50, cost_usd=0.002, outcome="fixed",
                evidence=["Step 1/3 : FROM ubuntu", "pull access denied"])
    base.update(kw)
    return RepairAttempt(**base).model_dump()


def test_migration_7_adds_the_attempts_table_and_the_task_columns(workspace):
    assert current_version(workspace.db) >= 7
    with workspace.db.read() as con:
        cols = {r[0] for r in con.execute("SELECT column_name FROM information_schema.columns "
                                          "WHERE table_name = 'tasks'").fetchall()}
        assert {"repairs", "cost_usd"} <= cols
        assert con.execute("SELECT count(*) FROM task_attempts").fetchone()[0] == 0


def test_attempts_are_saved_in_order_and_set_repairs_and_cost(workspace):
    ws = workspace
    _task(ws, "t1")
    _calls(ws, "t1", ("synth_plan", 0.01), ("synth_environment", 0.02), ("synth_repair_environment", 0.002))
    _calls(ws, "other", ("synth_plan", 5.0))  # another task's calls do not count
    repairs.save_attempts(ws.db, "t1", [_attempt(2, "tests", check="oracle", outcome="fixed"),
                                        _attempt(1, outcome="moved_on")])
    df = repairs.attempts_for(ws.db, "t1")
    assert df["n"].tolist() == [1, 2] and df["artifact"].tolist() == ["environment", "tests"]
    assert df["check_name"].tolist() == ["build", "oracle"] and df["outcome"].tolist() == ["moved_on", "fixed"]
    assert df.iloc[0]["diff"] == DIFF and df.iloc[0]["evidence"] == ["Step 1/3 : FROM ubuntu", "pull access denied"]
    assert df.iloc[0]["prompt_tokens"] == 300 and df.iloc[0]["cost_usd"] == pytest.approx(0.002)
    row = task_store.tasks_frame(ws.db).set_index("task_id").loc["t1"]
    assert row["repairs"] == 2 and row["cost_usd"] == pytest.approx(0.032)
    # saved again (a resumed run re-made the task): replaced, not added
    repairs.save_attempts(ws.db, "t1", [_attempt(1)])
    assert repairs.attempts_for(ws.db, "t1")["n"].tolist() == [1]
    assert task_store.tasks_frame(ws.db).set_index("task_id").loc["t1", "repairs"] == 1
    # built right the first time: zero repairs, no rows
    repairs.save_attempts(ws.db, "t1", [])
    assert repairs.attempts_for(ws.db, "t1").empty
    assert task_store.tasks_frame(ws.db).set_index("task_id").loc["t1", "repairs"] == 0


def test_a_bad_attempt_is_refused_with_where_and_why_and_nothing_is_lost(workspace):
    ws = workspace
    _task(ws, "t1")
    repairs.save_attempts(ws.db, "t1", [_attempt(1)])
    bad = [_attempt(1), {**_attempt(2), "artifact": "dockerfile"}]
    with pytest.raises(repairs.AttemptError, match=r"task t1, attempt #2: artifact 'dockerfile' is not one of"):
        repairs.save_attempts(ws.db, "t1", bad)
    with pytest.raises(repairs.AttemptError, match=r"attempt #1: missing reason"):
        repairs.save_attempts(ws.db, "t1", [{**_attempt(1), "reason": ""}])
    with pytest.raises(repairs.AttemptError, match=r"attempt #1: n, tokens and cost must be numbers"):
        repairs.save_attempts(ws.db, "t1", [{**_attempt(1), "prompt_tokens": "many"}])
    with pytest.raises(repairs.AttemptError, match=r"attempt #1: evidence must be a list"):
        repairs.save_attempts(ws.db, "t1", [{**_attempt(1), "evidence": "one line"}])
    with pytest.raises(repairs.AttemptError, match=r"task t1: attempt numbers repeat"):
        repairs.save_attempts(ws.db, "t1", [_attempt(1), _attempt(1)])
    with pytest.raises(repairs.AttemptError, match=r"expected a dict"):
        repairs.save_attempts(ws.db, "t1", [RepairAttempt(**{k: v for k, v in _attempt(1).items()})])
    kept = repairs.attempts_for(ws.db, "t1")
    assert kept["n"].tolist() == [1] and kept.iloc[0]["reason"] == "pull access denied for ubuntu"
    assert task_store.tasks_frame(ws.db).set_index("task_id").loc["t1", "repairs"] == 1


def test_an_overlong_diff_is_cut_and_says_so(workspace):
    _task(workspace, "t1")
    repairs.save_attempts(workspace.db, "t1", [_attempt(1, diff="+x\n" * (repairs.DIFF_CAP // 2))])
    diff = repairs.attempts_for(workspace.db, "t1").iloc[0]["diff"]
    assert len(diff) < repairs.DIFF_CAP + 100 and diff.endswith("characters cut]\n")


def test_stage_costs_and_refresh_after_the_call_log_flushed(workspace):
    ws = workspace
    task_store.create_run(ws.db, "run1", "random-walk", 2, 0, "llm", 2, None)
    _task(ws, "t1", run_id="run1")
    _task(ws, "t2", run_id="run1")
    repairs.save_attempts(ws.db, "t1", [])  # before the client flushed: no calls stored yet
    assert pd.isna(task_store.tasks_frame(ws.db).set_index("task_id").loc["t1", "cost_usd"])
    _calls(ws, "t1", ("synth_plan", 0.25), ("synth_plan", 0.125), ("task_judge", 0.125))
    assert repairs.refresh_costs(ws.db, "run1") == 1  # t2 made no LLM call
    frame = task_store.tasks_frame(ws.db).set_index("task_id")
    assert frame.loc["t1", "cost_usd"] == pytest.approx(0.5)
    costs = repairs.stage_costs(ws.db, "t1")
    assert costs["stage"].tolist() == ["synth_plan", "task_judge"]
    assert costs["calls"].tolist() == [2, 1] and costs["prompt_tokens"].tolist() == [200, 100]
    assert costs["cost_usd"].tolist() == pytest.approx([0.375, 0.125])
    assert repairs.stage_costs(ws.db, "t2").empty


def test_repair_counts_by_provider_repairs_and_verdict_per_run(workspace):
    ws = workspace
    task_store.create_run(ws.db, "run1", "random-walk", 4, 0, "llm", 2, None)
    task_store.create_run(ws.db, "run2", "random-walk", 1, 0, "offline", 2, None)
    for tid, n, verdict in [("a", 0, "accepted"), ("b", 2, "accepted"), ("c", 2, "rejected"), ("d", 1, "pending")]:
        _task(ws, tid, verdict=verdict, run_id="run1")
        repairs.save_attempts(ws.db, tid, [_attempt(i + 1) for i in range(n)])
    _task(ws, "o", provider="offline", verdict="accepted", run_id="run2")  # no attempts ever saved
    every = repairs.repair_counts(ws.db)
    assert every.to_dict("records") == [
        {"provider": "llm", "repairs": 0, "verdict": "accepted", "tasks": 1},
        {"provider": "llm", "repairs": 2, "verdict": "accepted", "tasks": 1},
        {"provider": "llm", "repairs": 2, "verdict": "rejected", "tasks": 1},
        {"provider": "offline", "repairs": 0, "verdict": "accepted", "tasks": 1}]
    assert repairs.repair_counts(ws.db, "run2")["provider"].tolist() == ["offline"]
    assert repairs.repair_counts(ws.db, "run1")["tasks"].sum() == 3  # the pending task is not verified
