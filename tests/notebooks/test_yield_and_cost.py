"""notebooks/yield_and_cost.ipynb run top to bottom (as tests/test_notebooks.py runs every notebook)
on the synthesis fixtures of tests/pages (an offline run, and an LLM run whose tasks a real model
made but for one, whose calls the demo's scripted replay answered): no test double's cost or yield is
set beside SkillSynth's figures (issue 22.4); they are shown apart, labelled."""
from __future__ import annotations

from analysis import paper_references as refs
from tests.notebooks.executed import cell_texts
from tests.pages.repairs_fixture import LLM_RUN_ID, add_llm_run
from tests.pages.synth_fixture import make_synth_fixture
from workbench.config import REPO_ROOT

NOTEBOOK = REPO_ROOT / "notebooks" / "yield_and_cost.ipynb"
DOUBLE = "scripted-replay (demo price)"


def test_a_test_doubles_cost_and_yield_are_never_beside_a_papers_figure(graph_workspace, tmp_path, monkeypatch):
    ws = graph_workspace
    llm = add_llm_run(ws, make_synth_fixture(ws))
    with ws.db.write() as con:      # a second LLM batch: the scripted replay made the first-time task
        con.execute("UPDATE llm_calls SET model = ?, batch_id = 'demo-llm' WHERE item = ?",
                    [DOUBLE, llm.first_time.task_id])
    cells = cell_texts(NOTEBOOK, ws, tmp_path, monkeypatch)
    comparison = next(c for c in cells if refs.SKILLSYNTH_COST_PER_TASK.label in c)
    assert f"batch {LLM_RUN_ID} (gpt-4o-mini)" in comparison
    assert "demo-llm" not in comparison and "scripted" not in comparison and "test double" not in comparison
    apart = cells[-1]
    assert "demo-llm" in apart and "a test double's cost" in apart and "27.3" not in apart
    assert "1 task(s) made by a test double" in "\n".join(cells)
    assert "llm · gpt-4o-mini" in cells[0]          # a run says which model answered it
