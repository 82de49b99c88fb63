"""The dashboard's background preload imports what the pages import."""
from __future__ import annotations

import json
import subprocess
import sys

from pages import preload
from workbench.config import REPO_ROOT


def test_page_imports_follow_the_pages_import_statements(tmp_path):
    (tmp_path / "a.py").write_text("from __future__ import annotations\nimport json\n"
                                   "from analysis import figures, display\nfrom pages.shared import workspace\n"
                                   "def f():\n    import csv\n")
    mods = preload.page_imports(tmp_path)
    assert mods[:5] == ["json", "analysis", "analysis.figures", "analysis.display", "pages.shared"]
    assert "csv" not in mods and "__future__" not in mods  # only top-level imports
    assert set(preload.LAZY) <= set(mods)


def test_start_imports_every_page_dependency_once_in_a_fresh_process():
    code = ("import json, sys; from pages import preload; t = preload.start(); "
            "assert preload.start() is t; t.join(); "
            "print(json.dumps(sorted(m for m in preload.page_imports() if m not in sys.modules)))")
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO_ROOT, capture_output=True, text=True, check=True)
    missing = set(json.loads(out.stdout.strip().splitlines()[-1]))
    # what is left out is only names imported from a module (functions, classes), never a module
    for name in missing:
        module, _, attr = name.rpartition(".")
        assert module and module not in missing, name
    for heavy in ("pipeline.graph.edits", "analysis.cluster_graph", "pyvis.network"):
        assert heavy not in missing


def test_the_preload_loads_numba_for_the_graph_health_card():
    """The health card imports the sampler inside a function: numba and its kernels were left
    to the Graph page's first render (1-2 s of its 8-13 s on the dev corpus)."""
    code = ("import sys; from pages import preload; preload.start().join(); "
            "print('numba' in sys.modules, 'pipeline.graph.sampling' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO_ROOT, capture_output=True, text=True, check=True)
    assert out.stdout.split()[-2:] == ["True", "True"], out.stdout + out.stderr


def test_the_app_starts_the_preload(demo_workspace, monkeypatch):
    from streamlit.testing.v1 import AppTest
    monkeypatch.setenv("WORKBENCH_HOME", str(demo_workspace.root))
    monkeypatch.setattr(preload, "_thread", None)
    at = AppTest.from_file(str(REPO_ROOT / "workbench" / "app.py"), default_timeout=60).run()
    assert not at.exception
    assert preload._thread is not None
    preload._thread.join()
