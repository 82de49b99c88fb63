"""Which tasks a run evolves: named ones must be accepted and not withdrawn (NULL withdrawn: never
judged, so not withdrawn); --accepted takes the accepted originals, not earlier variants."""
import pytest

from pipeline.evolve.run import select_parents
from workbench.models import TaskRecord
from workbench.store import tasks as task_store


def _task(db, task_id, verdict="accepted", withdrawn=False):
    task_store.save_task(db, TaskRecord(task_id=task_id, name=f"wb/{task_id.replace('_', '-')}", path_id="p",
                                        category="data", difficulty="easy", n_steps=2, recipes=["a", "b"],
                                        skill_ids=["s"], scenario_ids=["c"], bundle_dir=f"tasks/{task_id}",
                                        bundle_hash="h"))
    with db.write() as con:
        con.execute("UPDATE tasks SET verdict = ?, withdrawn = ? WHERE task_id = ?", [verdict, withdrawn, task_id])


def test_named_and_accepted_selection(workspace):
    db = workspace.db
    _task(db, "t1")
    _task(db, "t1__d1")
    _task(db, "t2", withdrawn=None)
    _task(db, "t3", withdrawn=True)
    _task(db, "t4", verdict="pending")
    assert select_parents(workspace, None) == ["t1", "t2"]          # originals only
    assert select_parents(workspace, ["t1__d1", "t2", "t2"]) == ["t1__d1", "t2"]
    with pytest.raises(ValueError, match=r"not accepted \(or withdrawn\): t3 \(accepted\), t4 \(pending\)"):
        select_parents(workspace, ["t1", "t3", "t4"])
