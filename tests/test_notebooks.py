"""Every notebook in notebooks/ runs top to bottom on the built demo workspace (synthesis,
rollouts, evolution: the session's ``built_demo_workspace``, a fresh copy for each
notebook, ``WORKBENCH_HOME`` pointed at it), each within ``NOTEBOOK_LIMIT_S``, with no
error and nothing on stderr, showing at least one figure. A notebook a new helper adds
is picked up by the glob; it must read its workspace from ``WORKBENCH_HOME``.

Notebooks use analysis/ functions and have no logic of their own (issue 15): no function
or class definitions and no SQL in their code cells, checked without running them."""
from __future__ import annotations

import ast
import re
import shutil
import time
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

from tests.workbench.test_demo_build import BUILD_TIMEOUT_S

NOTEBOOKS = sorted((Path(__file__).resolve().parent.parent / "notebooks").glob("*.ipynb"))
NOTEBOOK_LIMIT_S = 120        # the issue: each notebook in under 2 minutes on the demo workspace
FIGURE = "application/vnd.plotly.v1+json"
SQL = re.compile(r"\b(SELECT|INSERT|UPDATE|DELETE)\b.*\b(FROM|INTO|SET)\b", re.IGNORECASE | re.DOTALL)


def _code(nb) -> list[str]:
    return [c.source for c in nb.cells if c.cell_type == "code"]


def _outputs(nb) -> list[dict]:
    return [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])]


def problems(nb) -> list[str]:
    """What an executed notebook showed that it should not have: errors and stderr text."""
    found = []
    for o in _outputs(nb):
        if o.get("output_type") == "error":
            found.append(f"error {o.get('ename')}: {o.get('evalue')}")
        elif o.get("output_type") == "stream" and o.get("name") == "stderr" and o.get("text", "").strip():
            found.append(f"stderr: {o['text'].strip()[:500]}")
    return found


def figures(nb) -> int:
    return sum(FIGURE in o.get("data", {}) for o in _outputs(nb))


def own_logic(nb) -> list[str]:
    """Function or class definitions and SQL in code cells (a notebook calls analysis/)."""
    found = []
    for i, src in enumerate(_code(nb)):
        tree = ast.parse("\n".join(line for line in src.splitlines() if not line.lstrip().startswith(("%", "!"))))
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
                found.append(f"code cell {i}: defines {getattr(node, 'name', 'a lambda')}")
        if SQL.search(src):
            found.append(f"code cell {i}: SQL")
    return found


@pytest.mark.docker
@pytest.mark.timeout(BUILD_TIMEOUT_S + 3 * NOTEBOOK_LIMIT_S)
@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_notebook_runs_on_the_demo_workspace(path, built_demo_workspace, tmp_path, monkeypatch):
    ws = tmp_path / "ws"
    shutil.copytree(built_demo_workspace, ws)
    monkeypatch.setenv("WORKBENCH_HOME", str(ws))
    nb = nbformat.read(path, as_version=4)
    started = time.monotonic()
    NotebookClient(nb, timeout=NOTEBOOK_LIMIT_S, kernel_name="python3",
                   resources={"metadata": {"path": str(tmp_path)}}).execute()
    took = time.monotonic() - started
    assert took < NOTEBOOK_LIMIT_S, f"{path.name} took {took:.0f} s (limit {NOTEBOOK_LIMIT_S} s)"
    assert problems(nb) == []
    assert figures(nb) >= 1, f"{path.name} showed no plotly figure"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_notebook_has_no_logic_of_its_own(path):
    nb = nbformat.read(path, as_version=4)
    assert own_logic(nb) == []
    assert any("WORKBENCH_HOME" in src for src in _code(nb)), f"{path.name} does not read WORKBENCH_HOME"


def test_the_checks_catch_what_they_look_for():
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell("def f(): pass\nx = con.execute('SELECT a FROM t')")]
    nb.cells[0].outputs = [nbformat.v4.new_output("stream", name="stderr", text="Warning: slow\n"),
                           nbformat.v4.new_output("error", ename="KeyError", evalue="'x'", traceback=[])]
    assert own_logic(nb) == ["code cell 0: defines f", "code cell 0: SQL"]
    assert problems(nb) == ["stderr: Warning: slow", "error KeyError: 'x'"]
    assert figures(nb) == 0
    nb.cells[0].outputs = [nbformat.v4.new_output("display_data", data={FIGURE: {}})]
    assert problems(nb) == [] and figures(nb) == 1


def test_there_are_notebooks():
    names = {p.name for p in NOTEBOOKS}
    assert {"sampler_study.ipynb", "skills_overview.ipynb"} <= names
