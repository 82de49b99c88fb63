"""The Tasks page shows a withdrawn task as such, with who withdrew it and why, and its undo
button restores it to the accepted set (AppTest on rows of the real store)."""
from __future__ import annotations

import pytest

from tests.pages.apptest_helpers import button, metric, open_page
from tests.pages.synth_fixture import make_synth_fixture
from workbench.store import task_events
from workbench.store import trajectory_judgements as judgements
from workbench.store import tasks as store

REASON = "test_count checks /app/count.txt, a file the instruction never names"


@pytest.fixture
def withdrawn(graph_workspace, monkeypatch):
    ws = graph_workspace
    [accepted] = [t for t in make_synth_fixture(ws) if t.verdict == "accepted"]
    judgements.save_judgement(ws.db, accepted.task_id, verdict="design_flaw", reason=REASON,
                              evidence={"consistent": ["test_outputs.py::test_count"]}, n_rollouts=3,
                              model="judge-model", cost_usd=0.001, withdraw=True)
    at = open_page(ws, monkeypatch, "tasks.py")
    return ws, at, accepted


def test_a_withdrawn_task_reads_withdrawn_with_its_reason_and_undo_restores_it(withdrawn):
    ws, at, task = withdrawn
    assert metric(at, "Tasks accepted") == "0"      # the funnel reads the accepted set
    table = next(d.value for d in at.dataframe if "verdict" in d.value.columns)
    assert table.set_index("name").loc[task.name, "verdict"] == "withdrawn"
    at.selectbox(key="detail_task").set_value(task.task_id).run()
    assert not at.exception, at.exception
    [warning] = [w.value for w in at.warning]
    assert warning.startswith("Withdrawn from the accepted set by the trajectory judge on ")
    assert f"design flaw: {REASON}" in warning
    assert any(c.value.startswith("Trajectory judge (judge-model): a design flaw after 3 failed LLM rollouts — "
                                  f"{REASON}. Tests failed in every rollout: test_outputs.py::test_count.")
               for c in at.caption)
    events = next(d.value for d in at.dataframe if "event" in d.value.columns)
    assert events["event"].tolist() == ["withdrawn"] and events["reason"].tolist() == [f"design flaw: {REASON}"]

    button(at, f"restore_{task.task_id}").click().run()
    assert not at.exception, at.exception
    assert task_events.withdrawal(ws.db, task.task_id) is None
    assert list(store.accepted_tasks(ws.db)["task_id"]) == [task.task_id]
    assert list(task_events.history(ws.db, task.task_id)["event"]) == ["withdrawn", "restored"]
    assert metric(at, "Tasks accepted") == "1"
    assert any(s.value == "Accepted: every check passed." for s in at.success)
