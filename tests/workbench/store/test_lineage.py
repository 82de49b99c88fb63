"""Lineage rows and evolve runs in a real DuckDB file: a variant tried is recorded whatever became
of it, joined with its task's verdict when it was made; malformed rows are refused, nothing written."""
import pandas as pd
import pytest

from pipeline.evolve.models import OPERATORS
from workbench.models import TaskRecord
from workbench.store import lineage as store
from workbench.store import tasks as task_store


def _row(task_id="t1__d1", **kw) -> dict:
    base = dict(task_id=task_id, parent_id="t1", root_id="t1", operator="harder", round=1, run_id="ev-1",
                parent_pass_rate=0.75, parent_rollouts=4, provider="offline", change="added step 3",
                status="made", error=None)
    return {**base, **kw}


def _task(db, task_id, n_steps=2, verdict=None):
    task_store.save_task(db, TaskRecord(task_id=task_id, name=f"wb/{task_id}", path_id="p1", category="data",
                                        difficulty="medium", n_steps=n_steps, recipes=["a"] * n_steps,
                                        skill_ids=["s"], scenario_ids=["c"], bundle_dir=f"tasks/{task_id}",
                                        bundle_hash="h"))
    if verdict:
        with db.write() as con:
            con.execute("UPDATE tasks SET verdict = ? WHERE task_id = ?", [verdict, task_id])


def test_the_store_names_the_same_operators_as_the_rule():
    assert store._OPERATORS == OPERATORS


def test_lineage_frame_joins_a_made_variant_with_its_verdict(workspace):
    db = workspace.db
    store.create_run(db, "ev-1", rounds=2, agent="noisy-oracle", model=None, k=4, params={"p": 0.8})
    _task(db, "t1", n_steps=2, verdict="accepted")
    _task(db, "t1__d1", n_steps=3, verdict="accepted")
    store.save_lineage(db, _row())
    store.save_lineage(db, _row("t1__e1", operator="easier", status="no_variant", change="",
                                error="one step left"))
    df = store.lineage_frame(db)
    assert list(df["task_id"]) == ["t1__d1", "t1__e1"]
    made = df.iloc[0]
    assert (made["verdict"], made["n_steps"], made["parent_n_steps"]) == ("accepted", 3, 2)
    assert pd.isna(df.iloc[1]["verdict"]) and df.iloc[1]["error"] == "one step left"
    assert store.variant_ids_of(db, "t1") == ["t1__d1", "t1__e1"]
    runs = store.evolve_runs_frame(db)
    assert (runs.iloc[0]["n_tried"], runs.iloc[0]["n_made"], runs.iloc[0]["n_accepted"]) == (2, 1, 1)
    assert store.lineage_frame(db, "other").empty


def test_the_workspace_status_counts_made_variants_and_the_accepted_ones(workspace):
    from workbench.store.status import workspace_status
    db = workspace.db
    assert workspace_status(db)["evolution"] == {"variants": 0, "accepted": 0}
    store.create_run(db, "ev-1", rounds=1, agent="noisy-oracle", model=None, k=4, params={})
    _task(db, "t1", verdict="accepted")
    _task(db, "t1__d1", n_steps=3, verdict="accepted")
    _task(db, "t1__b1", verdict="rejected")
    store.save_lineage(db, _row())
    store.save_lineage(db, _row("t1__b1", operator="context_switch"))
    store.save_lineage(db, _row("t1__e1", operator="easier", status="no_variant", change="", error="one step left"))
    assert workspace_status(db)["evolution"] == {"variants": 2, "accepted": 1}


@pytest.mark.parametrize("bad, message", [
    ({"status": "maybe"}, "status 'maybe'"),
    ({"operator": "sideways"}, "operator 'sideways'"),
    ({"parent_pass_rate": 1.5}, "outside \\[0, 1\\]"),
    ({"round": 0}, "rounds start at 1"),
    ({"parent_id": ""}, "missing parent_id"),
])
def test_a_malformed_lineage_row_is_refused(workspace, bad, message):
    with pytest.raises(store.LineageRowError, match=message):
        store.save_lineage(workspace.db, _row(**bad))
    assert store.lineage_frame(workspace.db).empty


def test_run_status_progress_and_finish(workspace):
    db = workspace.db
    store.create_run(db, "ev-1", rounds=2, agent="noisy-oracle", model=None, k=4, params={"p": 0.8})
    with pytest.raises(ValueError, match="evolve run status 'finished'"):
        store.set_run_status(db, "ev-1", "finished")
    store.set_run_status(db, "ev-1", "running", pid=42)
    store.set_run_progress(db, "ev-1", {"round": 1, "phase": "verify", "done": 1, "total": 3})
    run = store.get_run(db, "ev-1")
    assert run["params"] == {"p": 0.8, "progress": {"round": 1, "phase": "verify", "done": 1, "total": 3}}
    with pytest.raises(ValueError, match="finishes done, cancelled or failed"):
        store.finish_run(db, "ev-1", "running")
    store.finish_run(db, "ev-1", "done", "2 rounds", rounds_done=2)
    run = store.get_run(db, "ev-1")
    assert (run["status"], run["rounds_done"], run["pid"]) == ("done", 2, 42) and run["finished_at"] is not None
