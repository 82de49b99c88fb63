"""Run a notebook top to bottom on a workspace, as tests/test_notebooks.py runs every notebook, and
give each code cell's outputs as one text (its text/plain and stream text), after checking that no
cell raised or wrote to stderr."""
from __future__ import annotations

from pathlib import Path

import nbformat
from nbclient import NotebookClient


def cell_texts(notebook: Path, ws, tmp_path, monkeypatch, timeout_s: int = 120) -> list[str]:
    monkeypatch.setenv("WORKBENCH_HOME", str(ws.root))
    nb = nbformat.read(notebook, as_version=4)
    NotebookClient(nb, timeout=timeout_s, kernel_name="python3",
                   resources={"metadata": {"path": str(tmp_path)}}).execute()
    texts = []
    for cell in (c for c in nb.cells if c.cell_type == "code"):
        bad = [o for o in cell.outputs if o.get("output_type") == "error" or o.get("name") == "stderr"]
        assert not bad, bad
        texts.append("\n".join(o.get("text", "") + o.get("data", {}).get("text/plain", "") for o in cell.outputs))
    return texts
