"""Coverage page through AppTest: batches of different sizes are compared at an equal budget
by default (a 12-path batch against 200-path ones), and whole on request."""
from __future__ import annotations

import numpy as np
from streamlit.testing.v1 import AppTest

from analysis import coverage_views as cv
from pipeline.graph.sample_run import sample
from tests.pages.apptest_helpers import chart, frame, plotly_array
from workbench.config import REPO_ROOT
from workbench.store import graph as store

PAGE = str(REPO_ROOT / "pages" / "coverage.py")


def _open(ws, monkeypatch) -> AppTest:
    monkeypatch.setenv("WORKBENCH_HOME", str(ws.root))
    at = AppTest.from_file(PAGE, default_timeout=180).run()
    assert not at.exception, at.exception
    return at


def test_batches_of_different_sizes_are_compared_at_an_equal_budget(graph_workspace, monkeypatch):
    ws = graph_workspace  # 200 inverse-frequency and 200 random-walk paths
    small = sample(ws, "inverse-frequency", 12, seed=5).batch_id  # like a synthesis run's batch
    at = _open(ws, monkeypatch)
    left, right = at.selectbox(key="cov_left").value, at.selectbox(key="cov_right").value
    assert left == small and store.sample_batches(ws.db).set_index("batch_id").loc[right, "paths"] == 200
    assert at.toggle(key="cov_equal_budget").value is True
    label = at.selectbox(key="cov_left").format_func
    note = next(i.value for i in at.info if i.value.startswith("Compared at an equal budget"))
    assert "the first 12 paths of each batch" in note and f"{label(right)} (200 paths)" in note
    # metrics and growth over the first 12 paths of every batch
    metrics = frame(at, "batch", "paths", "unique_pairs").set_index("batch")
    assert set(metrics["paths"]) == {12}
    first12 = store.path_steps(ws.db, right)
    first12 = first12[first12["idx"] < 12]
    assert metrics.loc[label(right), "unique_pairs"] == len(first12[["src_anchor", "skill_id"]].drop_duplicates())
    assert {len(plotly_array(tr["y"])) for tr in chart(at, "growth")["data"]} == {12}
    # the side-by-side heatmaps count the same 12 paths
    cells = store.coverage_cells(ws.db, right, max_paths=12)
    assert cells["visits"].sum() == len(first12)
    expected = cv.heatmap_pair(store.coverage_cells(ws.db, left, max_paths=12), cells, top=cv.HEATMAP_ROWS)
    pair = chart(at, "heatmap_pair")["data"]
    for trace, m in zip(pair, expected):
        assert np.nansum(plotly_array(trace["z"]).astype(float)) == m.to_numpy().sum()

    # whole batches on request, and the page says that they do not compare
    at.toggle(key="cov_equal_budget").set_value(False).run()
    assert not at.exception, at.exception
    assert any(i.value.startswith("Each batch with all its paths") for i in at.info)
    metrics = frame(at, "batch", "paths", "unique_pairs").set_index("batch")
    assert metrics.loc[label(left), "paths"] == 12 and metrics.loc[label(right), "paths"] == 200
    whole = cv.heatmap_pair(store.coverage_cells(ws.db, left), store.coverage_cells(ws.db, right),
                            top=cv.HEATMAP_ROWS)[1]
    assert np.nansum(plotly_array(chart(at, "heatmap_pair")["data"][1]["z"]).astype(float)) == whole.to_numpy().sum()
