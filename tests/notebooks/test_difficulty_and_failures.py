"""notebooks/difficulty_and_failures.ipynb run top to bottom (as tests/test_notebooks.py runs every
notebook) on the rollouts fixture of tests/pages, one of whose terminus-2 models is made the scripted
replay's: a test double's rates are never set beside FACET's figures (issue 22.4), they are shown
apart."""
from __future__ import annotations

from analysis import paper_references as refs
from tests.notebooks.executed import cell_texts
from tests.pages.rollouts_fixture import MODELS, make_rollouts_fixture
from workbench.config import REPO_ROOT

NOTEBOOK = REPO_ROOT / "notebooks" / "difficulty_and_failures.ipynb"
SCRIPTED = "scripted-terminus:oracle (test double)"


def test_a_test_doubles_rates_are_shown_apart_from_facets(graph_workspace, tmp_path, monkeypatch):
    ws = graph_workspace
    make_rollouts_fixture(ws)
    with ws.db.write() as con:
        con.execute("UPDATE rollouts SET model = ? WHERE model = ?", [SCRIPTED, MODELS[1]])
    cells = cell_texts(NOTEBOOK, ws, tmp_path, monkeypatch)
    comparison = cells[-1]
    assert refs.FACET_CHECK_RATE.label in comparison and MODELS[0] in comparison
    assert "scripted" not in comparison and "test double" not in comparison
    beside = next(c for c in cells if "check_rate" in c)          # the table beside FACET's lines
    assert "scripted" not in beside
    apart = next(c for c in cells[cells.index(beside) + 1:] if "check_rate" in c)
    assert "test double" in apart and MODELS[0] not in apart
