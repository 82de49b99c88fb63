"""Warm a fresh dashboard process: import, in a background thread, what the pages import.

A page's first visit in a new server process otherwise pays for its imports in the script
run: measured on 2 busy cores, `pipeline.graph.edits` (UMAP, HDBSCAN, numba) 1.6 s,
`pyvis` 0.8 s, `analysis.tasks_view` 0.5 s — the Scenarios page's first render took 10 s
on a 20k-skill workspace. The list is read from the pages' own import statements, so it
follows the pages as they change.
"""
from __future__ import annotations

import ast
import importlib
import logging
import threading
from pathlib import Path

PAGES_DIR = Path(__file__).resolve().parent
# Imported inside functions by what the pages use, so not in their import statements.
# pipeline.graph.sampling: numba and the cached sampling kernels (1-2 s), which the Graph page's
# health card imports to sample fresh paths.
LAZY = ("pyvis.network", "jinja2", "pipeline.graph.sampling")

_log = logging.getLogger(__name__)
_lock = threading.Lock()
_thread: threading.Thread | None = None


def page_imports(pages_dir: Path = PAGES_DIR) -> list[str]:
    """Every module the page files import at their top level, in first-seen order; for
    `from package import name`, also `package.name` (which may be a module or not)."""
    out: dict[str, None] = {}
    for path in sorted(pages_dir.glob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for node in tree.body:
            if isinstance(node, ast.Import):
                out.update((a.name, None) for a in node.names)
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0 \
                    and node.module != "__future__":
                out[node.module] = None
                out.update((f"{node.module}.{a.name}", None) for a in node.names)
    return list(out) + list(LAZY)


def _run(modules: list[str]) -> None:
    for name in modules:
        try:
            importlib.import_module(name)
        except ModuleNotFoundError as exc:
            if exc.name != name:  # not merely a name imported from a module
                _log.debug("preload of %s failed: %s", name, exc)
        except Exception as exc:  # the page that needs it shows the error when it runs
            _log.debug("preload of %s failed: %s", name, exc)


def start() -> threading.Thread:
    """Start the preload once per process (later calls return the same thread)."""
    global _thread
    with _lock:
        if _thread is None:
            _thread = threading.Thread(target=_run, args=(page_imports(),), name="page-preload", daemon=True)
            _thread.start()
        return _thread
