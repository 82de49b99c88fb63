"""notebooks/evolution.ipynb run top to bottom (as tests/test_notebooks.py runs every notebook) on
the planted evolve run of tests/pages/evolution_fixture.py, where its numbers are known: the
per-operator table, the productive share per round, the tree and its figures; and on a workspace
with no evolve run, where it says so instead of failing."""
from __future__ import annotations

import time

import nbformat
from nbclient import NotebookClient

from tests.pages.evolution_fixture import make_evolution_fixture
from workbench.config import REPO_ROOT

NOTEBOOK = REPO_ROOT / "notebooks" / "evolution.ipynb"


def _run(ws, tmp_path, monkeypatch) -> tuple[list[dict], float]:
    monkeypatch.setenv("WORKBENCH_HOME", str(ws.root))
    nb = nbformat.read(NOTEBOOK, as_version=4)
    start = time.monotonic()
    NotebookClient(nb, timeout=120, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}).execute()
    outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])]
    assert not [o for o in outputs if o.get("output_type") == "error"]
    return outputs, time.monotonic() - start


def _text(outputs) -> str:
    return "\n".join(o.get("text", "") + o.get("data", {}).get("text/plain", "") for o in outputs)


def test_the_notebook_shows_the_planted_runs_rates(workspace, tmp_path, monkeypatch):
    make_evolution_fixture(workspace)
    outputs, seconds = _run(workspace, tmp_path, monkeypatch)
    assert seconds < 120
    figures = [o["data"]["application/vnd.plotly.v1+json"] for o in outputs
               if "application/vnd.plotly.v1+json" in o.get("data", {})]
    assert len(figures) == 4      # before -> after, rates by round, productive share, one tree
    text = _text(outputs)
    assert "simulated, not a model" in text and "SETA-Evol's expectation" in text
    # the operator table: harder 0.875 -> 0.375 over 2 pairs (worked out in tests/analysis/test_evolution.py)
    assert "0.875" in text and "0.375" in text
    share = next(f for f in figures if any(t.get("type") == "bar" for t in f["data"]))
    assert share["data"][0]["text"] == ["2/5", "4/4", "1/1"]
    tree = figures[-1]
    assert any("d1 · r=0.50" in t.get("text", []) for t in tree["data"] if t.get("mode") == "markers+text")


def test_a_workspace_without_an_evolve_run_says_so(workspace, tmp_path, monkeypatch):
    outputs, _ = _run(workspace, tmp_path, monkeypatch)
    text = _text(outputs)
    assert "has no evolve run yet" in text and "no variants tried yet, so no tree" in text
