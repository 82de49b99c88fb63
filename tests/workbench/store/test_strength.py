"""The verifier strength store: a report per task and bundle; a task whose bundle changed reads
as not measured until it is measured again; the export row carries the figure."""
from __future__ import annotations

from tests.pages.synth_fixture import make_synth_fixture
from tests.pages.test_strength_pages import REPORT
from workbench.store import strength as strength_store
from workbench.store import tasks as store
from workbench.store.export_rows import task_rows


def test_a_report_is_read_back_for_the_current_bundle_only(graph_workspace):
    ws = graph_workspace
    make_synth_fixture(ws)
    task = store.tasks_frame(ws.db).iloc[0]
    assert strength_store.strength_for(ws.db, task["task_id"]) is None
    strength_store.save_strength(ws.db, task["task_id"], task["bundle_hash"], REPORT)
    assert strength_store.strength_for(ws.db, task["task_id"])["commands"][1]["command"].endswith("stamp.txt")
    frame = strength_store.strength_frame(ws.db)
    assert frame[["task_id", "strength", "effective", "caught"]].values.tolist() == [[task["task_id"], 0.5, 2, 1]]
    assert (task["task_id"], task["bundle_hash"]) in strength_store.measured(ws.db)
    row = next(r for r in task_rows(ws.db, ws.root) if r.task_id == task["task_id"])
    assert row.verifier_strength == 0.5
    with ws.db.write() as con:      # the task's bundle changed: its old measure no longer speaks for it
        con.execute("UPDATE tasks SET bundle_hash = 'other' WHERE task_id = ?", [task["task_id"]])
    assert strength_store.strength_for(ws.db, task["task_id"]) is None
    assert strength_store.strength_frame(ws.db).empty
